/**
 * RBAC through @kubernetes/client-node over TLS: the admin writes Roles and bindings with
 * RbacAuthorizationV1Api, bob (a token-file user in group devs) gets 403 ApiExceptions carrying
 * kube-apiserver's Status until bound, and his access reviews say what the server does.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiException, AuthorizationV1Api, CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { serve, type Served } from '../../src/server.js';
import { tempDir } from '../support/helpers.js';

/** The Status of a refused call, as client-node hands it over. */
const refusal = async (call: Promise<unknown>): Promise<{ code: number; body: any }> => {
  const err = await call.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ApiException);
  const e = err as ApiException<unknown>;
  return { code: e.code, body: typeof e.body === 'string' ? JSON.parse(e.body) : e.body };
};

describe('RBAC with @kubernetes/client-node', () => {
  let dir: string;
  let served: Served;
  let admin: KubeConfig;
  let bob: KubeConfig;

  beforeAll(async () => {
    dir = tempDir();
    writeFileSync(join(dir, 'tokens.csv'), 'admin-token,admin,admin,system:masters\nbob-token,bob,bob-uid,devs\n');
    served = await serve(resolveConfig({ port: 0, dataDir: join(dir, 'data'), storage: `sqlite:${join(dir, 'state.db')}`, tokenAuthFile: join(dir, 'tokens.csv') }), () => {});
    admin = new KubeConfig();
    admin.loadFromString(readFileSync(served.kubeconfig!, 'utf8'));
    bob = new KubeConfig();
    bob.loadFromOptions({
      clusters: admin.getClusters(),
      users: [{ name: 'bob', token: 'bob-token' }],
      contexts: [{ name: 'bob', cluster: admin.getCurrentCluster()!.name, user: 'bob' }],
      currentContext: 'bob',
    });
    await admin.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'shop' } } });
    await admin.makeApiClient(CoreV1Api).createNamespacedSecret({ namespace: 'shop', body: { metadata: { name: 'password' }, stringData: { p: 'x' } } });
  });
  afterAll(async () => {
    await served?.server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses bob with a 403 Status that names what he asked for', async () => {
    const core = bob.makeApiClient(CoreV1Api);
    const list = await refusal(core.listNamespacedPod({ namespace: 'shop' }));
    expect(list).toEqual({ code: 403, body: expect.objectContaining({
      kind: 'Status', reason: 'Forbidden', code: 403, details: { kind: 'pods' },
      message: 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "shop"',
    }) });
    const read = await refusal(core.readNamespacedSecret({ namespace: 'shop', name: 'password' }));
    expect(read.body.details).toEqual({ name: 'password', kind: 'secrets' });
    const review = await bob.makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({
      body: { spec: { resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'shop' } } },
    });
    expect(review.status).toEqual({ allowed: false });
  });

  it('lets bob read pods in shop once the admin binds a Role there to devs, and no Secret', async () => {
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({ namespace: 'shop', body: { metadata: { name: 'pod-reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] } });
    const binding = await rbac.createNamespacedRoleBinding({
      namespace: 'shop',
      body: { metadata: { name: 'devs' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' }, subjects: [{ kind: 'Group', name: 'devs' }] },
    });
    expect(binding.subjects).toEqual([{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'devs' }]);
    const core = bob.makeApiClient(CoreV1Api);
    for (const deadline = Date.now() + 10_000; ; await new Promise((r) => setTimeout(r, 20))) {
      const ok = await core.listNamespacedPod({ namespace: 'shop' }).then(() => true, () => false);
      if (ok) break;
      if (Date.now() > deadline) throw new Error('binding not in effect after 10 s');
    }
    expect((await refusal(core.listNamespacedSecret({ namespace: 'shop' }))).code).toBe(403);
    const rules = await bob.makeApiClient(AuthorizationV1Api).createSelfSubjectRulesReview({ body: { spec: { namespace: 'shop' } } });
    expect(rules.status?.resourceRules).toContainEqual({ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] });
    expect((await rbac.listNamespacedRoleBinding({ namespace: 'shop' })).items.map((b) => b.metadata?.name)).toEqual(['devs']);
  });
});
