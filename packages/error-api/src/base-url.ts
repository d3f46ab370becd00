/**
 * The base URL that `type` links are built on. A configured ERROR_API_BASE_URL wins; otherwise the
 * request's Host and X-Forwarded-Proto. Both are client-controlled, so they are validated before
 * they reach a URL: an unusable Host makes the request a 400, never a link to somewhere else.
 */
import type { IncomingHttpHeaders } from 'node:http';

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*\\.?|\\[[0-9A-Fa-f:.]{2,45}\\])(?::\\d{1,5})?$`);

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** `https` only when the proxy says so or the socket is TLS; any other forwarded value is ignored. */
const protocol = (headers: IncomingHttpHeaders, encrypted: boolean): string => {
  const forwarded = first(headers['x-forwarded-proto'])?.split(',')[0]?.trim().toLowerCase();
  if (forwarded === 'http' || forwarded === 'https') return forwarded;
  return encrypted ? 'https' : 'http';
};

/** `undefined` when the request carries no usable Host (HTTP/1.0 without one, or a forged value). */
export const requestBaseUrl = (headers: IncomingHttpHeaders, encrypted: boolean): string | undefined => {
  const host = headers.host;
  if (host === undefined || !HOST.test(host)) return undefined;
  return `${protocol(headers, encrypted)}://${host.toLowerCase()}`;
};
