/**
 * Deploys that run: `cluster-api serve` with its embedded node agent, scheduler and workload
 * controllers, a function deployed and waited for until it serves, a version that cannot start
 * (the deploy fails fast with its log, the previous version keeps serving), and a redeploy after an
 * edit that rolls out the new digest while requests keep flowing through the printed URL, none of
 * them failing.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../../kube-client/test/cluster.js';
import { copyFixture, killAll, spawnCli, until } from './dev-helpers.js';
import { ownPodCidr } from './helpers/pod-cidr.js';

const exec = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'func-rollout-'));
let cluster: Cluster;
let dir: string;
let remove: () => void;

async function kubectl(...args: string[]): Promise<string> {
  return (await exec('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args])).stdout;
}

beforeAll(async () => {
  ownPodCidr();
  cluster = await startCluster({ node: true });
  await until('the embedded node', async () => ((await kubectl('get', 'nodes', '-o', 'name')).trim() ? true : undefined), 30_000);
  ({ dir, remove } = copyFixture('deployable'));
}, 60_000);
afterAll(async () => {
  await killAll();
  await cluster?.stop();
  remove?.();
  rmSync(work, { recursive: true, force: true });
});

async function cli(args: string[]): Promise<{ code: number | null; output: string }> {
  const proc = spawnCli(args, { cwd: dir, env: { ...process.env, HOME: join(work, 'home'), XDG_CACHE_HOME: join(work, 'cache'), KUBECONFIG: cluster.kubeconfig } });
  const code = await proc.exited;
  return { code, output: proc.output() };
}

const setVersion = (v: string) => writeFileSync(join(dir, 'src/greeting.ts'), readFileSync(join(dir, 'src/greeting.ts'), 'utf8').replace(/VERSION = '[^']*'/, `VERSION = '${v}'`));
const podsJson = async () => JSON.parse(await kubectl('get', 'pods', '-l', 'function.knative.dev/name=deployable', '-o', 'json')) as { items: { metadata: { name: string; deletionTimestamp?: string }; spec: { containers: { image: string }[] }; status: { podIP?: string; phase?: string } }[] };


describe('func-runtime deploy onto the embedded node', () => {
  let url = '';
  let printedUrl: string | undefined;

  it('waits until the new version serves, with progress, then says where it answers', async () => {
    const res = await cli(['deploy', '--deployer', 'raw']);
    expect(res.code, res.output).toBe(0);
    // The image went to the registry the cluster advertises (kube-public/local-registry-hosting).
    const image = cluster.registry.replace(/\./g, '\\.') + '/deployable@sha256:';
    expect(res.output).toMatch(new RegExp(`rolling out ${image}[0-9a-f]{12}…: 1/1 ready — deployable-[a-z0-9]+-[a-z0-9]+ Running \\(ready\\)`));
    expect(res.output).toMatch(new RegExp(`deployed deployable to namespace default in [\\d.]+ s \\(${image}[0-9a-f]{64}\\)`));
    expect(res.output).toMatch(/port-forward +kubectl port-forward -n default svc\/deployable 8080:80/);
    printedUrl = /^\s+URL\s+(\S+)$/m.exec(res.output)?.[1];
    expect(printedUrl, `deploy printed no URL:\n${res.output}`).toBeTruthy();
    url = printedUrl!;
    expect(await (await fetch(`${url}?name=node`)).text()).toBe('Hello, node! (v1)');
    const logs = await cli(['logs']);
    expect(logs.output).toMatch(/^deployable-\S+ +[\d:.]+ func-runtime: serving index\.mjs at http:/m);
    const described = JSON.parse((await cli(['describe', '-o', 'json'])).output) as { replicas: { ready: number }; pods: { status: string }[] };
    expect(described.replicas.ready).toBe(1);
    expect(described.pods.map((p) => p.status)).toEqual(['Running']);
  });

  it('a version that cannot start fails the deploy at once, with its log; the previous version keeps serving', async () => {
    expect(url, 'the first deploy answered').toBeTruthy();
    const before = (await podsJson()).items.map((p) => p.metadata.name);
    const source = readFileSync(join(dir, 'src/index.ts'), 'utf8');
    writeFileSync(join(dir, 'src/index.ts'), `${source}\nthrow new Error('boom at load');\n`);
    const res = await cli(['deploy', '--deployer', 'raw']);
    writeFileSync(join(dir, 'src/index.ts'), source);
    expect(res.code).toBe(1);
    expect(res.output).toMatch(/The new version of deployable did not become ready: pod deployable-\S+: Error — exit code 1\. Its log ends: .*boom at load.* The previous version is still serving/);
    const deployment = JSON.parse(await kubectl('get', 'deployment', 'deployable', '-o', 'json')) as { spec: { template: { spec: { containers: { image: string }[] } } } };
    expect(readFileSync(join(dir, 'func.yaml'), 'utf8')).toContain(deployment.spec.template.spec.containers[0]!.image.split('@')[1]!);
    await until('the failed version\'s pods to go', async () => ((await podsJson()).items.every((p) => before.includes(p.metadata.name)) ? true : undefined), 30_000);
    expect(await (await fetch(`${url}?name=again`)).text()).toBe('Hello, again! (v1)');
  });

  it('a redeploy after an edit rolls out the new digest with no failed request in between', async () => {
    expect(printedUrl, 'the first deploy printed its URL').toBeTruthy();
    const results: { status: number | string; body: string }[] = [];
    let stop = false;
    const client = async () => {
      while (!stop) {
        const r = await fetch(`${printedUrl}?name=load`).then(async (res) => ({ status: res.status, body: await res.text() }), (err: Error) => ({ status: (err.cause as { code?: string })?.code ?? err.message, body: '' }));
        results.push(r);
      }
    };
    const clients = [client(), client(), client(), client()];
    setVersion('v2');
    const res = await cli(['deploy', '--deployer', 'raw']);
    expect(res.code, res.output).toBe(0);
    // The old replica drains (readiness 503, then its in-flight requests) while the new one serves.
    await until('only the new version to answer', () => (results.length > 30 && results.slice(-30).every((r) => r.body === 'Hello, load! (v2)') ? true : undefined), 30_000);
    stop = true;
    await Promise.all(clients);
    const failed = results.filter((r) => r.status !== 200);
    expect(failed, `${failed.length} of ${results.length} failed`).toEqual([]);
    expect(new Set(results.map((r) => r.body))).toEqual(new Set(['Hello, load! (v1)', 'Hello, load! (v2)']));
  }, 120_000);
});
