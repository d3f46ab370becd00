/**
 * The func-style verbs that talk to a cluster, against the real cluster API (`cluster-api serve`,
 * its kubeconfig) and checked with real kubectl: `secret create|list|delete` from literals, files
 * and an env file, in the function's namespace; `list` and `describe` with `--output json|yaml`;
 * `delete` (and its other name `undeploy`). Malformed and failing cases end in one line and exit 1.
 * The README's blocks for these commands run as written.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startCluster, type Cluster } from '../../kube-client/test/cluster.js';
import { runCliToExit } from './helpers/cli.js';
import { CLI, copyFixture, until } from './dev-helpers.js';
import { ownPodCidr } from './helpers/pod-cidr.js';

const exec = promisify(execFile);
/** Many CLI runs in one test: bounded generously, as the machine is shared (never a speed check). */
const MANY = 180_000;
const work = mkdtempSync(join(tmpdir(), 'func-cli-cluster-'));
const removals: (() => void)[] = [];
let cluster: Cluster;

beforeAll(async () => {
  ownPodCidr();
  cluster = await startCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
  for (const r of removals) r();
  rmSync(work, { recursive: true, force: true });
});

const cli = (args: string[], cwd = work) =>
  runCliToExit(args, { HOME: join(work, 'home'), XDG_CACHE_HOME: join(work, 'cache'), DOCKER_CONFIG: join(work, 'no-docker'), KUBECONFIG: cluster.kubeconfig, CI: '' }, { cwd, deadlineMs: 120_000 });

const kubectl = async (...args: string[]) => (await exec('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args])).stdout;

function expectOneLine(res: { code: number | null; stderr: string }, message: RegExp): void {
  expect(res.code, res.stderr).toBe(1);
  expect(res.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(res.stderr).toMatch(message);
}

function project(name: string, extra = ''): string {
  const fx = copyFixture('deployable');
  removals.push(fx.remove);
  const file = join(fx.dir, 'func.yaml');
  writeFileSync(file, `${readFileSync(file, 'utf8').replace('name: deployable', `name: ${name}`)}${extra}`);
  return fx.dir;
}

describe('secret', () => {
  it('create from literals, a file and an env file; list shows keys, never values; delete', async () => {
    writeFileSync(join(work, 'ca.pem'), '-----BEGIN CERTIFICATE-----\nabc\n');
    writeFileSync(join(work, 'app.env'), '# settings\nDB_USER=app\nDB_PASSWORD="p@ss word"\n');
    const created = await cli(['secret', 'create', 'api', '--from-literal', 'API_KEY=s3cr3t=x', '--from-file', join(work, 'ca.pem'), '--from-file', `token=${join(work, 'ca.pem')}`, '--from-env-file', join(work, 'app.env')]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toBe('func-runtime: created Secret default/api with keys API_KEY, DB_PASSWORD, DB_USER, ca.pem, token; use it in func.yaml as {{ secret:api:API_KEY }}\n');
    const secret = JSON.parse(await kubectl('get', 'secret', 'api', '-o', 'json')) as { type: string; data: Record<string, string> };
    expect(secret.type).toBe('Opaque');
    expect(Object.fromEntries(Object.entries(secret.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]))).toEqual({
      API_KEY: 's3cr3t=x', 'ca.pem': '-----BEGIN CERTIFICATE-----\nabc\n', token: '-----BEGIN CERTIFICATE-----\nabc\n', DB_USER: 'app', DB_PASSWORD: 'p@ss word',
    });

    const listed = await cli(['secret', 'list']);
    expect(listed.stdout).toMatch(/^NAME\s+TYPE\s+KEYS\napi\s+Opaque\s+API_KEY,DB_PASSWORD,DB_USER,ca\.pem,token\n/m);
    const json = await cli(['secret', 'list', '-o', 'json']);
    expect(JSON.parse(json.stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'api', type: 'Opaque', keys: ['API_KEY', 'DB_PASSWORD', 'DB_USER', 'ca.pem', 'token'] })]));
    expect(json.stdout + listed.stdout + (await cli(['secret', 'list', '-o', 'yaml'])).stdout).not.toMatch(/s3cr3t|p@ss|czNjcjN0/);

    expectOneLine(await cli(['secret', 'create', 'api', '--from-literal', 'A=1']), /^func-runtime: Secret api already exists in namespace default\. Delete it first/);
    const deleted = await cli(['secret', 'delete', 'api']);
    expect(deleted).toMatchObject({ code: 0, stdout: 'func-runtime: deleted Secret default/api\n' });
    expect(await kubectl('get', 'secrets', '-o', 'name')).not.toContain('secret/api');
    expectOneLine(await cli(['secret', 'delete', 'api']), /^func-runtime: No Secret api in namespace default\.\n$/);
  }, MANY);

  it('goes to the namespace of the function at --path (func.yaml namespace), or --namespace', async () => {
    await kubectl('create', 'namespace', 'shop');
    const dir = project('shopfront', 'namespace: shop\n');
    expect((await cli(['secret', 'create', 'db', '--from-literal', 'URL=postgres://db', '-p', dir])).stdout).toContain('created Secret shop/db');
    expect(await kubectl('get', 'secret', 'db', '-n', 'shop', '-o', 'name')).toBe('secret/db\n');
    expect((await cli(['secret', 'list', '-p', dir])).stdout).toMatch(/^db\s+Opaque\s+URL$/m);
    expect((await cli(['secret', 'list', '-n', 'default'])).stdout).not.toMatch(/^db\s/m);
    expect((await cli(['secret', 'delete', 'db', '--namespace', 'shop'])).code).toBe(0);
  }, MANY);
});

