/**
 * The controller manager away from the API server: `cluster-api controller-manager` (in this
 * process through its library entry, and as the real command) against a server that runs none, with
 * credentials of its own (the kube-system/kube-controller-manager ServiceAccount bound to
 * system:kube-controller-manager; each controller then acts as its own ServiceAccount); and two
 * `serve` processes on one etcd, of which exactly one runs the controllers, the other taking over
 * after `kill -9` of the first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient } from '@func/kube-client';
import { afterAll, describe, expect, it } from 'vitest';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { AdminUser, writeKubeconfig } from '../../src/auth/credentials.js';
import { resolveControllerManagerConfig } from '../../src/config.js';
import { runControllerManager } from '../../src/controllers/standalone.js';
import { startServer } from '../../src/server.js';
import { startApiServer, type ApiServerProcess } from '../../testing/src/etcd-api-servers.js';
import { startEtcd } from '../../testing/src/etcd-cluster.js';
import { SqliteStorage } from '../../src/storage/sqlite/sqlite.js';
import { request, tempDir, TestToken } from '../support/helpers.js';
import { type Call, deployment, freshNamespace, livePods, readyAll } from '../support/workload-helpers.js';
import { until } from '../../testing/src/poll.js';

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const LeasePath = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager';

/** The kube-system/kube-controller-manager ServiceAccount, bound to system:kube-controller-manager, and a token of it. */
async function controllerManagerToken(call: Call): Promise<string> {
  await call('POST', '/api/v1/namespaces/kube-system/serviceaccounts', { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'kube-controller-manager' } } });
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'kube-controller-manager-sa' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:kube-controller-manager' },
    subjects: [{ kind: 'ServiceAccount', name: 'kube-controller-manager', namespace: 'kube-system' }],
  };
  expect((await call('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { body: binding })).status).toBe(201);
  const r = await call('POST', '/api/v1/namespaces/kube-system/serviceaccounts/kube-controller-manager/token', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} } });
  expect(r.status).toBe(201);
  return r.json.status.token as string;
}

