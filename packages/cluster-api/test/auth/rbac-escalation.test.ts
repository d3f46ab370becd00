/**
 * Privilege-escalation prevention as Kubernetes' policy-based RBAC storage: Roles and ClusterRoles
 * only with the permissions the writer holds (or `escalate`), bindings only to roles whose permissions
 * the writer holds (or `bind` on that role), aggregation rules only with full authority.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grant, namespace, startServerWithUsers, type TestServer } from '../support/helpers.js';

const rbac = '/apis/rbac.authorization.k8s.io/v1';
const bob = { token: 'bob-token' };
const ref = (kind: string, name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name });
const role = (name: string, rules: unknown[]) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules });
const clusterRole = (name: string, rules: unknown[], extra: object = {}) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name }, rules, ...extra });
const binding = (name: string, roleRef: object, subjects: unknown[] = [{ kind: 'User', name: 'carol' }]) =>
  ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name }, roleRef, subjects });
const held = 'user "bob" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:';

describe('escalation checks', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServerWithUsers();
    expect((await s.request('POST', '/api/v1/namespaces', { body: namespace('shop') })).status).toBe(201);
    // bob may write roles and bindings in shop, and read pods: nothing more.
    const writer = clusterRole('rbac-writer', [
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: ['create', 'update', 'patch', 'get'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
    ]);
    expect((await s.request('POST', `${rbac}/clusterroles`, { body: writer })).status).toBe(201);
    expect((await s.request('POST', `${rbac}/clusterroles`, { body: clusterRole('secret-reader', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]) })).status).toBe(201);
    await grant(s, { name: 'bob-writer', role: 'rbac-writer', namespace: 'shop', subjects: [{ kind: 'User', name: 'bob' }] }, { verb: 'create', resource: 'roles', group: 'rbac.authorization.k8s.io' });
  });
  afterAll(() => s.close());

  it('lets bob create a Role with rules he holds, refuses one with more, naming what is missing', async () => {
    expect((await s.request('POST', `${rbac}/namespaces/shop/roles`, { ...bob, body: role('pod-reader', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]) })).status).toBe(201);
    const more = await s.request('POST', `${rbac}/namespaces/shop/roles`, { ...bob, body: role('too-much', [{ apiGroups: [''], resources: ['pods', 'secrets'], verbs: ['get', 'delete'] }]) });
    expect([more.status, more.json.message]).toEqual([403, [
      `roles.rbac.authorization.k8s.io "too-much" is forbidden: ${held}`,
      '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
      '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}',
    ].join('\n')]);
    // An update that adds what he does not hold is refused the same way; one that only touches finalizers passes.
    const current = (await s.request('GET', `${rbac}/namespaces/shop/roles/pod-reader`, bob)).json;
    const wider = await s.request('PUT', `${rbac}/namespaces/shop/roles/pod-reader`, { ...bob, body: { ...current, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] } });
    expect([wider.status, wider.json.message.split('\n')[0]]).toEqual([403, `roles.rbac.authorization.k8s.io "pod-reader" is forbidden: ${held}`]);
  });

  it('lets bob bind a role he holds, refuses one he does not, and says when the role does not exist', async () => {
    expect((await s.request('POST', `${rbac}/namespaces/shop/rolebindings`, { ...bob, body: binding('carol-pods', ref('Role', 'pod-reader')) })).status).toBe(201);
    const secrets = await s.request('POST', `${rbac}/namespaces/shop/rolebindings`, { ...bob, body: binding('carol-secrets', ref('ClusterRole', 'secret-reader')) });
    expect([secrets.status, secrets.json.message]).toEqual([403, `rolebindings.rbac.authorization.k8s.io "carol-secrets" is forbidden: ${held}\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`]);
    const missing = await s.request('POST', `${rbac}/namespaces/shop/rolebindings`, { ...bob, body: binding('carol-nothing', ref('ClusterRole', 'no-such-role')) });
    expect([missing.status, missing.json.message]).toEqual([404, 'clusterroles.rbac.authorization.k8s.io "no-such-role" not found']);
    // An administrator binds what does not exist yet, as in Kubernetes.
    expect((await s.request('POST', `${rbac}/namespaces/shop/rolebindings`, { body: binding('later', ref('ClusterRole', 'no-such-role')) })).status).toBe(201);
  });

  it('lets bob bind a role he lacks once he may `bind` it, and write any Role once he may `escalate`', async () => {
    const bindSecretReader = clusterRole('bind-secret-reader', [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'], resourceNames: ['secret-reader'] }]);
    expect((await s.request('POST', `${rbac}/clusterroles`, { body: bindSecretReader })).status).toBe(201);
    await grant(s, { name: 'bob-bind', role: 'bind-secret-reader', namespace: 'shop', subjects: [{ kind: 'User', name: 'bob' }] }, { verb: 'bind', resource: 'clusterroles', group: 'rbac.authorization.k8s.io', name: 'secret-reader' });
    expect((await s.request('POST', `${rbac}/namespaces/shop/rolebindings`, { ...bob, body: binding('carol-secrets', ref('ClusterRole', 'secret-reader')) })).status).toBe(201);
    // `bind` names one role: cluster-admin is still out of reach.
    expect((await s.request('POST', `${rbac}/namespaces/shop/rolebindings`, { ...bob, body: binding('carol-all', ref('ClusterRole', 'cluster-admin')) })).status).toBe(403);

    expect((await s.request('POST', `${rbac}/clusterroles`, { body: clusterRole('escalator', [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['escalate'] }]) })).status).toBe(201);
    await grant(s, { name: 'bob-escalate', role: 'escalator', namespace: 'shop', subjects: [{ kind: 'User', name: 'bob' }] }, { verb: 'escalate', resource: 'roles', group: 'rbac.authorization.k8s.io' });
    expect((await s.request('POST', `${rbac}/namespaces/shop/roles`, { ...bob, body: role('too-much', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }]) })).status).toBe(201);
  });

  it('allows an aggregationRule only with full authority, whatever the rules', async () => {
    expect((await s.request('POST', `${rbac}/clusterroles`, { body: clusterRole('cluster-role-writer', [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['create'] }]) })).status).toBe(201);
    await grant(s, { name: 'bob-clusterroles', role: 'cluster-role-writer', subjects: [{ kind: 'User', name: 'bob' }] }, { verb: 'create', resource: 'clusterroles', group: 'rbac.authorization.k8s.io' });
    const aggregated = clusterRole('gather', [], { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { gather: 'yes' } }] } });
    const r = await s.request('POST', `${rbac}/clusterroles`, { ...bob, body: aggregated });
    expect([r.status, r.json.message]).toEqual([403, 'clusterroles.rbac.authorization.k8s.io "gather" is forbidden: must have cluster-admin privileges to use the aggregationRule']);
    expect((await s.request('POST', `${rbac}/clusterroles`, { ...bob, body: clusterRole('plain', []) })).status).toBe(201);
    expect((await s.request('POST', `${rbac}/clusterroles`, { body: aggregated })).status).toBe(201);
  });

  it('refuses invalid RBAC objects with Kubernetes\' 422 causes, and a changed roleRef', async () => {
    const bad = await s.request('POST', `${rbac}/namespaces/shop/rolebindings`, {
      body: { ...binding('bad', { apiGroup: 'example.com', kind: 'Thing', name: 'a/b' }, [{ kind: 'User', name: 'x', apiGroup: 'example.com' }, { kind: 'ServiceAccount', name: 'Not_Valid' }]) },
    });
    expect(bad.status).toBe(422);
    expect(bad.json.details.causes).toEqual([
      { reason: 'FieldValueNotSupported', field: 'roleRef.apiGroup', message: 'Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"' },
      { reason: 'FieldValueNotSupported', field: 'roleRef.kind', message: 'Unsupported value: "Thing": supported values: "Role", "ClusterRole"' },
      { reason: 'FieldValueInvalid', field: 'roleRef.name', message: 'Invalid value: "a/b": may not contain \'/\'' },
      { reason: 'FieldValueNotSupported', field: 'subjects[0].apiGroup', message: 'Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"' },
      expect.objectContaining({ reason: 'FieldValueInvalid', field: 'subjects[1].name' }),
    ]);
    const nsRule = await s.request('POST', `${rbac}/namespaces/shop/roles`, { body: role('urls', [{ nonResourceURLs: ['/logs'], verbs: ['get'] }]) });
    expect(nsRule.json.details.causes).toEqual([{ reason: 'FieldValueInvalid', field: 'rules[0].nonResourceURLs', message: 'Invalid value: []string{"/logs"}: namespaced rules cannot apply to non-resource URLs' }]);
    const current = (await s.request('GET', `${rbac}/namespaces/shop/rolebindings/carol-pods`)).json;
    const moved = await s.request('PUT', `${rbac}/namespaces/shop/rolebindings/carol-pods`, { body: { ...current, roleRef: ref('ClusterRole', 'view') } });
    expect([moved.status, moved.json.details.causes]).toEqual([422, [{
      reason: 'FieldValueInvalid', field: 'roleRef', message: 'Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"view"}: cannot change roleRef',
    }]]);
    // Names may hold ':' as Kubernetes' own do.
    expect((await s.request('POST', `${rbac}/clusterroles`, { body: clusterRole('example:reader', []) })).status).toBe(201);
  });
});
