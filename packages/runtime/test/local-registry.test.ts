/**
 * `func-runtime deploy` finds the cluster's registry the standard way (KEP-1755's
 * kube-public/local-registry-hosting, read with the user's kubeconfig) and pushes there with the
 * kubeconfig's token: a cluster started with --token-auth-file (no admin.token beside its
 * kubeconfig) and the same cluster reached through a kubeconfig of another user in another
 * directory both take a deploy that rolls out; without the ConfigMap (or with one naming no host)
 * the deploy stops with one message naming it.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../../kube-client/test/cluster.js';
import { copyFixture, killAll, spawnCli, until } from './dev-helpers.js';
import { ownPodCidr } from './helpers/pod-cidr.js';

const exec = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'func-local-registry-'));
const removals: (() => void)[] = [];
let cluster: Cluster;
let elsewhere: string;

beforeAll(async () => {
  ownPodCidr();
  const tokens = join(work, 'tokens.csv');
  writeFileSync(tokens, 'local-registry-admin-0123456789,admin,1,"system:masters"\nlocal-registry-other-0123456789,other,2,"system:masters"\n');
  cluster = await startCluster({ node: true, args: ['--token-auth-file', tokens] });
  // Another user's kubeconfig, in a directory of its own (nothing of the data directory beside it).
  mkdirSync(join(work, 'other'));
  elsewhere = join(work, 'other', 'config');
  writeFileSync(elsewhere, readFileSync(cluster.kubeconfig, 'utf8').replace(/token: \S+/, 'token: local-registry-other-0123456789'));
}, 60_000);
afterAll(async () => {
  await killAll();
  await cluster?.stop();
  for (const r of removals) r();
  rmSync(work, { recursive: true, force: true });
});

function project(): string {
  const fx = copyFixture('deployable');
  removals.push(fx.remove);
  return fx.dir;
}

async function cli(args: string[], cwd: string, kubeconfig = cluster.kubeconfig): Promise<{ code: number | null; output: string }> {
  const proc = spawnCli(args, { cwd, env: { ...process.env, HOME: join(work, 'home'), XDG_CACHE_HOME: join(work, 'cache'), DOCKER_CONFIG: join(work, 'no-docker'), KUBECONFIG: kubeconfig } });
  const code = await proc.exited;
  return { code, output: proc.output() };
}

const kubectl = async (...args: string[]) => (await exec('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args])).stdout;

describe('deploy to the registry kube-public/local-registry-hosting names', () => {
  it('a cluster started with --token-auth-file (no admin.token) takes a deploy that rolls out', async () => {
    expect(existsSync(join(cluster.dir, 'data', 'admin.token'))).toBe(false);
    expect(cluster.registry).toMatch(/^127\.0\.0\.1:\d+$/);
    const dir = project();
    const res = await cli(['deploy', '--deployer', 'raw'], dir);
    expect(res.code, res.output).toBe(0);
    const image = await kubectl('get', 'deployment', 'deployable', '-o', 'jsonpath={.spec.template.spec.containers[0].image}');
    expect(image).toMatch(new RegExp(`^${cluster.registry.replace(/\./g, '\\.')}/deployable@sha256:[0-9a-f]{64}$`));
    expect(readFileSync(join(dir, 'func.yaml'), 'utf8')).toContain(`image: ${cluster.registry}/deployable:latest`);
    const tags = await (await fetch(`http://${cluster.registry}/v2/deployable/tags/list`)).json();
    expect(tags).toEqual({ name: 'deployable', tags: ['latest'] });
  }, 120_000);

  it('the same cluster through another user\'s kubeconfig elsewhere takes a deploy too', async () => {
    await kubectl('create', 'namespace', 'other');
    const res = await cli(['deploy', '--deployer', 'raw', '-n', 'other'], project(), elsewhere);
    expect(res.code, res.output).toBe(0);
    const ready = await until('ready in other', async () => (await kubectl('get', 'deployment', 'deployable', '-n', 'other', '-o', 'jsonpath={.status.readyReplicas}')) === '1' || undefined, 30_000);
    expect(ready).toBe(true);
  }, 120_000);

  it('without the ConfigMap, or with one naming no host, stops before any change with one message naming it', async () => {
    await kubectl('patch', 'configmap', '-n', 'kube-public', 'local-registry-hosting', '--type', 'merge', '-p', JSON.stringify({ data: { 'localRegistryHosting.v1': 'host: "not a host/at all"\n' } }));
    const bad = await cli(['deploy', '--deployer', 'raw', '-n', 'none'], project());
    expect(bad.code).toBe(1);
    expect(bad.output).toContain('advertises no image registry (no ConfigMap kube-public/local-registry-hosting');
    await kubectl('delete', 'configmap', '-n', 'kube-public', 'local-registry-hosting');
    const none = await cli(['deploy', '--deployer', 'raw', '-n', 'none'], project());
    expect(none.code).toBe(1);
    expect(none.output).toContain('advertises no image registry (no ConfigMap kube-public/local-registry-hosting');
    expect(await kubectl('get', 'deployments', '-n', 'none', '-o', 'name')).toBe('');
  }, 120_000);
});
