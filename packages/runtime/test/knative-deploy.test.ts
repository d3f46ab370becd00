/**
 * `func-runtime deploy` on the local cluster, which serves Knative Serving: the function becomes a
 * Knative Service, its revision Ready, its URL answered through the gateway (whose address serve
 * publishes in knative-serving/config-gateway); a second deploy makes revision -00002; `rollback`
 * sends the traffic back to -00001, `traffic` splits it 50/50, and a later deploy sends it to the
 * latest again; `list` and `describe`
 * show the revisions and the split; `invoke --name` goes through the gateway; a rollback to a
 * revision that does not exist is refused.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../../kube-client/test/cluster.js';
import { send } from '../src/client/loopback-fetch.js';
import { renderText, storedNames, templateDir } from '../../templates/src/index.js';
import { copyFixture, killAll, spawnCli, until } from './dev-helpers.js';
import { ownPodCidr } from './helpers/pod-cidr.js';

const exec = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'func-knative-'));
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
const ksvc = async () => JSON.parse(await kubectl('get', 'ksvc', 'deployable', '-o', 'json')) as { spec: { traffic?: unknown[] }; status: { latestReadyRevisionName?: string; latestCreatedRevisionName?: string; traffic?: { revisionName: string; percent: number }[] } };

describe('func-runtime deploy onto a cluster that serves Knative Serving', () => {
  let gateway = '';
  let here = '';
  /** Through the printed URL: `*.localhost` is this machine, the gateway routes by its Host. */
  const greet = async (name: string) => {
    const res = await send(new URL(`?name=${name}`, here), { signal: AbortSignal.timeout(10_000) });
    const body = await res.text();
    expect(res.status, body).toBe(200);
    return body;
  };

  it('makes a Knative Service, waits for its revision, prints its URL and how this machine reaches it', async () => {
    const res = await cli(['deploy']);
    expect(res.code, res.output).toBe(0);
    expect(res.output).toMatch(/applied Knative Service default\/deployable/);
    expect(res.output).toMatch(/^\s+URL\s+http:\/\/deployable\.default\.localhost$/m);
    const printed = /^\s+from here\s+(http:\/\/deployable\.default\.localhost:(\d+)\/)\s+\(curl -H 'Host: deployable\.default\.localhost' (http:\/\/127\.0\.0\.1:\d+)\/\)$/m.exec(res.output);
    expect(printed, res.output).toBeTruthy();
    here = printed![1]!;
    gateway = printed![3]!;
    expect(new URL(gateway).port).toBe(printed![2]);
    // The address deploy printed is the one serve published for clients with only the kubeconfig.
    expect(await kubectl('get', 'configmap', 'config-gateway', '-n', 'knative-serving', '-o', 'jsonpath={.data.url}')).toBe(gateway);
    const status = (await ksvc()).status;
    expect(status.latestCreatedRevisionName).toBe('deployable-00001');
    expect(status.latestReadyRevisionName).toBe('deployable-00001');
    expect(await greet('knative')).toBe('Hello, knative! (v1)');
    const listed = await cli(['list']);
    expect(listed.code, listed.output).toBe(0);
    expect(listed.output).toMatch(/^deployable +ksvc +http:\/\/deployable\.default\.localhost +True +deployable-00001$/m);
  }, 120_000);

  it('a second deploy makes revision -00002 and the answer changes; list shows it', async () => {
    expect(gateway, 'the first deploy printed the gateway').toBeTruthy();
    setVersion('v2');
    const res = await cli(['deploy']);
    expect(res.code, res.output).toBe(0);
    expect((await ksvc()).status.latestReadyRevisionName).toBe('deployable-00002');
    expect(await greet('again')).toBe('Hello, again! (v2)');
    const invoked = await cli(['invoke', '--name', 'deployable', '/?name=invoked']);
    expect(invoked.code, invoked.output).toBe(0);
    expect(invoked.output).toMatch(/^HTTP 200 OK$[\s\S]*^Hello, invoked! \(v2\)$/m);
    const listed = JSON.parse((await cli(['list', '-o', 'json'])).output) as { name: string; kind: string; ready: boolean; latestRevision: string }[];
    expect(listed).toEqual([{ name: 'deployable', kind: 'KnativeService', url: 'http://deployable.default.localhost', ready: true, latestRevision: 'deployable-00002' }]);
  }, 120_000);

  it('rollback sends all traffic to the previous revision; describe shows the split; the next deploy returns to the latest', async () => {
    expect(gateway, 'the first deploy printed the gateway').toBeTruthy();
    const res = await cli(['rollback']);
    expect(res.code, res.output).toBe(0);
    expect(res.output).toContain('default/deployable: 100% to deployable-00001 (was deployable-00002)');
    expect((await ksvc()).status.traffic).toEqual([expect.objectContaining({ revisionName: 'deployable-00001', percent: 100 })]);
    expect(await greet('back')).toBe('Hello, back! (v1)');
    const described = await cli(['describe']);
    expect(described.output).toMatch(/^ +deployable-00002 +0% +- +yes /m);
    expect(described.output).toMatch(/^ +deployable-00001 +100% +- +yes /m);
    const json = JSON.parse((await cli(['describe', '-o', 'json'])).output) as { revisions: { name: string; percent: number }[] };
    expect(json.revisions.map((r) => [r.name, r.percent])).toEqual([['deployable-00002', 0], ['deployable-00001', 100]]);

    const forward = await cli(['rollback', '--to', 'deployable-00002']);
    expect(forward.code, forward.output).toBe(0);
    expect(await greet('forward')).toBe('Hello, forward! (v2)');
    const split = await cli(['traffic', '--split', 'deployable-00001=50', '--split', '@latest=50']);
    expect(split.code, split.output).toBe(0);
    expect(split.output).toMatch(/50% to deployable-0000[12], 50% to deployable-0000[12]/);
    const answers = new Set<string>();
    for (let i = 0; i < 40; i++) answers.add(await greet('split'));
    expect(answers).toEqual(new Set(['Hello, split! (v1)', 'Hello, split! (v2)']));
    for (const [args, message] of [
      [['--split', 'deployable-00001=50', '--split', '@latest=40'], 'Traffic targets sum to 90, want 100'],
      [['--split', 'deployable-00001:50'], '--split "deployable-00001:50" is not <revision>=<percent>'],
      [['--split', 'deployable-00009=100'], 'Knative Service deployable has no revision deployable-00009'],
    ] as const) {
      const bad = await cli(['traffic', ...args]);
      expect(bad.code, bad.output).toBe(1);
      expect(bad.output).toContain(message);
    }
    await cli(['rollback', '--to', 'deployable-00001']);
    setVersion('v3');
    const redeploy = await cli(['deploy']);
    expect(redeploy.code, redeploy.output).toBe(0);
    const after = await ksvc();
    expect(after.spec.traffic).toEqual([{ latestRevision: true, percent: 100 }]);
    expect(after.status.latestReadyRevisionName).toBe('deployable-00003');
    expect(await greet('latest')).toBe('Hello, latest! (v3)');
  }, 180_000);

  it('refuses a rollback to a revision that does not exist, or with no earlier revision, with one line and exit 1', async () => {
    const missing = await cli(['rollback', '--to', 'deployable-00099']);
    expect(missing.code).toBe(1);
    expect(missing.output).toMatch(/Knative Service deployable has no revision deployable-00099; its revisions: deployable-00003, deployable-00002, deployable-00001\./);
    expect(missing.output).not.toMatch(/\n\s+at /);
    const notDeployed = await cli(['invoke', '--name', 'nothing-here']);
    expect(notDeployed.code).toBe(1);
    expect(notDeployed.output).toContain('No function nothing-here is deployed in namespace default');
    for (const args of [['deploy', '--deployer', 'bogus'], ['list', '-o', 'bogus']]) {
      const bad = await cli(args);
      expect(bad.code, bad.output).toBe(2);
      expect(bad.output).toMatch(/Invalid values: Argument: (deployer|output), Given: "bogus", Choices: /);
    }
    const none = await cli(['rollback', '--name', 'nothing-here']);
    expect(none.code).toBe(1);
    expect(none.output).toMatch(/No Knative Service nothing-here in namespace default/);
    expect((await ksvc()).status.traffic).toEqual([expect.objectContaining({ revisionName: 'deployable-00003', percent: 100 })]);
  }, 60_000);

  it('a revision that cannot start fails the deploy with its pod\'s log; the previous revision keeps serving', async () => {
    expect(gateway, 'the first deploy printed the gateway').toBeTruthy();
    const source = readFileSync(join(dir, 'src/index.ts'), 'utf8');
    writeFileSync(join(dir, 'src/index.ts'), `${source}\nthrow new Error('boom at load');\n`);
    const res = await cli(['deploy', '--timeout', '60']);
    writeFileSync(join(dir, 'src/index.ts'), source);
    expect(res.code).toBe(1);
    expect(res.output).toMatch(/The new version of deployable did not become ready: pod deployable-00004-deployment-\S+: Error — exit code 1\. Its log ends: .*boom at load.* The previous revision deployable-00003 is still serving\./);
    expect(await greet('still')).toBe('Hello, still! (v3)');
  }, 120_000);
});

