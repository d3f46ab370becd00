/**
 * The request target in origin form (path and query). Proxies send the absolute form
 * (`GET http://host/orders/7?x=1 HTTP/1.1`, RFC 9112 §3.2.2) and node:http passes it through as
 * req.url; routing, context.path and context.url must see `/orders/7?x=1` either way.
 */
const ABSOLUTE_FORM = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/;

export function originForm(target: string | undefined): string {
  // The common case, a target that already starts with "/", costs one character comparison.
  if (target === undefined || target === '') return '/';
  if (target.charCodeAt(0) === 47) return target;
  const authority = ABSOLUTE_FORM.exec(target);
  if (authority === null) return target;
  const rest = target.slice(authority[0].length);
  return rest.charCodeAt(0) === 47 ? rest : `/${rest}`;
}

/** The path of a request target (no query), whichever form it came in: what routing compares. */
export function pathOf(target: string | undefined): string {
  const url = originForm(target);
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
