/**
 * Creates the bootstrap policy on the first start and reconciles it on every start, as
 * kube-apiserver's rbac/bootstrap-roles post-start hook (pkg/registry/rbac/reconciliation): a missing
 * object is created; an existing one keeps what it has and gains the expected labels, annotations,
 * rules, aggregation selectors and subjects it lacks (never loses any); a binding whose roleRef
 * differs is recreated. Objects annotated `rbac.authorization.kubernetes.io/autoupdate: "false"` are
 * left alone. Several API servers on one etcd may do this at once: races are retried.
 */
import { isDeepStrictEqual } from 'node:util';
import { isApiError } from '../../api/errors.js';
import type { KubeObject } from '../../api/meta.js';
import { RbacGroup, type ClusterRole, type PolicyRule, type RoleBinding } from '../../api/rbac-v1.js';
import { uncovered } from '../../registry/rbac/rules.js';
import type { Registry, RequestContext, ResourceStore } from '../../registry/rest.js';
import { bootstrapClusterRoleBindings, bootstrapRoleBindings, bootstrapRoles } from './bindings.js';
import { bootstrapClusterRoles } from './cluster-roles.js';
import { controllerClusterRoleBindings, controllerClusterRoles } from './controller-roles.js';
import { AutoUpdate } from './policy-data.js';
import { sccClusterRoleBindings, sccClusterRoles } from './scc-roles.js';
import { DefaultSccs } from '../../admission/security-context-constraints/defaults.js';

/** What to do with an existing object: nothing, this update, or (a binding to another role) recreate it. */
type Plan = undefined | { update: KubeObject } | { recreate: true };

const Attempts = 8;

const merged = (expected: Record<string, string> | undefined, existing: Record<string, string> | undefined) => ({ ...expected, ...existing });

/** The expected labels and annotations added to the existing object's own (which win). */
const withMetadata = (existing: KubeObject, expected: KubeObject): KubeObject => ({
  ...existing,
  metadata: {
    ...existing.metadata,
    labels: merged(expected.metadata.labels, existing.metadata.labels),
    annotations: merged(expected.metadata.annotations, existing.metadata.annotations),
  },
});

const missingSelectors = (existing: ClusterRole, expected: ClusterRole) =>
  (expected.aggregationRule?.clusterRoleSelectors ?? []).filter((s) => !(existing.aggregationRule?.clusterRoleSelectors ?? []).some((e) => isDeepStrictEqual(e, s)));

function planRole(existing: KubeObject, expected: KubeObject): Plan {
  const [had, want] = [existing as ClusterRole, expected as ClusterRole];
  const next = withMetadata(existing, expected) as ClusterRole;
  const missing = uncovered((had.rules ?? []) as PolicyRule[], (want.rules ?? []) as PolicyRule[]);
  if (missing.length > 0) next.rules = [...(had.rules ?? []), ...missing];
  if (!want.aggregationRule && had.aggregationRule) delete next.aggregationRule;
  const selectors = missingSelectors(had, want);
  if (selectors.length > 0) next.aggregationRule = { clusterRoleSelectors: [...(had.aggregationRule?.clusterRoleSelectors ?? []), ...selectors] };
  return isDeepStrictEqual(next, existing) ? undefined : { update: next };
}

function planBinding(existing: KubeObject, expected: KubeObject): Plan {
  const [had, want] = [existing as RoleBinding, expected as RoleBinding];
  if (!isDeepStrictEqual(had.roleRef, want.roleRef)) return { recreate: true };
  const next = withMetadata(existing, expected) as RoleBinding;
  const missing = (want.subjects ?? []).filter((s) => !(had.subjects ?? []).some((e) => isDeepStrictEqual(e, s)));
  if (missing.length > 0) next.subjects = [...(had.subjects ?? []), ...missing];
  return isDeepStrictEqual(next, existing) ? undefined : { update: next };
}

const racing = (err: unknown): boolean => isApiError(err) && (err.code === 404 || err.code === 409);

/** One expected object made true, retrying races with another server doing the same. */
async function reconcileOne(store: ResourceStore, expected: KubeObject, plan: (existing: KubeObject, expected: KubeObject) => Plan): Promise<void> {
  const ctx: RequestContext = { namespace: expected.metadata.namespace, fieldManager: 'cluster-api' };
  const name = expected.metadata.name!;
  for (let attempt = 0; ; attempt++) {
    try {
      const existing = await store.get(ctx, name).catch((err: unknown) => {
        if (isApiError(err) && err.code === 404) return undefined;
        throw err;
      });
      if (!existing) return void (await store.create(ctx, structuredClone(expected)));
      if (existing.metadata.annotations?.[AutoUpdate] === 'false') return;
      const next = plan(existing, expected);
      if (!next) return;
      if ('update' in next) return void (await store.update(ctx, name, next.update));
      await store.delete(ctx, name, { preconditions: { uid: existing.metadata.uid } });
      await store.create(ctx, structuredClone(expected));
      return;
    } catch (err) {
      if (!racing(err) || attempt >= Attempts) throw err;
    }
  }
}

/** Every bootstrap object, kind by kind (roles before the bindings that name them). */
export async function reconcileBootstrapPolicy(registry: Registry): Promise<void> {
  const steps: [string, readonly KubeObject[], typeof planRole][] = [
    ['clusterroles', [...bootstrapClusterRoles, ...controllerClusterRoles, ...sccClusterRoles], planRole],
    ['clusterrolebindings', [...bootstrapClusterRoleBindings, ...controllerClusterRoleBindings, ...sccClusterRoleBindings], planBinding],
    ['roles', bootstrapRoles, planRole],
    ['rolebindings', bootstrapRoleBindings, planBinding],
  ];
  for (const [plural, objects, plan] of steps) {
    const store = registry.find(RbacGroup, 'v1', plural);
    if (store) await Promise.all(objects.map((o) => reconcileOne(store, o, plan)));
  }
  // The default SecurityContextConstraints: created when missing, an existing one left as it is.
  const sccs = registry.find('', 'v1', 'securitycontextconstraints');
  if (sccs) await Promise.all(DefaultSccs.map((o) => reconcileOne(sccs, o, () => undefined)));
}
