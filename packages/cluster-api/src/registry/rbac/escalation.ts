/**
 * Privilege-escalation prevention, as Kubernetes' policy-based RBAC storage does it
 * (pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased and
 * escalation_check.go): a Role or ClusterRole is written only by someone who holds every permission
 * in it (or may `escalate` roles); a binding only by someone who holds the bound role's permissions
 * (or may `bind` that role). system:masters, and writes without a user, pass. The requester's rules
 * are read from storage, as Kubernetes reads its registry here, so a role created a moment ago counts.
 */
import { isDeepStrictEqual } from 'node:util';
import { forbidden, notFound } from '../../api/errors.js';
import type { KubeObject } from '../../api/meta.js';
import { RbacGroup, type ClusterRole, type PolicyRule, type RoleBinding, type RoleRef } from '../../api/rbac-v1.js';
import { resourceAttributes } from '../authorization.js';
import type { Hooks, Services } from '../definition.js';
import type { RequestContext, UserInfo } from '../rest.js';
import { roleReferenceRules, rulesFor, type PolicySource } from './resolver.js';
import { compactRules, compactString, uncovered } from './rules.js';

export const SystemPrivilegedGroup = 'system:masters';

const FullAuthority: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

/** EscalationAllowed: no user (the server's own writes) or a member of system:masters. */
const escalationAllowed = (user: UserInfo | undefined): user is undefined => !user || user.groups.includes(SystemPrivilegedGroup);

/** The RBAC objects that matter for `namespace`, read from storage now. */
export async function storedPolicy(services: Services, namespace: string): Promise<PolicySource> {
  const ctx: RequestContext = {};
  const list = async (plural: string, ns?: string): Promise<KubeObject[]> =>
    (await services.find(RbacGroup, 'v1', plural)?.list({ ...ctx, namespace: ns }, {}))?.items ?? [];
  const [roles, clusterRoles, roleBindings, clusterRoleBindings] = await Promise.all([
    namespace ? list('roles', namespace) : [], list('clusterroles'), namespace ? list('rolebindings', namespace) : [], list('clusterrolebindings'),
  ]);
  const byName = (items: KubeObject[]) => new Map(items.map((o) => [o.metadata.name ?? '', o]));
  const [roleMap, clusterRoleMap] = [byName(roles), byName(clusterRoles)];
  return {
    role: (_ns, name) => roleMap.get(name),
    clusterRole: (name) => clusterRoleMap.get(name),
    roleBindings: () => roleBindings as RoleBinding[],
    clusterRoleBindings: () => clusterRoleBindings as RoleBinding[],
    missing: (ref) => notFound({ group: RbacGroup, resource: ref.kind === 'Role' ? 'roles' : 'clusterroles' }, ref.name ?? '').message,
  };
}

/** Go's %q of a []string. */
const quoted = (list: readonly string[]): string => `[${list.map((s) => JSON.stringify(s)).join(' ')}]`;

/** ConfirmNoEscalation: the requester's rules in the namespace cover `rules`, or the message saying what is missing. */
function escalationOf(source: PolicySource, user: UserInfo, namespace: string, rules: readonly PolicyRule[]): string | undefined {
  const held = rulesFor(source, user, namespace);
  const missing = uncovered(held.rules.map((r) => r.rule), rules);
  if (missing.length === 0) return undefined;
  const lines = [...new Set(compactRules(missing).map(compactString))].sort();
  const resolution = held.error ? `; resolution errors: [${held.error}]` : '';
  return `user ${JSON.stringify(user.name)} (groups=${quoted(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}${resolution}`;
}

/** The verb check (`escalate` on roles, `bind` on one role) through the server's authorizer. */
const authorized = (services: Services, user: UserInfo, verb: string, resource: string, name: string, namespace: string): boolean =>
  services.authorizer?.authorize(resourceAttributes(user, verb, { apiGroup: RbacGroup, apiVersion: '*', resource, name, namespace })).decision === 'Allow';

/** IsOnlyMutatingGCFields: an update that only touches owner references or finalizers needs no check. */
const onlyGarbageCollectionFields = (obj: KubeObject, old: KubeObject | undefined): boolean => {
  if (!old) return false;
  const { ownerReferences: _o, finalizers: _f, selfLink: _s, managedFields: _m, resourceVersion: _r, ...meta } = obj.metadata;
  const { ownerReferences: _oo, finalizers: _of, selfLink: _os, managedFields: _om, resourceVersion: _or, ...was } = old.metadata;
  return isDeepStrictEqual({ ...obj, metadata: meta }, { ...old, metadata: was });
};

const hasAggregationRule = (o: KubeObject | undefined): boolean => ((o as ClusterRole | undefined)?.aggregationRule?.clusterRoleSelectors?.length ?? 0) > 0;

/** The `admit` hook of Role (`resource` roles) and ClusterRole (clusterroles). */
export const roleEscalationCheck = (resource: 'roles' | 'clusterroles'): NonNullable<Hooks['admit']> => async (obj, old, ctx, services) => {
  const user = ctx.user;
  if (escalationAllowed(user)) return;
  const namespace = ctx.namespace ?? '';
  const name = obj.metadata.name ?? '';
  // Kubernetes asks with the request's own name: a create (POST to the collection) names none.
  if (authorized(services, user, 'escalate', resource, old ? name : '', namespace)) return;
  if (onlyGarbageCollectionFields(obj, old)) return;
  const gr = { group: RbacGroup, resource };
  const source = await storedPolicy(services, namespace);
  const refused = escalationOf(source, user, namespace, ((obj as ClusterRole).rules ?? []) as PolicyRule[]);
  if (refused) throw forbidden(gr, name, refused);
  if (resource === 'clusterroles' && (hasAggregationRule(obj) || hasAggregationRule(old)) && escalationOf(source, user, namespace, FullAuthority))
    throw forbidden(gr, name, 'must have cluster-admin privileges to use the aggregationRule');
};

/** The `admit` hook of RoleBinding (`resource` rolebindings) and ClusterRoleBinding (clusterrolebindings). */
export const bindingEscalationCheck = (resource: 'rolebindings' | 'clusterrolebindings'): NonNullable<Hooks['admit']> => async (obj, old, ctx, services) => {
  const user = ctx.user;
  if (escalationAllowed(user) || onlyGarbageCollectionFields(obj, old)) return;
  const namespace = resource === 'rolebindings' ? (ctx.namespace ?? obj.metadata.namespace ?? '') : '';
  const ref: RoleRef = (obj as RoleBinding).roleRef ?? {};
  const roleResource = ref.kind === 'Role' ? 'roles' : 'clusterroles';
  if (authorized(services, user, 'bind', roleResource, ref.name ?? '', namespace)) return;
  const source = await storedPolicy(services, namespace);
  const rules = roleReferenceRules(source, ref, namespace);
  if (typeof rules === 'string') throw notFound({ group: RbacGroup, resource: roleResource }, ref.name ?? '');
  const refused = escalationOf(source, user, namespace, rules);
  if (refused) throw forbidden({ group: RbacGroup, resource }, obj.metadata.name ?? '', refused);
};