describe('a raw Deployment beside them (--deployer raw)', () => {
  it('is listed with its ready state and revision; rollback, which moves a Knative Service\'s traffic, refuses it', async () => {
    await kubectl('create', 'namespace', 'raw');
    const res = await cli(['deploy', '--deployer', 'raw', '-n', 'raw']);
    expect(res.code, res.output).toBe(0);
    expect(res.output).toContain('applied Deployment and Service raw/deployable');
    const listed = JSON.parse((await cli(['list', '-n', 'raw', '-o', 'json'])).output) as unknown[];
    expect(listed).toEqual([{ name: 'deployable', kind: 'Deployment', ready: true, latestRevision: '1' }]);
    expect((await cli(['list', '-n', 'raw'])).output).toMatch(/^deployable +deployment +- +True +1$/m);
    // Revision Deployments of the Knative Service in default are its, not functions of their own.
    expect((JSON.parse((await cli(['list', '-n', 'default', '-o', 'json'])).output) as { name: string }[]).map((f) => f.name)).toEqual(['deployable']);
    const rollback = await cli(['rollback', '-n', 'raw']);
    expect(rollback.code).toBe(1);
    expect(rollback.output).toContain('No Knative Service deployable in namespace raw');
  }, 120_000);
});

describe('npm run deploy of the http template', () => {
  it('makes a Knative Service whose URL answers; func-runtime list shows it', async () => {
    // The project `npm create` would write, its node_modules the repository's (@func/runtime, tsc).
    const project = join(work, 'hello');
    cpSync(templateDir('http'), project, { recursive: true });
    for (const file of readdirSync(project, { recursive: true, encoding: 'utf8' }).filter((f) => /\.(json|ya?ml|ts|md)$/.test(f))) {
      writeFileSync(join(project, file), renderText(readFileSync(join(project, file), 'utf8'), { name: 'hello', created: '2026-01-01T00:00:00Z' }));
    }
    for (const [stored, name] of Object.entries(storedNames)) cpSync(join(project, stored), join(project, name));
    symlinkSync(fileURLToPath(new URL('../../../node_modules', import.meta.url)), join(project, 'node_modules'));
    const env = { ...process.env, HOME: join(work, 'home'), XDG_CACHE_HOME: join(work, 'cache'), KUBECONFIG: cluster.kubeconfig };
    const run = await exec('npm', ['run', 'deploy'], { cwd: project, env, maxBuffer: 8 * 1024 * 1024 }).catch((err: { stdout: string; stderr: string }) => err);
    const output = `${run.stdout}${run.stderr}`;
    expect(output).toMatch(/applied Knative Service default\/hello/);
    const here = /^\s+from here\s+(http:\/\/hello\.default\.localhost:\d+\/)/m.exec(output)?.[1];
    expect(here, output).toBeTruthy();
    const res = await send(new URL('?name=template', here!), { signal: AbortSignal.timeout(10_000) });
    expect(await res.text()).toBe('Hello, template!\nYou sent GET /.\n');
    const proc = spawnCli(['list', '-o', 'json'], { cwd: project, env });
    expect(await proc.exited).toBe(0);
    const listed = JSON.parse(proc.output()) as { name: string; kind: string; ready: boolean; latestRevision: string }[];
    expect(listed.find((f) => f.name === 'hello')).toEqual({ name: 'hello', kind: 'KnativeService', url: 'http://hello.default.localhost', ready: true, latestRevision: 'hello-00001' });
  }, 180_000);
});