/** A Deployment of two rolls out: its ReplicaSet, two pods, and (pods made Ready as a node would) its status. */
async function rollsOut(call: Call, ns: string, name: string): Promise<void> {
  expect((await call('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: deployment(name, 2) })).status).toBe(201);
  const rs = await until('the ReplicaSet', async () => (await call('GET', `/apis/apps/v1/namespaces/${ns}/replicasets`)).json.items.find((r: any) => r.metadata.ownerReferences?.[0]?.name === name), { timeoutMs: 30_000 });
  expect(rs.spec.replicas).toBe(2);
  await until('two pods', async () => (await livePods(call, ns, `app=${name}`)).length === 2, { timeoutMs: 30_000 });
  await readyAll(call, ns, `app=${name}`);
  const d = await until('the Deployment available', async () => {
    const got = (await call('GET', `/apis/apps/v1/namespaces/${ns}/deployments/${name}`)).json;
    return got.status?.availableReplicas === 2 && got.status?.updatedReplicas === 2 && got;
  }, { timeoutMs: 30_000 });
  expect(d.status).toMatchObject({ replicas: 2, readyReplicas: 2, observedGeneration: 1 });
}

describe('the controller manager over HTTP', () => {
  it('rolls a Deployment out for a server that runs no controller manager, each controller as its own ServiceAccount', async () => {
    const dir = tempDir();
    const server = await startServer({
      storage: SqliteStorage.open(join(dir, 'state.db')), authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])), log: () => {}, controllerManager: false,
    });
    cleanups.push(async () => (await server.close(), rmSync(dir, { recursive: true, force: true })));
    const call: Call = (method, path, init = {}) => request(server.url, method, path, { ...init, token: TestToken });
    const ns = await freshNamespace(call, 'cm');
    // Nothing acts on a Deployment yet.
    expect((await call('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, { body: deployment('idle', 1) })).status).toBe(201);

    const kube = new KubeClient({ server: server.url, insecureSkipTlsVerify: false, credentials: { token: await controllerManagerToken(call) }, namespace: 'default', context: 'cm', files: [] });
    const logs: Record<string, unknown>[] = [];
    const manager = await runControllerManager(kube, resolveControllerManagerConfig({ 'leader-elect-lease-duration': 3 }), (e) => logs.push(e));
    cleanups.push(async () => (await manager.stop(), kube.close()));
    await rollsOut(call, ns, 'web');
    // It led through the Lease, and its controllers wrote as their ServiceAccounts (which it made).
    expect((await call('GET', LeasePath)).json.spec.holderIdentity).toMatch(/_[0-9a-f]{16}$/);
    expect((await call('GET', '/api/v1/namespaces/kube-system/serviceaccounts/replicaset-controller')).status).toBe(200);
    expect(logs.filter((l) => l.level === 'warn')).toEqual([]);
    // The Deployment made before it started was picked up too.
    await until('the earlier Deployment\'s pod', async () => (await livePods(call, ns, 'app=idle')).length === 1, { timeoutMs: 15_000 });
  });

  it('runs as the real command, and refuses a kubeconfig it cannot read or a controller it does not know', async () => {
    const api = await startApiServer(`sqlite:${join(tempDir(), 'state.db')}`, ['--disable-controller-manager']);
    cleanups.push(() => api.stop());
    const call: Call = async (method, path, init = {}) => request(api.url, method, path, { ...init, token: api.token });
    const kubeconfig = join(api.dataDir, 'controller-manager.yaml');
    writeKubeconfig(kubeconfig, { server: api.url, token: await controllerManagerToken(call) });
    const child = spawn(process.execPath, [cli, 'controller-manager', '--kubeconfig', kubeconfig, '--leader-elect-lease-duration', '3'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    cleanups.push(async () => { if (child.exitCode === null) child.kill('SIGTERM'); await exited; });
    await until('the command to start', () => stderr.includes('"msg":"controller-manager running"'), { timeoutMs: 30_000 });
    await rollsOut(call, await freshNamespace(call, 'cli'), 'web');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // The Lease is given up on a clean stop.
    expect((await call('GET', LeasePath)).json.spec.holderIdentity ?? null).toBeNull();

    const run = (args: string[]) => new Promise<{ code: number | null; err: string }>((resolve) => {
      const c = spawn(process.execPath, [cli, 'controller-manager', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      c.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      c.once('exit', (code) => resolve({ code, err }));
    });
    const missing = await run(['--kubeconfig', join(api.dataDir, 'nope.yaml')]);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/^cluster-api: kubeconfig .*nope\.yaml: cannot read it/);
    const unknown = await run(['--kubeconfig', kubeconfig, '--controllers', '*,-bogus']);
    expect(unknown).toEqual({ code: 1, err: 'cluster-api: --controllers: "-bogus" is not in the list of known controllers\n' });
    // An API server nobody answers at: one line naming it, no stack.
    const nowhere = join(api.dataDir, 'nowhere.yaml');
    writeKubeconfig(nowhere, { server: 'http://127.0.0.1:1', token: 'x' });
    expect(await run(['--kubeconfig', nowhere])).toEqual({ code: 1, err: 'cluster-api: Cannot reach the Kubernetes API at http://127.0.0.1:1 (ECONNREFUSED); is the cluster running?\n' });
    // Credentials the server refuses: its Status, no stack.
    writeKubeconfig(nowhere, { server: api.url, token: 'not-a-token' });
    expect(await run(['--kubeconfig', nowhere])).toEqual({ code: 1, err: 'cluster-api: Unauthorized\n' });
    const duration = await run(['--kubeconfig', kubeconfig, '--leader-elect-lease-duration', 'soon']);
    expect(duration.err).toContain('--leader-elect-lease-duration must be an integer 2-3600, got soon');
  }, 90_000);
});

describe('two API servers on one etcd', () => {
  it('run the controllers in exactly one, the Lease holder; after kill -9 of it the other takes over', async () => {
    const etcd = await startEtcd({ members: 1 });
    cleanups.push(() => etcd.stop());
    const Duration = 3;
    const servers: ApiServerProcess[] = [];
    for (let i = 0; i < 2; i++) {
      const s = await startApiServer(etcd.url, ['--leader-elect-lease-duration', String(Duration)]);
      cleanups.push(() => s.stop());
      servers.push(s);
    }
    const call = (s: ApiServerProcess): Call => (method, path, init = {}) => request(s.url, method, path, { ...init, token: s.token });
    const identityOf = (s: ApiServerProcess): string | undefined => /"msg":"controller-manager leading","identity":"([^"]+)"/.exec(s.stderr())?.[1];
    const lease = await until('a Lease holder', async () => (await call(servers[1]!)('GET', LeasePath)).json?.spec?.holderIdentity && (await call(servers[1]!)('GET', LeasePath)).json, { timeoutMs: 30_000 });
    const leader = await until('the holder\'s log line', () => servers.find((s) => identityOf(s) === lease.spec.holderIdentity), { timeoutMs: 15_000 });
    const other = servers.find((s) => s !== leader)!;
    expect(identityOf(other)).toBeUndefined();
    expect(lease.spec.leaseDurationSeconds).toBe(Duration);
    await rollsOut(call(other), await freshNamespace(call(other), 'ha'), 'before');
    // Still one leader, the same, after the work.
    expect(identityOf(other)).toBeUndefined();

    const last = (await call(other)('GET', LeasePath)).json.spec;
    await leader.kill();
    expect(leader.child.signalCode).toBe('SIGKILL');
    const taken = await until('the takeover', async () => {
      const spec = (await call(other)('GET', LeasePath)).json.spec;
      return spec.holderIdentity !== lease.spec.holderIdentity && spec;
    }, { timeoutMs: 30_000 });
    expect(taken.holderIdentity).toBe(identityOf(other));
    expect(taken.leaseTransitions).toBe((last.leaseTransitions ?? 0) + 1);
    // Taken once the holder's last renewal was a lease duration old (plus a retry period and the time to write it).
    const waited = (Date.parse(taken.acquireTime) - Date.parse(last.renewTime)) / 1000;
    expect(waited).toBeGreaterThanOrEqual(Duration - 0.5);
    expect(waited).toBeLessThan(Duration * 2 + 2);
    await rollsOut(call(other), await freshNamespace(call(other), 'ha'), 'after');
  }, 90_000);
});
