/**
 * The client seam controllers act through: in process, each call authorized as the caller's own
 * identity (a controller's ServiceAccount, bound to its bootstrap role); over HTTP with kube-client,
 * the same verbs and the same ApiErrors. And the controllers of a server really act as their own
 * ServiceAccounts: revoking one's binding stops exactly that controller's writes.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { KubeClient } from '@func/kube-client';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { buildAuthorizer } from '../../src/auth/authorizers.js';
import { reconcileBootstrapPolicy } from '../../src/auth/bootstrap/reconcile.js';
import { AdminUser } from '../../src/auth/credentials.js';
import { PolicyCache } from '../../src/auth/policy-cache.js';
import { httpClient } from '../../src/client/http.js';
import { inProcessClient, serviceAccountUser } from '../../src/client/in-process.js';
import { createRegistry, ensureSystemNamespaces } from '../../src/registry/index.js';
import { startServer } from '../../src/server.js';
import { MemoryStorage } from '../../src/storage/memory/memory.js';
import { SqliteStorage } from '../../src/storage/sqlite/sqlite.js';
import { request, tempDir, TestToken } from '../support/helpers.js';
import { type Call, merge } from '../support/workload-helpers.js';
import { until } from '../../testing/src/poll.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const rejection = async (p: Promise<unknown>): Promise<ApiError> => {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
};

const podBody = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'app', image: 'nginx' }] } });

async function startApi() {
  const dir = tempDir();
  const logs: Record<string, unknown>[] = [];
  const server = await startServer({ storage: SqliteStorage.open(join(dir, 'state.db')), authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])), log: (e) => logs.push(e) });
  cleanups.push(async () => (await server.close(), rmSync(dir, { recursive: true, force: true })));
  const call: Call = (method, path, init = {}) => request(server.url, method, path, { ...init, token: TestToken });
  return { url: server.url, call, logs };
}

describe('the in-process client', () => {
  it('acts as its user: what the bootstrap role allows passes, the rest is a 403 worded as kube-apiserver words it', async () => {
    const registry = createRegistry(new MemoryStorage());
    await ensureSystemNamespaces(registry);
    await reconcileBootstrapPolicy(registry);
    const policy = new PolicyCache(registry);
    cleanups.push(() => policy.close());
    await policy.ready;
    const authorizer = buildAuthorizer(['RBAC'], { policy });
    await registry.find('', 'v1', 'namespaces')!.create({}, { metadata: { name: 'shop' } });

    const rs = inProcessClient(registry, () => authorizer, serviceAccountUser('kube-system', 'replicaset-controller'));
    const pods = rs.find('', 'v1', 'pods')!;
    const created = await pods.create({ namespace: 'shop' }, podBody('web-1'));
    expect(created.object.metadata.name).toBe('web-1');
    expect((await pods.list({}, {})).items.map((p) => p.metadata.name)).toEqual(['web-1']);
    // The replicaset-controller role may not touch Deployments, nor read Secrets.
    const denied = await rejection(rs.find('apps', 'v1', 'deployments')!.create({ namespace: 'shop' }, { metadata: { name: 'd' } }));
    expect(denied.code).toBe(403);
    expect(denied.reason).toBe('Forbidden');
    expect(denied.message).toBe('deployments.apps is forbidden: User "system:serviceaccount:kube-system:replicaset-controller" cannot create resource "deployments" in API group "apps" in the namespace "shop"');
    const secret = await rejection(rs.find('', 'v1', 'secrets')!.get({ namespace: 'shop' }, 'x'));
    expect(secret.message).toContain('cannot get resource "secrets"');
    // Status writes are their own subresource: the role allows replicasets/status, not pods/status.
    expect((await rejection(pods.update({ namespace: 'shop' }, 'web-1', created.object, 'status'))).message).toContain('cannot update resource "pods/status"');
    // A user nobody bound may do nothing; a resource not served is not found.
    const nobody = inProcessClient(registry, () => authorizer, serviceAccountUser('kube-system', 'nobody'));
    expect((await rejection(nobody.find('', 'v1', 'pods')!.list({}, {}))).code).toBe(403);
    expect(rs.find('example.com', 'v1', 'widgets')).toBeUndefined();
    // The same resource answers the same client object (shared caches key on it).
    expect(rs.find('', 'v1', 'pods')).toBe(pods);
  });
});

describe('the HTTP client (kube-client behind the same interface)', () => {
  it('does every verb a controller uses, with ApiErrors for refusals and a watch that delivers changes', async () => {
    const { url } = await startApi();
    const kube = new KubeClient({ server: url, insecureSkipTlsVerify: false, credentials: { token: TestToken }, namespace: 'default', context: 't', files: [] });
    cleanups.push(() => kube.close());
    const api = await httpClient(kube);
    const namespaces = api.find('', 'v1', 'namespaces')!;
    expect(namespaces.definition).toMatchObject({ kind: 'Namespace', namespaced: false });
    expect(api.definitions().some((d) => d.group === 'apps' && d.plural === 'deployments' && d.verbs.includes('watch'))).toBe(true);
    expect(api.find('nope.example.com', 'v1', 'things')).toBeUndefined();
    await namespaces.create({}, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'h' } });
    const configmaps = api.find('', 'v1', 'configmaps')!;

    const events: string[] = [];
    const list = await configmaps.list({ namespace: 'h' }, {});
    const watch = await configmaps.watch({}, { resourceVersion: list.metadata.resourceVersion }, { onEvent: (e) => events.push(`${e.type} ${e.object.metadata.name}`), onError: () => undefined });
    cleanups.push(() => watch.close());

    const made = await configmaps.create({ namespace: 'h' }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: '1' } });
    expect(made.object.metadata.namespace).toBe('h');
    const updated = await configmaps.update({ namespace: 'h' }, 'a', { ...made.object, data: { k: '2' } });
    expect(updated.object.data).toEqual({ k: '2' });
    const stale = await rejection(configmaps.update({ namespace: 'h' }, 'a', { ...made.object, data: { k: '3' } }));
    expect([stale.code, stale.reason]).toEqual([409, 'Conflict']);
    const patched = await configmaps.patch({ namespace: 'h' }, 'a', 'merge', { data: { k: '4' } });
    expect(patched.object.data).toEqual({ k: '4' });
    expect((await configmaps.get({ namespace: 'h' }, 'a')).data).toEqual({ k: '4' });
    const gone = await configmaps.delete({ namespace: 'h' }, 'a', {});
    expect(gone.deleted).toBe(true);
    expect((await rejection(configmaps.get({ namespace: 'h' }, 'a'))).code).toBe(404);
    // Malformed input: no name, a bad patch.
    const unnamed = await rejection(configmaps.create({ namespace: 'h' }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }));
    expect(unnamed.code).toBe(422);
    expect((await rejection(configmaps.patch({ namespace: 'h' }, 'missing', 'merge', { data: { k: '1' } }))).code).toBe(404);
    await until('the watch events', () => events.length >= 4, { timeoutMs: 15_000 });
    expect(events).toEqual(['ADDED a', 'MODIFIED a', 'MODIFIED a', 'DELETED a']);

    // Someone without credentials gets 401 as an ApiError, not a library error.
    const stranger = new KubeClient({ server: url, insecureSkipTlsVerify: false, credentials: { token: 'wrong' }, namespace: 'default', context: 't', files: [] });
    cleanups.push(() => stranger.close());
    const refused = await httpClient(stranger).then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe(401);
  });
});

describe('the controllers of a server', () => {
  it('act as their own ServiceAccounts: without its binding the ReplicaSet controller is refused, bound again it works', async () => {
    const { call, logs } = await startApi();
    await call('POST', '/api/v1/namespaces', { body: { metadata: { name: 'app' } } });
    const role = await call('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:controller:replicaset-controller');
    expect(role.status).toBe(200);
    const binding = await call('GET', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/system:controller:replicaset-controller');
    expect(binding.json.subjects).toEqual([{ kind: 'ServiceAccount', name: 'replicaset-controller', namespace: 'kube-system' }]);
    expect((await call('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/system:controller:replicaset-controller')).status).toBe(200);
    const rs = {
      apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web' },
      spec: { replicas: 1, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } } },
    };
    // The removal reaches the authorizer through its watch: wait until it answers no.
    const review = {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
      spec: { user: 'system:serviceaccount:kube-system:replicaset-controller', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'], resourceAttributes: { verb: 'create', resource: 'pods', namespace: 'app' } },
    };
    await until('the binding to be gone', async () => (await call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { body: review })).json?.status?.allowed === false, { timeoutMs: 15_000 });
    expect((await call('POST', '/apis/apps/v1/namespaces/app/replicasets', { body: rs })).status).toBe(201);
    const refusal = 'User \\"system:serviceaccount:kube-system:replicaset-controller\\" cannot ';
    await until('the refusal in the log', () => logs.some((l) => JSON.stringify(l).includes(refusal)), { timeoutMs: 15_000 });
    expect((await call('GET', '/api/v1/namespaces/app/pods')).json.items).toEqual([]);
    // Bound again, the controller creates the pod (an update of the ReplicaSet brings its key back at once).
    expect((await call('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { body: { ...binding.json, metadata: { name: binding.json.metadata.name } } })).status).toBe(201);
    await until('the binding to be back', async () => (await call('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { body: review })).json?.status?.allowed === true, { timeoutMs: 15_000 });
    await merge(call, '/apis/apps/v1/namespaces/app/replicasets/web', { metadata: { labels: { touched: 'yes' } } });
    await until('the pod', async () => (await call('GET', '/api/v1/namespaces/app/pods')).json.items.length === 1, { timeoutMs: 15_000 });
  });
});
