/**
 * A request as authorization sees it (kube-apiserver's RequestInfo → authorizer.Attributes), and the
 * check app.ts makes between authentication and route resolution: allowed, or a 403 with
 * kube-apiserver's message. Attributes do not depend on what the server serves: an unknown resource
 * is forbidden to whoever may not use it, as in Kubernetes, and 404 only to whoever may.
 */
import type { Attributes, Authorization, Authorizer } from '../registry/authorization.js';
import { decideFresh, nonResourceAttributes } from '../registry/authorization.js';
import { isValidPathSegmentName } from '../registry/generic/validation.js';
import type { UserInfo } from '../registry/rest.js';
import { forbiddenError } from '../auth/forbidden.js';
import type { RequestInfo } from './request-info.js';

/** `metadata.name=x` among a field selector's terms (fields.Selector.RequiresExactMatch). */
const NameTerm = /(?:^|,)metadata\.name==?((?:[^,\\]|\\.)*)(?=,|$)/;

const selectedName = (selector: string | null): string => {
  const found = selector ? NameTerm.exec(selector) : null;
  const name = found ? found[1]!.replace(/\\(.)/g, '$1') : '';
  return name && isValidPathSegmentName(name).length === 0 ? name : '';
};

export function attributesOf(user: UserInfo, info: RequestInfo, method: string, path: string, query: URLSearchParams): Attributes {
  if (info.type !== 'resource') return nonResourceAttributes(user, method.toLowerCase(), path);
  const verb = info.verb ?? '';
  // A list or watch of one object by field selector is about that object: `resourceNames` rules apply.
  const name = info.name ?? (verb === 'list' || verb === 'watch' ? selectedName(query.get('fieldSelector')) : '');
  // `/namespaces/{name}` is inside the namespace it names, so a RoleBinding there grants reading it.
  const namespace = info.namespace ?? (info.plural === 'namespaces' && info.name ? info.name : '');
  // One literal, not resourceAttributes()' spreads: this runs on every request.
  return {
    user,
    verb,
    resourceRequest: true,
    apiGroup: info.group,
    apiVersion: info.version,
    resource: info.plural,
    subresource: info.subresource ?? '',
    namespace,
    name,
    path: '',
  };
}

/**
 * Throws the 403 unless the chain allows the request. Allowed: synchronous. Refused by an authorizer
 * that can refresh: asked again once it has (a promise), and only that answer is final.
 */
export function authorizeRequest(authorizer: Authorizer, user: UserInfo, info: RequestInfo, method: string, path: string, query: URLSearchParams): void | Promise<void> {
  const attrs = attributesOf(user, info, method, path, query);
  const found = decideFresh(authorizer, attrs);
  if (!(found instanceof Promise)) return allowedOr403(attrs, found);
  return found.then((again) => allowedOr403(attrs, again));
}

const allowedOr403 = (attrs: Attributes, found: Authorization): void => {
  if (found.decision !== 'Allow') throw forbiddenError(attrs, found.reason);
};
