/**
 * The bootstrap policy over restarts of a server on one SQLite file (created at the first start,
 * reconciled at every start: missing rules, subjects and objects come back, operators' additions and
 * `autoupdate: "false"` objects stay), and the ClusterRole aggregation controller.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServerWithUsers, tempDir, type TestServer } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

const rbac = '/apis/rbac.authorization.k8s.io/v1';

describe('bootstrap policy across restarts', () => {
  const file = `sqlite:${join(tempDir(), 'state.db')}`;
  let s: TestServer | undefined;
  afterAll(() => s?.close());

  it('puts back what was taken from it, keeps what was added, and leaves autoupdate=false alone', async () => {
    s = await startServerWithUsers(file);
    const get = async (path: string) => (await s!.request('GET', `${rbac}/${path}`)).json;
    const put = async (path: string, body: object) => expect((await s!.request('PUT', `${rbac}/${path}`, { body })).status).toBe(200);

    const basic = await get('clusterroles/system:basic-user');
    const extraRule = { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get'] };
    await put('clusterroles/system:basic-user', { ...basic, rules: [basic.rules[1], extraRule] });
    const discovery = await get('clusterroles/system:discovery');
    const pinned = { ...discovery, metadata: { ...discovery.metadata, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } }, rules: [{ nonResourceURLs: ['/api'], verbs: ['get'] }] };
    await put('clusterroles/system:discovery', pinned);
    const viewer = await get('clusterrolebindings/system:public-info-viewer');
    await put('clusterrolebindings/system:public-info-viewer', { ...viewer, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'someone' }] });
    expect((await s.request('DELETE', `${rbac}/clusterroles/view`)).status).toBe(200);
    await s.close();

    s = await startServerWithUsers(file);
    const restored = await get('clusterroles/system:basic-user');
    // The missing rule comes back broken down, as Kubernetes' reconciliation appends what Covers finds missing.
    expect(restored.rules).toEqual([
      basic.rules[1],
      extraRule,
      { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectrulesreviews'], verbs: ['create'] },
    ]);
    expect((await get('clusterroles/system:discovery')).rules).toEqual(pinned.rules);
    expect((await get('clusterrolebindings/system:public-info-viewer')).subjects).toEqual([
      { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'someone' },
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:authenticated' },
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:unauthenticated' },
    ]);
    const view = await get('clusterroles/view');
    expect(view.aggregationRule).toEqual({ clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }] });
    expect(view.rules).toContainEqual({ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] });
  });
});

describe('the ClusterRole aggregation controller', () => {
  let s: TestServer;
  afterAll(() => s?.close());

  it('gathers the rules of every ClusterRole labelled for admin, edit or view, and lets them go when the label goes', async () => {
    s = await startServerWithUsers();
    const rule = { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] };
    const widgets = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'widgets-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }, rules: [rule] };
    expect((await s.request('POST', `${rbac}/clusterroles`, { body: widgets })).status).toBe(201);
    const rulesOf = async (name: string) => ((await s.request('GET', `${rbac}/clusterroles/${name}`)).json.rules ?? []) as unknown[];
    const has = (rules: unknown[]) => rules.some((r) => JSON.stringify(r) === JSON.stringify(rule));
    // view gathers it; edit gathers view's; admin gathers edit's.
    for (const name of ['view', 'edit', 'admin']) expect(await until(`${name} holding the widgets rule`, async () => has(await rulesOf(name)), { timeoutMs: 10_000 }), name).toBe(true);
    const view = (await s.request('GET', `${rbac}/clusterroles/view`)).json;
    expect(view.metadata.managedFields.map((f: any) => f.manager)).toContain('clusterrole-aggregation-controller');

    const current = (await s.request('GET', `${rbac}/clusterroles/widgets-view`)).json;
    expect((await s.request('PUT', `${rbac}/clusterroles/widgets-view`, { body: { ...current, metadata: { ...current.metadata, labels: {} } } })).status).toBe(200);
    for (const name of ['view', 'edit', 'admin']) expect(await until(`${name} without the widgets rule`, async () => !has(await rulesOf(name)), { timeoutMs: 10_000 }), name).toBe(true);
  });
});
