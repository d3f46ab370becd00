/**
 * The RBAC authorizer (plugin/pkg/auth/authorizer/rbac): allows a request when a rule bound to the
 * user, its groups or its service account allows it; otherwise no opinion (the chain then forbids).
 * Rules are resolved from the policy cache; what applies to one user in one namespace is resolved
 * once and kept until the next change of any RBAC object (`PolicyCache.generation`), so a request
 * costs a map lookup and a walk over that user's rules.
 */
import type { Attributes, Authorization, Authorizer, SubjectRules } from '../registry/authorization.js';
import type { RoleBinding } from '../api/rbac-v1.js';
import { SystemPrivilegedGroup } from '../registry/rbac/escalation.js';
import { roleReferenceRules, rulesFor, ServiceAccountPrefix, type SourcedRule } from '../registry/rbac/resolver.js';
import { ruleAllows } from '../registry/rbac/rules.js';
import type { UserInfo } from '../registry/rest.js';
import type { PolicyCache } from './policy-cache.js';

interface Resolved {
  rules: (SourcedRule & { allowed?: Authorization })[];
  error?: string;
  denied: Authorization;
}

/** Above this many user × namespace entries the cache starts over: a bound on memory, never on correctness. */
const MaxResolved = 10_000;

const NoOpinion: Authorization = { decision: 'NoOpinion', reason: '' };

/** One user's identity as a key; users from the token file are the same objects each request. */
const userKeys = new WeakMap<UserInfo, string>();
const userKey = (user: UserInfo): string => {
  let key = userKeys.get(user);
  if (key === undefined) userKeys.set(user, (key = `${user.name}\u0000${user.groups.join('\u0001')}`));
  return key;
};

export class RbacAuthorizer implements Authorizer {
  /** By user, then namespace: no key is built per request. */
  private resolved = new Map<string, Map<string, Resolved>>();
  private size = 0;
  private generation = -1;

  constructor(private readonly policy: PolicyCache) {}

  authorize(attrs: Attributes): Authorization {
    const resolved = this.resolve(attrs.user, attrs.namespace);
    for (const r of resolved.rules) {
      if (ruleAllows(attrs, r.rule)) return (r.allowed ??= { decision: 'Allow', reason: `RBAC: allowed by ${r.source}` });
    }
    return resolved.denied;
  }

  rulesFor(user: UserInfo, namespace: string): SubjectRules {
    const resolved = this.resolve(user, namespace);
    return { rules: resolved.rules.map((r) => r.rule), incomplete: false, ...(resolved.error && { evaluationError: resolved.error }) };
  }

  /**
   * Who may do what `attrs` asks (rbac.SubjectAccessEvaluator.AllowedSubjects): system:masters, and
   * the subjects of every binding whose role allows it; for OpenShift's ResourceAccessReview.
   */
  allowedSubjects(attrs: Attributes): { users: string[]; groups: string[] } {
    const users = new Set<string>();
    const groups = new Set<string>([SystemPrivilegedGroup]);
    const scan = (bindings: readonly RoleBinding[], ns: string): void => {
      for (const b of bindings) {
        const rules = roleReferenceRules(this.policy, b.roleRef ?? {}, ns);
        if (typeof rules === 'string' || !rules.some((rule) => ruleAllows(attrs, rule))) continue;
        for (const s of b.subjects ?? []) {
          if (s.kind === 'User') users.add(s.name ?? '');
          else if (s.kind === 'Group') groups.add(s.name ?? '');
          else if (s.kind === 'ServiceAccount') users.add(`${ServiceAccountPrefix}${s.namespace || ns}:${s.name ?? ''}`);
        }
      }
    };
    scan(this.policy.clusterRoleBindings(), '');
    if (attrs.namespace) scan(this.policy.roleBindings(attrs.namespace), attrs.namespace);
    return { users: [...users].sort(), groups: [...groups].sort() };
  }

  private resolve(user: UserInfo, namespace: string): Resolved {
    if (this.generation !== this.policy.generation || this.size >= MaxResolved) {
      this.resolved.clear();
      this.size = 0;
      this.generation = this.policy.generation;
    }
    const key = userKey(user);
    let byNamespace = this.resolved.get(key);
    if (!byNamespace) this.resolved.set(key, (byNamespace = new Map()));
    let found = byNamespace.get(namespace);
    if (!found) {
      const { rules, error } = rulesFor(this.policy, user, namespace);
      found = { rules, error, denied: error ? { decision: 'NoOpinion', reason: `RBAC: ${error}` } : NoOpinion };
      byNamespace.set(namespace, found);
      this.size++;
    }
    return found;
  }
}
