/**
 * The review kinds of authorization.k8s.io and authentication.k8s.io: questions posted as objects,
 * answered in their status and never stored, as Kubernetes' SubjectAccessReview and TokenReview REST
 * storage does. This server has no RBAC: every authenticated request is allowed, so an access review
 * says "allowed" for any authenticated subject, which is the truth about this server. `kubectl auth
 * can-i` reads these answers.
 */
import type { KubeObject } from '../../api/meta.js';
import type { ReviewAnswer, Services, Strategy } from '../definition.js';
import { badRequest } from '../../api/errors.js';
import { invalidValue, required, type FieldError } from '../generic/validation.js';
import { arr, obj, spec, str, type Obj } from './common.js';

const Allowed = 'cluster-api allows every authenticated user every request';

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

/** The verdict on a subject: only an unauthenticated one is refused here (with 401, so not allowed). */
function verdict(user: string, groups: readonly string[]): Obj {
  const anonymous = user === 'system:anonymous' || groups.includes('system:unauthenticated');
  return anonymous ? { allowed: false, reason: 'cluster-api refuses unauthenticated requests' } : { allowed: true, reason: Allowed };
}

/** The requester passed authentication to get here (or the server serves anonymous requests): allowed. */
const answerSelf: ReviewAnswer = () => ({ allowed: true, reason: Allowed });

const answerSubject: ReviewAnswer = (o) => verdict(str(spec(o).user), groupsOf(spec(o)));

const answerLocalSubject: ReviewAnswer = (o, services, ctx) => {
  const namespace = o.metadata.namespace ?? '';
  if (str(obj(spec(o).resourceAttributes).namespace) !== namespace)
    throw badRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`);
  return answerSubject(o, services, ctx);
};

/** TokenReview: who the token is, by the same authenticator every request goes through. */
const answerToken: ReviewAnswer = async (o: KubeObject, services: Services) => {
  const token = str(spec(o).token);
  if (!token) throw badRequest('token is required for TokenReview in authentication');
  const asked = arr(spec(o).audiences).filter((a): a is string => typeof a === 'string');
  const found = await services.reviewToken?.(token, asked.length > 0 ? asked : undefined);
  if (!found) return { authenticated: false, user: {} };
  const { user, audiences } = found;
  return { authenticated: true, user: { username: user.name, uid: user.uid, groups: user.groups }, audiences };
};

/** SelfSubjectReview: who the requester is (`kubectl auth whoami`); anonymous when the server authenticates nobody. */
const answerSelfSubject: ReviewAnswer = (_o, _services, ctx) => {
  const user = ctx.user;
  return { userInfo: user ? { username: user.name, uid: user.uid, groups: user.groups } : { username: 'system:anonymous', groups: ['system:unauthenticated'] } };
};

/** Review rules by `group/Kind`; the OpenShift reviews have none and answer as posted. */
export const reviewKinds: Readonly<Record<string, { strategy: Strategy; answer: ReviewAnswer }>> = {
  'authorization.k8s.io/SelfSubjectAccessReview': { strategy: selfSubjectAccessReview, answer: answerSelf },
  'authorization.k8s.io/SubjectAccessReview': { strategy: subjectAccessReview, answer: answerSubject },
  'authorization.k8s.io/LocalSubjectAccessReview': { strategy: localSubjectAccessReview, answer: answerLocalSubject },
  'authentication.k8s.io/TokenReview': { strategy: {}, answer: answerToken },
  'authentication.k8s.io/SelfSubjectReview': { strategy: {}, answer: answerSelfSubject },
};
