/**
 * Which rules apply to a user in a namespace (pkg/registry/rbac/validation.DefaultRuleResolver): the
 * ClusterRoleBindings whose subjects name the user, then the namespace's RoleBindings, each resolved
 * to its role's rules. Over a `PolicySource`: the authorizer's cache of the RBAC objects, or a
 * snapshot read from storage for the escalation checks, as Kubernetes reads its registry there.
 */
import type { ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject } from '../../api/rbac-v1.js';
import type { UserInfo } from '../rest.js';

/** The RBAC objects rules are resolved from. A missing role is `undefined`. */
export interface PolicySource {
  role(namespace: string, name: string): Role | undefined;
  clusterRole(name: string): ClusterRole | undefined;
  roleBindings(namespace: string): readonly RoleBinding[];
  clusterRoleBindings(): readonly ClusterRoleBinding[];
  /** How a missing role is reported: the lister's `clusterrole.rbac…` or the registry's `clusterroles.rbac…` wording. */
  missing(ref: RoleRef): string;
}

/** A rule and the binding it came from (`RBAC: allowed by …`). */
export interface SourcedRule {
  rule: PolicyRule;
  source: string;
}

export const ServiceAccountPrefix = 'system:serviceaccount:';

/** rbac appliesToUser: a ServiceAccount subject without a namespace means the binding's own. */
export const appliesTo = (user: UserInfo, subject: Subject, bindingNamespace: string): boolean => {
  switch (subject.kind) {
    case 'User':
      return user.name === subject.name;
    case 'Group':
      return subject.name !== undefined && user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const namespace = subject.namespace || bindingNamespace;
      return namespace !== '' && user.name === `${ServiceAccountPrefix}${namespace}:${subject.name ?? ''}`;
    }
    default:
      return false;
  }
};

const describeSubject = (s: Subject, bindingNamespace: string): string =>
  s.kind === 'ServiceAccount' ? `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}` : `${s.kind} ${JSON.stringify(s.name ?? '')}`;

const describe = (binding: RoleBinding, subject: Subject, namespace: string): string => {
  const ref = binding.roleRef ?? {};
  const what = namespace ? `RoleBinding ${JSON.stringify(`${binding.metadata.name}/${namespace}`)}` : `ClusterRoleBinding ${JSON.stringify(binding.metadata.name)}`;
  return `${what} of ${ref.kind} ${JSON.stringify(ref.name ?? '')} to ${describeSubject(subject, namespace)}`;
};

/** The rules a role reference stands for, or why there are none. */
export const roleReferenceRules = (source: PolicySource, ref: RoleRef, bindingNamespace: string): PolicyRule[] | string => {
  if (ref.kind !== 'Role' && ref.kind !== 'ClusterRole') return `unsupported role reference kind: ${JSON.stringify(ref.kind ?? '')}`;
  const role = ref.kind === 'Role' ? source.role(bindingNamespace, ref.name ?? '') : source.clusterRole(ref.name ?? '');
  return role ? (role.rules ?? []) : source.missing(ref);
};

/**
 * Calls `visit` with every rule that applies, cluster bindings first; `visit` returning false stops.
 * Resolution errors (a binding to a missing role) go to `onError` and do not stop the walk: rules are
 * additive, so what was found still counts.
 */
export function visitRules(
  source: PolicySource,
  user: UserInfo,
  namespace: string,
  visit: (rule: SourcedRule) => boolean,
  onError: (message: string) => void,
): void {
  const walk = (bindings: readonly RoleBinding[], ns: string): boolean => {
    for (const binding of bindings) {
      const subject = (binding.subjects ?? []).find((s) => appliesTo(user, s, ns));
      if (!subject) continue;
      const rules = roleReferenceRules(source, binding.roleRef ?? {}, ns);
      if (typeof rules === 'string') {
        onError(rules);
        continue;
      }
      const from = describe(binding, subject, ns);
      for (const rule of rules) if (!visit({ rule, source: from })) return false;
    }
    return true;
  };
  if (walk(source.clusterRoleBindings(), '') && namespace) walk(source.roleBindings(namespace), namespace);
}

/** Every rule that applies, and the resolution errors met (utilerrors' aggregate wording). */
export function rulesFor(source: PolicySource, user: UserInfo, namespace: string): { rules: SourcedRule[]; error?: string } {
  const rules: SourcedRule[] = [];
  const errors: string[] = [];
  visitRules(source, user, namespace, (r) => (rules.push(r), true), (e) => errors.push(e));
  return { rules, error: aggregate(errors) };
}

/** k8s.io/apimachinery's errors.NewAggregate(...).Error(): one message as is, several as `[a, b]`, repeats once. */
export const aggregate = (errors: readonly string[]): string | undefined => {
  const unique = [...new Set(errors)];
  if (unique.length === 0) return undefined;
  return unique.length === 1 ? unique[0] : `[${unique.join(', ')}]`;
};
