/**
 * The review kinds of authorization.k8s.io and authentication.k8s.io: questions posted as objects,
 * answered and never stored, as Kubernetes' SubjectAccessReview, SelfSubjectRulesReview and
 * TokenReview REST storage does. Access reviews ask the server's authorizer chain (the one every
 * request goes through), so `kubectl auth can-i` and `--list` say what the server will do. A registry
 * run without an authorizer refuses nothing, and its reviews say so.
 */
import type { KubeObject } from '../../api/meta.js';
import { badRequest } from '../../api/errors.js';
import { decideFresh, nonResourceAttributes, resourceAttributes, type Attributes, type Authorization } from '../authorization.js';
import type { ReviewAnswer, Services, Strategy } from '../definition.js';
import type { UserInfo } from '../rest.js';
import { invalidValue, required, type FieldError } from '../generic/validation.js';
import { arr, obj, spec, str, type Obj } from './common.js';

/** ValidateSubjectAccessReviewSpec's rule: exactly one of the two attribute sets. */
function oneAttributeSet(s: Obj): FieldError[] {
  const resource = s.resourceAttributes !== undefined && s.resourceAttributes !== null;
  const nonResource = s.nonResourceAttributes !== undefined && s.nonResourceAttributes !== null;
  if (resource && nonResource)
    return [invalidValue('spec.nonResourceAttributes', s.nonResourceAttributes, 'cannot be specified in combination with resourceAttributes')];
  if (!resource && !nonResource) return [required('spec.resourceAttributes', 'exactly one of nonResourceAttributes or resourceAttributes must be specified')];
  return [];
}

/** v1beta1 names the list `group`, v1 `groups`. */
const groupsOf = (s: Obj): string[] => arr(s.groups ?? s.group).filter((g): g is string => typeof g === 'string');

const selfSubjectAccessReview: Strategy = { validate: (o) => oneAttributeSet(spec(o)) };

const subjectAccessReview: Strategy = {
  validate(o) {
    const s = spec(o);
    const errs = oneAttributeSet(s);
    if (!str(s.user) && groupsOf(s).length === 0) errs.push(invalidValue('spec.user', str(s.user), 'at least one of user or group must be specified'));
    return errs;
  },
};

const localSubjectAccessReview: Strategy = {
  validate(o) {
    const errs = subjectAccessReview.validate!(o);
    if (spec(o).nonResourceAttributes) errs.push(invalidValue('spec.nonResourceAttributes', spec(o).nonResourceAttributes, 'disallowed on this kind of request'));
    return errs;
  },
};

/** authorizationutil.ResourceAttributesFrom / NonResourceAttributesFrom. */
export function reviewAttributes(user: UserInfo, s: Obj): Attributes {
  const r = obj(s.resourceAttributes);
  if (!s.resourceAttributes) return nonResourceAttributes(user, str(obj(s.nonResourceAttributes).verb), str(obj(s.nonResourceAttributes).path));
  return resourceAttributes(user, str(r.verb), {
    namespace: str(r.namespace), apiGroup: str(r.group), apiVersion: str(r.version) || '*', resource: str(r.resource), subresource: str(r.subresource), name: str(r.name),
  });
}

/** The chain's decision on `attrs` (a denial only once the authorizer is up to the store); without an authorizer everything is allowed. */
export const decide = async (services: Services, attrs: Attributes): Promise<Authorization> =>
  services.authorizer ? decideFresh(services.authorizer, attrs) : { decision: 'Allow', reason: 'no authorizer: every authenticated request is allowed' };

/** SubjectAccessReviewStatus as Kubernetes writes it (denied, reason, evaluationError only when set). */
const accessStatus = ({ decision, reason, evaluationError }: Authorization): Obj => ({
  allowed: decision === 'Allow',
  ...(decision === 'Deny' && { denied: true }),
  ...(reason && { reason }),
  ...(evaluationError && { evaluationError }),
});

