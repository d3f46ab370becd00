/**
 * What kube-apiserver's proxy (apimachinery util/proxy: UpgradeAwareHandler, Transport,
 * corsRemovingTransport, over Go's ReverseProxy) changes on the way to a pod and back: the backend
 * path, hop-by-hop headers, the caller's credentials (the API server consumed them), X-Forwarded-*,
 * CORS headers of the backend, and a `Location` pointing into the backend, rewritten to go back
 * through the proxy path. Pure functions; http-proxy.ts does the I/O.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { posix } from 'node:path';

/** Go's ReverseProxy hop-by-hop list; headers named in `Connection` go too. */
const HopByHop = ['connection', 'proxy-connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

/** The backend's CORS answer is not the API server's to give. */
const Cors = ['access-control-allow-credentials', 'access-control-allow-headers', 'access-control-allow-methods', 'access-control-allow-origin'];

/** A path segment as Go's URL.EscapedPath writes it: reserved sub-delimiters stay readable. */
const escapeSegment = (segment: string): string =>
  encodeURIComponent(segment).replace(/%(24|26|2B|2C|3A|3B|3D|40)/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/**
 * The backend path for the segments after `…/proxy` (a final '' is a trailing slash), cleaned as
 * Go's path.Join cleans it ('.' and '..' resolved, never above the root). '' (nothing after `proxy`)
 * is the root asked for without its slash, which kube-apiserver redirects.
 */
export function backendPath(segments: readonly string[]): string {
  if (segments.length === 0) return '';
  const clean: string[] = [];
  for (const s of segments) {
    if (s === '..') clean.pop();
    else if (s !== '.' && s !== '') clean.push(s);
  }
  if (clean.length === 0) return '/';
  return `/${clean.map(escapeSegment).join('/')}${segments[segments.length - 1] === '' ? '/' : ''}`;
}

function dropHopByHop(headers: IncomingHttpHeaders, keep: readonly string[] = []): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { ...headers };
  const named = String(headers.connection ?? '').split(',').map((t) => t.trim().toLowerCase());
  for (const name of [...HopByHop, ...named]) if (name && !keep.includes(name)) delete out[name];
  return out;
}

export interface ForwardContext {
  /** The client's address, appended to X-Forwarded-For. */
  clientIp?: string;
  /** The API path of the backend's root, e.g. `/api/v1/namespaces/ns/pods/web:8080/proxy`. */
  prefix: string;
  /** The backend path being asked for. */
  path: string;
  /** An upgrade (WebSocket to the pod) keeps Connection and Upgrade: the backend must see them. */
  upgrade?: boolean;
}

/** Request headers as the backend gets them. */
export function forwardedRequestHeaders(headers: IncomingHttpHeaders, ctx: ForwardContext): OutgoingHttpHeaders {
  const out = dropHopByHop(headers, ctx.upgrade ? ['connection', 'upgrade'] : []);
  // The API server's authentication filter removes the credentials it used, so no pod ever sees a user's token.
  delete out.authorization;
  for (const name of Object.keys(out)) if (name.startsWith('impersonate-')) delete out[name];
  const prior = headers['x-forwarded-for'];
  if (ctx.clientIp) out['x-forwarded-for'] = prior ? `${String(prior)}, ${ctx.clientIp}` : ctx.clientIp;
  // Node's join keeps a trailing slash, as Go's proxy adds it back after path.Join.
  out['x-forwarded-uri'] = posix.join(ctx.prefix, ctx.path);
  return out;
}

export interface LocationContext {
  /** `host:port` of the backend as addressed. */
  backendHost: string;
  /** The Host the client asked this server by. */
  requestHost?: string;
  prefix: string;
}

/** Response headers as the client gets them. */
export function returnedResponseHeaders(headers: IncomingHttpHeaders, ctx: LocationContext): OutgoingHttpHeaders {
  const out = dropHopByHop(headers);
  for (const name of Cors) delete out[name];
  if (typeof out.location === 'string') out.location = rewriteLocation(out.location, ctx);
  return out;
}

/**
 * apimachinery's Transport.rewriteURL: a Location on the backend itself (no host, the backend's
 * host, or the host the client used) and with an absolute path is moved under the proxy prefix;
 * relative ones and other hosts pass unchanged.
 */
export function rewriteLocation(location: string, ctx: LocationContext): string {
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*:)?(\/\/[^/?#]*)?([^?#]*)(.*)$/s.exec(location)!;
  let scheme = m[1] ?? '';
  let authority = m[2] ?? '';
  const path = m[3]!;
  const host = authority.slice(2).replace(/^.*@/, '');
  if ((host !== '' && host !== ctx.backendHost && host !== ctx.requestHost) || !path.startsWith('/')) return location;
  if (host !== ctx.requestHost) (scheme = ''), (authority = '');
  if (path.startsWith(ctx.prefix)) return scheme + authority + path + m[4];
  return scheme + authority + posix.join(ctx.prefix, path) + m[4];
}
