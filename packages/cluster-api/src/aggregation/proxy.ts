/**
 * A request under `/apis/<group>/<version>` of a remote APIService, passed to its backend as
 * kube-aggregator's proxy handler passes it: already authenticated and authorized here, the caller's
 * credentials removed, its identity sent as `X-Remote-User`, `X-Remote-Group` (one per group) and
 * `X-Remote-Extra-<key>` (one per value, the key URL-escaped), over TLS with the front-proxy client
 * certificate. Any X-Remote-* header the client sent is dropped. Watches stream and upgrades pass
 * through (streaming/http-proxy.ts).
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { UserInfo } from '../registry/rest.js';
import type { Upgrade } from '../registry/subresource.js';
import { proxyHttp } from '../streaming/http-proxy.js';
import type { Backend } from './backend.js';
import { ExtraHeaderPrefix, GroupHeader, UserHeader } from './front-proxy.js';

const hostPort = (ip: string, port: number): string => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

/** The headers as the backend gets them: the client's own X-Remote-* gone, the user's identity set. */
export function identityHeaders(headers: OutgoingHttpHeaders, user: UserInfo | undefined): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (!name.toLowerCase().startsWith('x-remote-')) out[name] = value;
  if (!user) return out;
  out[UserHeader] = user.name;
  if (user.groups.length) out[GroupHeader] = [...user.groups];
  for (const [key, values] of Object.entries(user.extra ?? {})) out[`${ExtraHeaderPrefix}${encodeURIComponent(key)}`] = [...values];
  return out;
}

export function proxyToBackend(req: IncomingMessage, res: ServerResponse, path: string, user: UserInfo | undefined, backend: Backend, upgrade: Upgrade | undefined): Promise<void> {
  const { endpoint, tls } = backend;
  return proxyHttp(
    req,
    res,
    { dial: endpoint.dial, scheme: 'https', backendHost: hostPort(endpoint.ip, endpoint.port), path, prefix: '', tls, rewrite: (headers) => identityHeaders(headers, user) },
    upgrade && (() => upgrade.take()),
  );
}
