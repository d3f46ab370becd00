/**
 * What an authorizer is asked and answers (k8s.io/apiserver's authorizer.Attributes, Decision and
 * RuleResolver). The interface lives here, under the registry, because the review kinds and the RBAC
 * kinds' escalation checks ask it through `Services`; the authorizers themselves live in auth/.
 */
import type { PolicyRule } from '../api/rbac-v1.js';
import type { UserInfo } from './rest.js';

/**
 * One request as authorization sees it. A resource request names group, resource, subresource,
 * namespace and name ('' when absent); a non-resource request only `path`. The verb is Kubernetes'
 * (get, list, watch, create, update, patch, delete, deletecollection, proxy; bind, escalate,
 * impersonate for the checks that ask for them; the lower-case HTTP method for non-resource paths).
 */
export interface Attributes {
  user: UserInfo;
  verb: string;
  resourceRequest: boolean;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** The URL path of a non-resource request ('' for resource requests). */
  path: string;
}

/** Allow and Deny end the chain; NoOpinion asks the next authorizer (none left: forbidden). */
export type Decision = 'Allow' | 'Deny' | 'NoOpinion';

export interface Authorization {
  decision: Decision;
  /** Why (RBAC: the binding that allowed it; on a denial the resolution errors, if any). */
  reason: string;
  /** Something failed while deciding (a binding to a missing role); the decision may still stand. */
  evaluationError?: string;
}

/** What a subject may do in a namespace, as SelfSubjectRulesReview reports it. */
export interface SubjectRules {
  rules: PolicyRule[];
  /** Some authorizer in the chain cannot list what it allows (the Node authorizer for nodes). */
  incomplete: boolean;
  evaluationError?: string;
}

/**
 * An authorizer decides from memory (RBAC from its cache of the RBAC objects), so deciding is
 * synchronous: it runs on every request, between authentication and route resolution.
 */
export interface Authorizer {
  authorize(attrs: Attributes): Authorization;
  /** The rules that apply to `user` in `namespace` ('' for cluster-wide ones only). */
  rulesFor?(user: UserInfo, namespace: string): SubjectRules;
  /** Who may do what `attrs` asks, whatever its user (rbac.SubjectAccessEvaluator; OpenShift's ResourceAccessReview). */
  allowedSubjects?(attrs: Attributes): { users: string[]; groups: string[] };
  /**
   * Brings what it decides from up to the store (its cache may be a moment behind a write); a request
   * it refused is asked about again once this resolves, so a committed grant is never missed.
   */
  refresh?(): Promise<void>;
}

/**
 * The chain's decision on `attrs`, never missing a committed grant: an Allow at once (synchronous);
 * otherwise, from an authorizer that can refresh, the decision asked again once it has.
 */
export function decideFresh(authorizer: Authorizer, attrs: Attributes): Authorization | Promise<Authorization> {
  const found = authorizer.authorize(attrs);
  if (found.decision === 'Allow' || !authorizer.refresh) return found;
  return authorizer.refresh().then(() => authorizer.authorize(attrs));
}

const blank = { apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '', path: '' };

/** Attributes of a resource request; unnamed fields are ''. */
export const resourceAttributes = (user: UserInfo, verb: string, fields: Partial<Omit<Attributes, 'user' | 'verb' | 'resourceRequest' | 'path'>>): Attributes =>
  ({ ...blank, ...fields, user, verb, resourceRequest: true });

export const nonResourceAttributes = (user: UserInfo, verb: string, path: string): Attributes =>
  ({ ...blank, user, verb, path, resourceRequest: false });