/** The user a SubjectAccessReview asks about. */
const subjectOf = (s: Obj): UserInfo => {
  const extra = Object.fromEntries(Object.entries(obj(s.extra)).map(([k, v]) => [k, arr(v).map(String)]));
  return { name: str(s.user), uid: str(s.uid), groups: groupsOf(s), ...(Object.keys(extra).length > 0 && { extra }) };
};

/** The requester; an anonymous request only where the server authenticates nobody. */
export const requester = (user: UserInfo | undefined): UserInfo => user ?? { name: 'system:anonymous', uid: '', groups: ['system:unauthenticated'] };

const answerSelf: ReviewAnswer = async (o, services, ctx) => ({ ...o, status: accessStatus(await decide(services, reviewAttributes(requester(ctx.user), spec(o)))) });

const answerSubject: ReviewAnswer = async (o, services) => ({ ...o, status: accessStatus(await decide(services, reviewAttributes(subjectOf(spec(o)), spec(o)))) });

const answerLocalSubject: ReviewAnswer = (o, services, ctx) => {
  const namespace = o.metadata.namespace ?? '';
  if (str(obj(spec(o).resourceAttributes).namespace) !== namespace)
    throw badRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`);
  return answerSubject(o, services, ctx);
};

/** SelfSubjectRulesReview: what the requester may do in spec.namespace, from every authorizer that can say. */
const answerSelfRules: ReviewAnswer = (o, services, ctx) => {
  const namespace = str(spec(o).namespace);
  if (!namespace) throw badRequest('no namespace on request');
  const found = services.authorizer?.rulesFor?.(requester(ctx.user), namespace) ?? { rules: [], incomplete: true };
  const resourceRules = found.rules.filter((r) => (r.resources ?? []).length > 0)
    .map((r) => ({ verbs: r.verbs ?? [], apiGroups: r.apiGroups ?? [], resources: r.resources ?? [], ...(r.resourceNames?.length && { resourceNames: r.resourceNames }) }));
  const nonResourceRules = found.rules.filter((r) => (r.nonResourceURLs ?? []).length > 0).map((r) => ({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs }));
  const status = { resourceRules, nonResourceRules, incomplete: found.incomplete, ...(found.evaluationError && { evaluationError: found.evaluationError }) };
  return { ...o, status };
};

/** TokenReview: who the token is, by the same authenticator every request goes through. */
const answerToken: ReviewAnswer = async (o: KubeObject, services: Services) => {
  const token = str(spec(o).token);
  if (!token) throw badRequest('token is required for TokenReview in authentication');
  const asked = arr(spec(o).audiences).filter((a): a is string => typeof a === 'string');
  const found = await services.reviewToken?.(token, asked.length > 0 ? asked : undefined);
  if (!found) return { ...o, status: { authenticated: false, user: {} } };
  const { user, audiences } = found;
  return { ...o, status: { authenticated: true, user: { username: user.name, uid: user.uid, groups: user.groups }, audiences } };
};

/** SelfSubjectReview: who the requester is (`kubectl auth whoami`). */
const answerSelfSubject: ReviewAnswer = (o, _services, ctx) => {
  const { name, uid, groups, extra } = requester(ctx.user);
  return { ...o, status: { userInfo: { username: name, ...(uid && { uid }), groups, ...(extra && { extra }) } } };
};

/** Review rules by `group/Kind`. */
export const reviewKinds: Readonly<Record<string, { strategy: Strategy; answer: ReviewAnswer }>> = {
  'authorization.k8s.io/SelfSubjectAccessReview': { strategy: selfSubjectAccessReview, answer: answerSelf },
  'authorization.k8s.io/SubjectAccessReview': { strategy: subjectAccessReview, answer: answerSubject },
  'authorization.k8s.io/LocalSubjectAccessReview': { strategy: localSubjectAccessReview, answer: answerLocalSubject },
  'authorization.k8s.io/SelfSubjectRulesReview': { strategy: {}, answer: answerSelfRules },
  'authentication.k8s.io/TokenReview': { strategy: {}, answer: answerToken },
  'authentication.k8s.io/SelfSubjectReview': { strategy: {}, answer: answerSelfSubject },
};
