/**
 * The authorizer chain kube-apiserver builds from `--authorization-mode` (pkg/kubeapiserver/authorizer):
 * system:masters first (always allowed, whatever the modes), then each mode in the order given; the
 * first Allow or Deny decides, NoOpinion asks the next, and no opinion at all is a 403.
 *
 * Adding a mode is one row in `modeFactories`. The Node mode (`--authorization-mode Node,RBAC`, the
 * default) lets a `system:node:<name>` user in `system:nodes` have its own Node and Lease, its pods'
 * status and what those pods reference (node-authorizer.ts, deciding from the NodeGraph, a watch of
 * every pod kept as PolicyCache keeps RBAC); it has no opinion on anyone else, and `rulesFor` says
 * `incomplete` for nodes (their rules depend on their pods).
 */
import type { Authorization, Authorizer, SubjectRules } from '../registry/authorization.js';
import { SystemPrivilegedGroup } from '../registry/rbac/escalation.js';
import { NodeAuthorizer, nodeOf } from './node-authorizer.js';
import type { NodeGraph } from './node-graph.js';
import type { PolicyCache } from './policy-cache.js';
import { RbacAuthorizer } from './rbac-authorizer.js';

export const AuthorizationModes = ['AlwaysAllow', 'AlwaysDeny', 'RBAC', 'Node'] as const;
export type AuthorizationMode = (typeof AuthorizationModes)[number];

/** What a mode's authorizer is built from. */
export interface ModeDeps {
  policy: PolicyCache;
  /** Which pods (and what they reference) each node has: the Node mode decides from it. */
  nodes?: NodeGraph;
}

const NoOpinion: Authorization = { decision: 'NoOpinion', reason: '' };
const Allowed: Authorization = { decision: 'Allow', reason: '' };

const alwaysAllow: Authorizer = {
  authorize: () => Allowed,
  rulesFor: () => ({ rules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, { verbs: ['*'], nonResourceURLs: ['*'] }], incomplete: false }),
};

const alwaysDeny: Authorizer = {
  authorize: () => ({ decision: 'NoOpinion', reason: 'Everything is forbidden.' }),
  rulesFor: () => ({ rules: [], incomplete: false }),
};

/** How each mode's authorizer is built. */
export const modeFactories: Readonly<Record<AuthorizationMode, (deps: ModeDeps) => Authorizer>> = {
  AlwaysAllow: () => alwaysAllow,
  AlwaysDeny: () => alwaysDeny,
  RBAC: (deps) => new RbacAuthorizer(deps.policy),
  Node: (deps) => {
    if (!deps.nodes) throw new Error('authorization mode Node needs the node graph');
    const node = new NodeAuthorizer(deps.nodes);
    return {
      authorize: (attrs) => node.authorize(attrs),
      rulesFor: (user) => ({ rules: [], incomplete: nodeOf(user) !== undefined }),
    };
  },
};

/** authorizerfactory.NewPrivilegedGroups: members are allowed everything, before any mode is asked. */
const privilegedGroups = (groups: readonly string[]): Authorizer => ({
  authorize(attrs) {
    for (const g of attrs.user.groups) if (groups.includes(g)) return Allowed;
    return NoOpinion;
  },
});

/** union.New: the first Allow or Deny wins; the reasons of those with no opinion are joined. */
export const union = (authorizers: readonly Authorizer[]): Authorizer => ({
  authorize(attrs) {
    let reasons: string[] | undefined;
    for (const a of authorizers) {
      const found = a.authorize(attrs);
      if (found.decision !== 'NoOpinion') return found;
      if (found.reason) (reasons ??= []).push(found.reason);
    }
    return reasons ? { decision: 'NoOpinion', reason: reasons.join('\n') } : NoOpinion;
  },
  rulesFor(user, namespace): SubjectRules {
    const all: SubjectRules = { rules: [], incomplete: false };
    const errors: string[] = [];
    for (const a of authorizers) {
      const found = a.rulesFor?.(user, namespace);
      if (!found) continue;
      all.rules.push(...found.rules);
      all.incomplete ||= found.incomplete;
      if (found.evaluationError) errors.push(found.evaluationError);
    }
    if (errors.length > 0) all.evaluationError = errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
    return all;
  },
});

export interface AuthorizerChain extends Authorizer {
  readonly modes: readonly AuthorizationMode[];
  /** The RBAC authorizer when RBAC is a mode (ResourceAccessReview asks it who may do something). */
  readonly rbac?: RbacAuthorizer;
}

export function buildAuthorizer(modes: readonly AuthorizationMode[], deps: ModeDeps): AuthorizerChain {
  const built = modes.map((mode) => {
    return modeFactories[mode](deps);
  });
  const chain = union([privilegedGroups([SystemPrivilegedGroup]), ...built]);
  const rbac = built.find((a): a is RbacAuthorizer => a instanceof RbacAuthorizer);
  const allowedSubjects = (attrs: Parameters<RbacAuthorizer['allowedSubjects']>[0]) => rbac?.allowedSubjects(attrs) ?? { users: [], groups: [SystemPrivilegedGroup] };
  // Only RBAC decides from a cache that a denial can be checked against (the policy cache's sync).
  const refresh = rbac ? () => deps.policy.sync() : undefined;
  return { modes, rbac, authorize: chain.authorize, rulesFor: chain.rulesFor, allowedSubjects, refresh };
}
