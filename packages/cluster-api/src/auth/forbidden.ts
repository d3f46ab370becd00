/**
 * The 403 a denied request gets, worded as kube-apiserver's responsewriters.Forbidden:
 * `pods "x" is forbidden: User "bob" cannot get resource "pods" in API group "" in the namespace "shop"`,
 * `… at the cluster scope`, `forbidden: User "bob" cannot get path "/logs"`, and `: <reason>` after
 * it when the authorizer gave one.
 */
import { forbidden, type ApiError } from '../api/errors.js';
import type { Attributes } from '../registry/authorization.js';

/** Kubernetes escapes these so a message can never read as HTML (quotes stay). */
const sanitize = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const q = JSON.stringify;

export function forbiddenMessage(a: Attributes): string {
  const who = `User ${q(a.user.name)} cannot ${a.verb}`;
  if (!a.resourceRequest) return `${who} path ${q(a.path)}`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const scope = a.namespace ? `in the namespace ${q(a.namespace)}` : 'at the cluster scope';
  return `${who} resource ${q(resource)} in API group ${q(a.apiGroup)} ${scope}`;
}

export function forbiddenError(a: Attributes, reason: string): ApiError {
  const message = sanitize(forbiddenMessage(a));
  const gr = a.resourceRequest ? { group: a.apiGroup, resource: a.resource } : undefined;
  return forbidden(gr, a.name, reason ? `${message}: ${reason}` : message);
}
