/**
 * The RBAC scenario over raw HTTP, on a real SQLite file and a real etcd: bob (group devs, a token-file
 * user, not system:masters) is refused everything but discovery with kube-apiserver's exact 403s;
 * `view` in shop lets him read there and nothing else; `edit` lets him write there, still not read
 * Secrets elsewhere nor grant himself admin.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEtcd, type EtcdCluster } from '../../testing/src/etcd-cluster.js';
import { grant, namespace, openWatch, pod, startServerWithUsers, type TestServer } from '../support/helpers.js';

const bob = { token: 'bob-token' };
const forbidden = (message: string) => ({ kind: 'Status', status: 'Failure', reason: 'Forbidden', code: 403, message });
const rbac = '/apis/rbac.authorization.k8s.io/v1';

describe.each(['sqlite', 'etcd'] as const)('RBAC on %s', (backend) => {
  let s: TestServer;
  let etcd: EtcdCluster | undefined;

  beforeAll(async () => {
    if (backend === 'etcd') etcd = await startEtcd({ members: 1, dataRoot: existsSync('/dev/shm') ? '/dev/shm' : undefined });
    s = await startServerWithUsers(etcd ? etcd.url : 'sqlite:{dir}/state.db');
    for (const ns of ['shop', 'prod']) expect((await s.request('POST', '/api/v1/namespaces', { body: namespace(ns) })).status).toBe(201);
    const secret = (ns: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'password' }, stringData: { password: 'hunter2' } });
    for (const ns of ['shop', 'prod']) expect((await s.request('POST', `/api/v1/namespaces/${ns}/secrets`, { body: secret(ns) })).status).toBe(201);
    expect((await s.request('POST', '/api/v1/namespaces/shop/pods', { body: pod('web') })).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    await etcd?.stop();
  });

  it('refuses bob every action with 403 and kube-apiserver\'s message', async () => {
    const cases: [string, string, string, unknown?][] = [
      ['GET', '/api/v1/namespaces/prod/secrets', 'secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" in the namespace "prod"'],
      ['GET', '/api/v1/secrets', 'secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" at the cluster scope'],
      ['GET', '/api/v1/namespaces/prod/secrets/password', 'secrets "password" is forbidden: User "bob" cannot get resource "secrets" in API group "" in the namespace "prod"'],
      ['POST', '/api/v1/namespaces/kube-system/pods', 'pods is forbidden: User "bob" cannot create resource "pods" in API group "" in the namespace "kube-system"', pod('x')],
      ['DELETE', '/api/v1/namespaces/prod', 'namespaces "prod" is forbidden: User "bob" cannot delete resource "namespaces" in API group "" in the namespace "prod"'],
      ['GET', '/api/v1/nodes', 'nodes is forbidden: User "bob" cannot list resource "nodes" in API group "" at the cluster scope'],
      ['GET', '/logs', 'forbidden: User "bob" cannot get path "/logs"'],
    ];
    for (const [method, path, message, body] of cases) {
      const r = await s.request(method, path, { ...bob, body });
      expect([r.status, r.json], `${method} ${path}`).toEqual([403, expect.objectContaining(forbidden(message))]);
    }
    // Nothing happened: prod is still there, kube-system got nothing.
    expect((await s.request('GET', '/api/v1/namespaces/prod')).json.status.phase).toBe('Active');
  });

  it('refuses bob a watch with 403, not an empty stream', async () => {
    const r = await s.request('GET', '/api/v1/namespaces/shop/pods?watch=true', bob);
    expect([r.status, r.json.message]).toEqual([403, 'pods is forbidden: User "bob" cannot watch resource "pods" in API group "" in the namespace "shop"']);
  });

  it('lets bob discover the API and review himself, and tells him the truth', async () => {
    for (const path of ['/api', '/api/v1', '/apis', '/apis/rbac.authorization.k8s.io/v1', '/version', '/healthz', '/openapi/v2'])
      expect((await s.request('GET', path, bob)).status, path).toBe(200);
    const review = await s.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      ...bob, body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'list', resource: 'secrets', namespace: 'prod' } } },
    });
    expect([review.status, review.json.status]).toEqual([201, { allowed: false }]);
  });

  it('after view in shop is bound to devs, bob reads shop and nothing else', async () => {
    await grant(s, { name: 'devs-view', role: 'view', namespace: 'shop', subjects: [{ kind: 'Group', name: 'devs' }] }, { verb: 'list', resource: 'pods' });
    const pods = await s.request('GET', '/api/v1/namespaces/shop/pods', bob);
    expect([pods.status, pods.json.items.map((p: any) => p.metadata.name)]).toEqual([200, ['web']]);
    expect((await s.request('GET', '/api/v1/namespaces/shop', bob)).status).toBe(200);
    const watch = await openWatch({ url: s.url }, '/api/v1/namespaces/shop/pods?watch=true', 'application/json', 'bob-token');
    expect(watch.res.status).toBe(200);
    expect((await watch.next()).object.metadata.name).toBe('web');
    watch.close();
    const refused: [string, string, string][] = [
      ['GET', '/api/v1/namespaces/shop/secrets', 'secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" in the namespace "shop"'],
      ['DELETE', '/api/v1/namespaces/shop/pods/web', 'pods "web" is forbidden: User "bob" cannot delete resource "pods" in API group "" in the namespace "shop"'],
      ['GET', '/api/v1/namespaces/prod/pods', 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "prod"'],
      ['GET', '/api/v1/pods', 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" at the cluster scope'],
    ];
    for (const [method, path, message] of refused) expect((await s.request(method, path, bob)).json.message, path).toBe(message);
    const review = await s.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      ...bob, body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'shop' } } },
    });
    expect(review.json.status).toEqual({ allowed: true, reason: 'RBAC: allowed by RoleBinding "devs-view/shop" of ClusterRole "view" to Group "devs"' });
  });

  it('after edit, bob writes in shop, still cannot read Secrets elsewhere nor grant himself admin', async () => {
    await grant(s, { name: 'devs-edit', role: 'edit', namespace: 'shop', subjects: [{ kind: 'Group', name: 'devs' }] }, { verb: 'create', resource: 'pods' });
    expect((await s.request('POST', '/api/v1/namespaces/shop/pods', { ...bob, body: pod('bobs') })).status).toBe(201);
    expect((await s.request('GET', '/api/v1/namespaces/shop/secrets/password', bob)).status).toBe(200);
    expect((await s.request('GET', '/api/v1/namespaces/prod/secrets/password', bob)).json.message).toBe(
      'secrets "password" is forbidden: User "bob" cannot get resource "secrets" in API group "" in the namespace "prod"');
    const toAdmin = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'bob-admin' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' }, subjects: [{ kind: 'User', name: 'bob' }] };
    // edit grants no RoleBinding writes at all…
    expect((await s.request('POST', `${rbac}/namespaces/shop/rolebindings`, { ...bob, body: toAdmin })).json.message).toBe(
      'rolebindings.rbac.authorization.k8s.io is forbidden: User "bob" cannot create resource "rolebindings" in API group "rbac.authorization.k8s.io" in the namespace "shop"');
    // …and with them, a binding to what he does not hold is an escalation.
    const writer = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'binding-writer' }, rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings'], verbs: ['create'] }] };
    expect((await s.request('POST', `${rbac}/clusterroles`, { body: writer })).status).toBe(201);
    await grant(s, { name: 'devs-binding-writer', role: 'binding-writer', namespace: 'shop', subjects: [{ kind: 'Group', name: 'devs' }] }, { verb: 'create', resource: 'rolebindings', group: 'rbac.authorization.k8s.io' });
    const escalation = await s.request('POST', `${rbac}/namespaces/shop/rolebindings`, { ...bob, body: toAdmin });
    expect([escalation.status, escalation.json.reason]).toEqual([403, 'Forbidden']);
    expect(escalation.json.message).toBe([
      'rolebindings.rbac.authorization.k8s.io "bob-admin" is forbidden: user "bob" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:',
      '{APIGroups:["authorization.k8s.io"], Resources:["localsubjectaccessreviews"], Verbs:["create"]}',
      '{APIGroups:["rbac.authorization.k8s.io"], Resources:["rolebindings"], Verbs:["delete" "deletecollection" "get" "list" "patch" "update" "watch"]}',
      '{APIGroups:["rbac.authorization.k8s.io"], Resources:["roles"], Verbs:["create" "delete" "deletecollection" "get" "list" "patch" "update" "watch"]}',
    ].join('\n'));
    expect((await s.request('GET', `${rbac}/namespaces/shop/rolebindings/bob-admin`)).status).toBe(404);
    // What he holds he may pass on.
    const toView = { ...toAdmin, metadata: { name: 'carol-view' }, roleRef: { ...toAdmin.roleRef, name: 'view' }, subjects: [{ kind: 'User', name: 'carol' }] };
    expect((await s.request('POST', `${rbac}/namespaces/shop/rolebindings`, { ...bob, body: toView })).status).toBe(201);
  });

  it('serves v1beta1 as the same objects: a binding made there grants, and reads back at v1', async () => {
    const beta = '/apis/rbac.authorization.k8s.io/v1beta1';
    const body = { apiVersion: 'rbac.authorization.k8s.io/v1beta1', kind: 'RoleBinding', metadata: { name: 'carol-view' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'carol' }] };
    expect((await s.request('POST', `${beta}/namespaces/prod/rolebindings`, { body })).status).toBe(201);
    const v1 = await s.request('GET', `${rbac}/namespaces/prod/rolebindings/carol-view`);
    expect(v1.json).toMatchObject({ apiVersion: 'rbac.authorization.k8s.io/v1', subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'carol' }] });
    for (const deadline = Date.now() + 10_000; (await s.request('GET', '/api/v1/namespaces/prod/pods', { token: 'carol-token' })).status !== 200;)
      expect(Date.now() < deadline, 'the v1beta1 binding was not in effect after 10 s').toBe(true);
    expect((await s.request('GET', `${beta}/clusterroles/view`)).json.apiVersion).toBe('rbac.authorization.k8s.io/v1beta1');
  });

  it('keeps every bootstrap role and binding, and the aggregated roles filled', async () => {
    const roles = (await s.request('GET', `${rbac}/clusterroles`)).json.items;
    const byName = new Map(roles.map((r: any) => [r.metadata.name, r]));
    for (const name of ['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:basic-user', 'system:public-info-viewer', 'system:service-account-issuer-discovery'])
      expect(byName.get(name), name).toMatchObject({ metadata: { labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' }, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' } } });
    expect((byName.get('view') as any).rules).toContainEqual({ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] });
    expect((byName.get('admin') as any).rules.length).toBeGreaterThan((byName.get('edit') as any).rules.length);
  });
});
