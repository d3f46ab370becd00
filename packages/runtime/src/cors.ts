/**
 * CORS. Without a `cors()` member every origin is allowed (`*`), as faas-js-runtime does and as
 * browser-called functions expect. With one, its list is read once at start-up and only a listed
 * origin is echoed. Header lists are built once per origin and reused, never per request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FunctionModule } from './types.js';

export const ALLOWED_METHODS = 'OPTIONS, GET, DELETE, POST, PUT, HEAD, PATCH';

export interface Cors {
  /** Flat [name, value, …] pairs to add to a response for this request. */
  headers(req: IncomingMessage): readonly string[];
  /** True when the request is a CORS preflight, which the runtime answers itself. */
  isPreflight(req: IncomingMessage): boolean;
  preflight(req: IncomingMessage, res: ServerResponse): void;
}

const ANY_ORIGIN = Object.freeze(['access-control-allow-origin', '*', 'access-control-allow-methods', ALLOWED_METHODS]);
const NO_ORIGIN = Object.freeze(['access-control-allow-methods', ALLOWED_METHODS, 'vary', 'origin']);

function allowList(fn: FunctionModule): Set<string> | undefined {
  if (!fn.cors) return undefined;
  const raw = fn.cors();
  const list = Array.isArray(raw) ? raw : String(raw).split(',');
  const set = new Set(list.map((o) => String(o).trim()).filter(Boolean));
  return set.has('*') ? undefined : set;
}

export function createCors(fn: FunctionModule): Cors {
  const allowed = allowList(fn);
  const perOrigin = new Map<string, readonly string[]>();
  const headers = (req: IncomingMessage): readonly string[] => {
    if (!allowed) return ANY_ORIGIN;
    const origin = req.headers.origin;
    if (origin === undefined || !allowed.has(origin)) return NO_ORIGIN;
    let h = perOrigin.get(origin);
    if (!h) {
      h = Object.freeze(['access-control-allow-origin', origin, 'access-control-allow-methods', ALLOWED_METHODS, 'vary', 'origin']);
      perOrigin.set(origin, h);
    }
    return h;
  };
  return {
    headers,
    isPreflight: (req) => req.method === 'OPTIONS' && (req.headers['access-control-request-method'] !== undefined || req.headers.origin !== undefined),
    preflight(req, res) {
      const requested = req.headers['access-control-request-headers'];
      res.writeHead(204, [...headers(req), 'access-control-allow-headers', requested ?? '*', 'access-control-max-age', '600']);
      res.end();
    },
  };
}
