/**
 * OpenShift's authorization.openshift.io reviews, answered from the same authorizer chain as the
 * Kubernetes ones so both say the same thing: SubjectAccessReview and LocalSubjectAccessReview
 * (answered with a SubjectAccessReviewResponse; no user and no groups means the requester),
 * ResourceAccessReview and LocalResourceAccessReview (who may: a ResourceAccessReviewResponse),
 * SelfSubjectRulesReview and SubjectRulesReview (the rules in the request's namespace). Their
 * attributes sit at the top level (OpenShift's Action: resourceAPIGroup, resource, resourceName…).
 */
import { badRequest } from '../../api/errors.js';
import type { KubeObject } from '../../api/meta.js';
import type { PolicyRule } from '../../api/rbac-v1.js';
import { nonResourceAttributes, resourceAttributes, type Attributes } from '../authorization.js';
import type { ReviewAnswer, Strategy } from '../definition.js';
import type { UserInfo } from '../rest.js';
import { arr, obj, str, type Obj } from './common.js';
import { decide, requester } from './reviews.js';

const Group = 'authorization.openshift.io';
const ApiVersion = `${Group}/v1`;

/** util.ToDefaultAuthorizationAttributes: `resource` may carry `/subresource`. */
const actionAttributes = (user: UserInfo, namespace: string, a: Obj): Attributes => {
  if (a.isNonResourceURL === true) return nonResourceAttributes(user, str(a.verb), str(a.path));
  const [resource = '', subresource = ''] = str(a.resource).split(/\/(.*)/s);
  return resourceAttributes(user, str(a.verb), {
    namespace, apiGroup: str(a.resourceAPIGroup), apiVersion: str(a.resourceAPIVersion), resource, subresource, name: str(a.resourceName),
  });
};

const groupsOf = (v: unknown): string[] => arr(v).filter((g): g is string => typeof g === 'string');

/** The namespace asked about: the path's for the Local reviews (which must not name another). */
function namespaceOf(o: KubeObject): string {
  const fromPath = o.metadata.namespace;
  if (fromPath === undefined) return str(o.namespace);
  if (str(o.namespace) && str(o.namespace) !== fromPath) throw badRequest(`namespace: Invalid value: ${JSON.stringify(str(o.namespace))}: namespace must be: ${fromPath}`);
  return fromPath;
}

const answerAccess: ReviewAnswer = async (o, services, ctx) => {
  const namespace = namespaceOf(o);
  const asked = str(o.user) || groupsOf(o.groups).length > 0;
  const user = asked ? { name: str(o.user), uid: '', groups: groupsOf(o.groups) } : requester(ctx.user);
  const { decision, reason, evaluationError } = await decide(services, actionAttributes(user, namespace, o));
  return {
    kind: 'SubjectAccessReviewResponse', apiVersion: ApiVersion, metadata: {},
    ...(namespace && { namespace }), allowed: decision === 'Allow', ...(reason && { reason }), ...(evaluationError && { evaluationError }),
  };
};

const answerWho: ReviewAnswer = (o, services, ctx) => {
  const namespace = namespaceOf(o);
  const found = services.authorizer?.allowedSubjects?.(actionAttributes(requester(ctx.user), namespace, o)) ?? { users: [], groups: [] };
  // `evalutionError` is OpenShift's own spelling of the field.
  return { kind: 'ResourceAccessReviewResponse', apiVersion: ApiVersion, metadata: {}, ...(namespace && { namespace }), users: found.users, groups: found.groups, evalutionError: '' };
};

/** OpenShift's PolicyRule: the RBAC one plus attributeRestrictions (none here). */
const openshiftRule = (r: PolicyRule): Obj => ({
  verbs: r.verbs ?? [], apiGroups: r.apiGroups ?? null, resources: r.resources ?? null,
  ...(r.resourceNames?.length && { resourceNames: r.resourceNames }), ...(r.nonResourceURLs?.length && { nonResourceURLs: r.nonResourceURLs }),
});

const rulesAnswer = (user: UserInfo): ReviewAnswer => (o, services) => {
  const namespace = o.metadata.namespace ?? '';
  const found = services.authorizer?.rulesFor?.(user, namespace);
  const status = { rules: (found?.rules ?? []).map(openshiftRule), ...(found?.evaluationError && { evaluationError: found.evaluationError }) };
  return { ...o, status };
};

const answerSelfRules: ReviewAnswer = (o, services, ctx) => rulesAnswer(requester(ctx.user))(o, services, ctx);

const answerSubjectRules: ReviewAnswer = (o, services, ctx) => {
  const s = obj(o.spec);
  if (!str(s.user) && groupsOf(s.groups).length === 0) throw badRequest('spec.user: Required value: at least one of user or groups must be specified');
  return rulesAnswer({ name: str(s.user), uid: '', groups: groupsOf(s.groups) })(o, services, ctx);
};

const none: Strategy = {};

export const openshiftReviewKinds: Readonly<Record<string, { strategy: Strategy; answer: ReviewAnswer }>> = {
  [`${Group}/SubjectAccessReview`]: { strategy: none, answer: answerAccess },
  [`${Group}/LocalSubjectAccessReview`]: { strategy: none, answer: answerAccess },
  [`${Group}/ResourceAccessReview`]: { strategy: none, answer: answerWho },
  [`${Group}/LocalResourceAccessReview`]: { strategy: none, answer: answerWho },
  [`${Group}/SelfSubjectRulesReview`]: { strategy: none, answer: answerSelfRules },
  [`${Group}/SubjectRulesReview`]: { strategy: none, answer: answerSubjectRules },
};
