/**
 * Impersonation (k8s.io/apiserver's WithImpersonation; `kubectl --as`, `--as-group`, `--as-uid`):
 * the `Impersonate-User`, `-Group`, `-Uid` and `-Extra-<key>` headers make the request act as
 * another user, once the requester is allowed the `impersonate` verb on each of them (users, groups,
 * serviceaccounts, authentication.k8s.io uids and userextras/<key>). The request is then
 * authorized, and served, as the impersonated user.
 */
import type { IncomingMessage } from 'node:http';
import { badRequest } from '../api/errors.js';
import { resourceAttributes, type Attributes, type Authorizer } from '../registry/authorization.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../registry/generic/validation.js';
import { ServiceAccountPrefix } from '../registry/rbac/resolver.js';
import type { UserInfo } from '../registry/rest.js';
import { forbiddenError } from './forbidden.js';

const ExtraPrefix = 'impersonate-extra-';
const Authenticated = 'system:authenticated';
const Unauthenticated = 'system:unauthenticated';
const Anonymous = 'system:anonymous';

/** serviceaccount.SplitUsername: `system:serviceaccount:<ns>:<name>` with a valid namespace and name. */
const serviceAccountOf = (name: string): { namespace: string; name: string } | undefined => {
  if (!name.startsWith(ServiceAccountPrefix)) return undefined;
  const parts = name.slice(ServiceAccountPrefix.length).split(':');
  if (parts.length !== 2 || isDNS1123Label(parts[0]!).length > 0 || isDNS1123Subdomain(parts[1]!).length > 0) return undefined;
  return { namespace: parts[0]!, name: parts[1]! };
};

/** Whether a request asks to impersonate anyone: a header scan that allocates nothing when none does. */
export function asksImpersonation(req: IncomingMessage): boolean {
  for (const name in req.headers) if (name.startsWith('impersonate-')) return true;
  return false;
}

/** The user the request acts as; throws 403 when a step is not allowed, 400 for groups or extras without a user. */
export function impersonate(req: IncomingMessage, requestor: UserInfo, authorizer: Authorizer): UserInfo {
  const headers = req.headersDistinct;
  const asUser = headers['impersonate-user']?.[0] ?? '';
  const groups = headers['impersonate-group'] ?? [];
  const uid = headers['impersonate-uid']?.[0];
  const extras = Object.keys(headers).filter((h) => h.startsWith(ExtraPrefix));
  if (!asUser) {
    if (groups.length > 0 || uid !== undefined || extras.length > 0)
      throw badRequest('requested Impersonate-Group, Impersonate-Uid or Impersonate-Extra-* without impersonating a user (Impersonate-User)');
    return requestor;
  }
  const allow = (fields: Parameters<typeof resourceAttributes>[2]): void => {
    const attrs: Attributes = resourceAttributes(requestor, 'impersonate', fields);
    const found = authorizer.authorize(attrs);
    if (found.decision !== 'Allow') throw forbiddenError(attrs, found.reason);
  };
  const sa = serviceAccountOf(asUser);
  if (sa) allow({ apiVersion: 'v1', resource: 'serviceaccounts', namespace: sa.namespace, name: sa.name });
  else allow({ apiVersion: 'v1', resource: 'users', name: asUser });
  for (const g of groups) allow({ apiVersion: 'v1', resource: 'groups', name: g });
  const extra: Record<string, string[]> = {};
  for (const header of extras) {
    const key = unescape(header.slice(ExtraPrefix.length));
    for (const value of headers[header] ?? []) allow({ apiGroup: 'authentication.k8s.io', apiVersion: 'v1', resource: 'userextras', subresource: key, name: value });
    extra[key] = headers[header] ?? [];
  }
  if (uid !== undefined) allow({ apiGroup: 'authentication.k8s.io', apiVersion: 'v1', resource: 'uids', name: uid });
  const asGroups = groups.length > 0 || !sa ? [...groups] : ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`];
  if (asUser === Anonymous) {
    if (!asGroups.includes(Unauthenticated)) asGroups.push(Unauthenticated);
  } else if (!asGroups.includes(Authenticated) && !asGroups.includes(Unauthenticated)) asGroups.push(Authenticated);
  return { name: asUser, uid: uid ?? '', groups: asGroups, ...(extras.length > 0 && { extra }) };
}

/** Extra keys travel percent-encoded in header names (url.PathUnescape); a malformed escape stays as sent. */
const unescape = (key: string): string => {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
};