describe('list, describe --output, delete', () => {
  it('a deployed function is listed and described as JSON and YAML, then deleted by either name', async () => {
    const dir = project('listed');
    const deployed = await cli(['deploy', '--deployer', 'raw', '--no-wait'], dir);
    expect(deployed.code, deployed.stderr).toBe(0);

    const list = JSON.parse((await cli(['list', '-o', 'json'])).stdout) as { name: string; kind: string }[];
    expect(list).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'listed', kind: 'Deployment' })]));
    const listYaml = parse((await cli(['list', '--output', 'yaml'])).stdout) as { name: string }[];
    expect(listYaml.map((f) => f.name)).toContain('listed');
    expect((await cli(['list'])).stdout).toMatch(/^NAME\s+KIND\s+URL\s+READY\s+LATEST REVISION\nlisted\s+deployment\s/m);

    const described = JSON.parse((await cli(['describe', '-o', 'json'], dir)).stdout) as { name: string; namespace: string; kind: string; image: string };
    expect(described).toMatchObject({ name: 'listed', namespace: 'default', kind: 'Deployment' });
    // Pushed to the cluster's registry (kube-public/local-registry-hosting), pinned by digest.
    expect(described.image).toMatch(/^127\.0\.0\.1:\d+\/listed@sha256:[0-9a-f]{64}$/);
    expect(parse((await cli(['describe', '--name', 'listed', '-o', 'yaml'])).stdout)).toMatchObject({ name: 'listed', kind: 'Deployment' });

    const gone = await cli(['delete'], dir);
    expect(gone).toMatchObject({ code: 0, stdout: 'func-runtime: deleted service/listed, deployment/listed\n' });
    await until('the Deployment to be gone', async () => ((await kubectl('get', 'deployments', '-o', 'name')).includes('listed') ? undefined : true));
    expectOneLine(await cli(['delete'], dir), /^func-runtime: No function listed is deployed in namespace default/);
    expectOneLine(await cli(['undeploy', '--name', 'listed']), /^func-runtime: No function listed is deployed/);
    expect((await cli(['delete', '--ignore-not-found'], dir)).code).toBe(0);
  }, MANY);

  it.each([
    [['list', '-o', 'xml'], /Invalid values: Argument: output, Given: "xml", Choices: "json", "yaml"/],
    [['describe', '--name', 'x', '--output', 'table'], /Invalid values: Argument: output/],
  ])('%j: a usage error, one line and exit 2', async (args, message) => {
    const res = await cli(args);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(res.stderr.trimEnd().split('\n')).toHaveLength(2);
  });
});

describe('README', () => {
  /** The ```sh blocks of the README section under `heading`. */
  const blocks = (heading: string): string[] => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const start = readme.indexOf(`\n### ${heading}`);
    expect(start, heading).toBeGreaterThan(0);
    const section = readme.slice(start + 1, readme.indexOf('\n### ', start + 1));
    return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  };

  it.each(['`func-runtime subscribe`, `config`, `secret`', 'Shell completion, `--version`, mistakes'])('the blocks of "%s" run as written, in a function\'s directory', async (heading) => {
    const dir = project('readme-fn');
    const found = blocks(heading);
    expect(found.length).toBeGreaterThan(0);
    const env = { ...process.env, HOME: join(work, 'home'), KUBECONFIG: cluster.kubeconfig, CI: '' };
    for (const block of found) {
      // `npx func-runtime` is this checkout's built command; everything else is the block as written.
      const script = `set -euo pipefail\nnpx() { [ "$1" = func-runtime ] && shift && node '${CLI}' "$@"; }\n${block}`;
      const { stdout, stderr } = await exec('bash', ['-c', script], { cwd: dir, env });
      expect(stderr, `${block}\n${stdout}`).toBe('');
    }
    if (heading.startsWith('`func-runtime subscribe`')) {
      const yaml = readFileSync(join(dir, 'func.yaml'), 'utf8');
      expect(yaml).toContain('type: com.example.order');
      expect(yaml).toContain('path: /etc/api');
      expect(await kubectl('get', 'secrets', '-o', 'name')).not.toContain('secret/api');
    }
  }, MANY);
});