describe('func.yaml scale on the Knative path', () => {
  it('scale {min: 0, max: 5} and limits.concurrency deploy as exactly that: min-scale 0 (no raise), max-scale 5, containerConcurrency; min above max is refused', async () => {
    await kubectl('create', 'namespace', 'scaled');
    const yaml = join(dir, 'func.yaml');
    const before = readFileSync(yaml, 'utf8');
    writeFileSync(yaml, before.replace(/^deploy:\n/m, 'deploy:\n  options:\n    scale:\n      min: 0\n      max: 5\n      metric: concurrency\n      target: 4\n      utilization: 50\n    resources:\n      limits:\n        concurrency: 2\n'));
    try {
      const res = await cli(['deploy', '-n', 'scaled']);
      expect(res.code, res.output).toBe(0);
      const svc = JSON.parse(await kubectl('get', 'ksvc', 'deployable', '-n', 'scaled', '-o', 'json'));
      expect(svc.spec.template.metadata.annotations).toMatchObject({
        'autoscaling.knative.dev/min-scale': '0', 'autoscaling.knative.dev/max-scale': '5', 'autoscaling.knative.dev/metric': 'concurrency',
        'autoscaling.knative.dev/target': '4', 'autoscaling.knative.dev/target-utilization-percentage': '50',
      });
      expect(svc.spec.template.spec.containerConcurrency).toBe(2);
      // The revision runs with them: its pod gets the limit, and the autoscaler owns its replicas (initial scale 1).
      const deployment = JSON.parse(await kubectl('get', 'deployment', 'deployable-00001-deployment', '-n', 'scaled', '-o', 'json'));
      expect(deployment.spec.template.spec.containers[0].env).toEqual(expect.arrayContaining([{ name: 'CONTAINER_CONCURRENCY', value: '2' }]));
      expect(deployment.spec.template.metadata.annotations['autoscaling.knative.dev/min-scale']).toBe('0');

      writeFileSync(yaml, readFileSync(yaml, 'utf8').replace('min: 0', 'min: 7'));
      const refused = await cli(['deploy', '-n', 'scaled', '--dry-run', '-o', 'yaml']);
      expect(refused.code).toBe(1);
      expect(refused.output).toContain('func.yaml deploy.options.scale: min (7) is above max (5); set min ≤ max.');
    } finally {
      writeFileSync(yaml, before);
    }
  }, 180_000);
});
