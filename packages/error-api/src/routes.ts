/**
 * The request path, top to bottom: route → method → base URL → token → parameter → catalog.
 * Routing and method checks come before the token so that a 404 or 405 means the same thing for
 * every caller; a 304 comes after it, so an unauthenticated caller learns nothing from validators.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Authenticator } from './auth.js';
import { requestBaseUrl } from './base-url.js';
import { ERROR_TYPE_PATTERN, type Catalog } from './catalog.js';
import type { Config } from './config.js';
import { cacheable, problem } from './responses.js';
import type { HttpResponse } from './types.js';

export const API_PREFIX = '/api/v1/error';
export const OPENAPI_PATH = '/openapi.json';
export const ALLOWED_METHODS = ['GET', 'HEAD'] as const;

export type Route = { kind: 'list' } | { kind: 'describe'; param: string } | { kind: 'openapi' };

export const matchRoute = (path: string): Route | undefined => {
  if (path === OPENAPI_PATH) return { kind: 'openapi' };
  if (path === API_PREFIX) return { kind: 'list' };
  if (!path.startsWith(`${API_PREFIX}/`)) return undefined;
  const param = path.slice(API_PREFIX.length + 1);
  return param.includes('/') ? undefined : { kind: 'describe', param };
};

/** What the router needs from a request; the runtime's Context provides all of it. */
export interface RequestView {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  encrypted: boolean;
}

export interface Service {
  config: Config;
  catalog: Catalog;
  auth: Authenticator;
  /** The OpenAPI document, built once. */
  openapi: Record<string, unknown>;
}

/** A repeated header reads as one comma-separated list (RFC 9110 §5.3). */
const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(',') : v);

const decodeParam = (raw: string): string | undefined => {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
};

type CacheHeaders = Parameters<typeof cacheable>[2];

const describe = (svc: Service, base: string, raw: string, inm: string | undefined, cache: CacheHeaders): HttpResponse => {
  const errorType = decodeParam(raw);
  if (errorType === undefined || !ERROR_TYPE_PATTERN.test(errorType)) {
    return problem(base, 400, 'invalid_request', `error_type must match ${ERROR_TYPE_PATTERN.source}`);
  }
  const entry = svc.catalog.get(errorType);
  if (!entry) return problem(base, 404, 'not_found', `No error type named ${errorType}`);
  return cacheable(svc.catalog.describe(entry, base), inm, cache);
};

export const route = async (svc: Service, req: RequestView): Promise<HttpResponse> => {
  const { config } = svc;
  const base = config.baseUrl ?? requestBaseUrl(req.headers, req.encrypted);
  const matched = matchRoute(req.path);
  if (!matched) return problem(base ?? '', 404, 'not_found', 'Not Found');
  if (!(ALLOWED_METHODS as readonly string[]).includes(req.method)) {
    return problem(base ?? '', 405, 'method_not_allowed', `The method ${req.method} is not allowed here`, {
      allow: ALLOWED_METHODS.join(', '),
    });
  }
  const inm = first(req.headers['if-none-match']);
  if (matched.kind === 'openapi') return cacheable(svc.openapi, inm, { 'cache-control': `public, max-age=${config.cacheMaxAge}` });
  if (base === undefined) return problem('', 400, 'invalid_request', 'The Host header is missing or malformed');
  const auth = await svc.auth.authenticate(first(req.headers.authorization));
  if (!auth.ok) return problem(base, auth.status, auth.errorType, auth.detail, { 'www-authenticate': auth.challenge });
  // The body embeds the base URL; when it comes from the request, caches must key on the proxy's scheme too.
  const cache: CacheHeaders = {
    'cache-control': `private, max-age=${config.cacheMaxAge}`,
    ...(config.baseUrl ? {} : { vary: 'X-Forwarded-Proto' }),
  };
  if (matched.kind === 'list') {
    const errors = svc.catalog.entries().map((e) => svc.catalog.describe(e, base));
    return cacheable({ errors }, inm, cache);
  }
  return describe(svc, base, matched.param, inm, cache);
};
