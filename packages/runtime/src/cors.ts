/**
 * CORS. Without a `cors()` member every origin is allowed (`*`), as faas-js-runtime does and as
 * browser-called functions expect. `cors()` returns the allowed origins (a list, or a
 * comma-separated string, as in faas-js-runtime) or a CorsConfig that also names the response
 * headers a browser script may read (Access-Control-Expose-Headers: ETag, WWW-Authenticate, Allow…
 * are hidden from it otherwise). It is read once at start-up; header lists are built once per
 * origin and reused, never per request. They are plain arrays, read-only by type only: node:http
 * reads a frozen array's elements through a generic keyed load on every writeHead (callgrind: about
 * 1,400 more instructions per response than a plain array).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { headerNames, OptionError, stringList } from './config.js';
import type { CorsConfig, FunctionModule } from './types.js';

export const ALLOWED_METHODS = 'OPTIONS, GET, DELETE, POST, PUT, HEAD, PATCH';
const DEFAULT_MAX_AGE = 600;

export interface Cors {
  /** Flat [name, value, …] pairs to add to a response for this request. */
  headers(req: IncomingMessage): readonly string[];
  /** True when the request is a CORS preflight, which the runtime answers itself. */
  isPreflight(req: IncomingMessage): boolean;
  preflight(req: IncomingMessage, res: ServerResponse): void;
}

/** cors() normalised: undefined origins = any origin. */
export interface CorsPolicy {
  origins: ReadonlySet<string> | undefined;
  exposeHeaders: readonly string[];
  maxAge: number;
}

const MEMBER = "the function's cors() member";

function asConfig(raw: unknown): CorsConfig {
  if (typeof raw === 'string' || Array.isArray(raw)) return { origins: raw };
  if (raw !== null && typeof raw === 'object') return raw as CorsConfig;
  throw new OptionError(`${MEMBER} must return origins (a string or an array of strings) or { origins, exposeHeaders, maxAge }, got ${JSON.stringify(raw) ?? typeof raw}`);
}

/** Calls `cors()` once and checks what it returned. */
export function corsPolicy(fn: FunctionModule): CorsPolicy {
  if (!fn.cors) return { origins: undefined, exposeHeaders: [], maxAge: DEFAULT_MAX_AGE };
  const config = asConfig(fn.cors());
  const unknown = Object.keys(config).find((k) => !['origins', 'exposeHeaders', 'maxAge'].includes(k));
  if (unknown !== undefined) throw new OptionError(`${MEMBER} returned an unknown field "${unknown}" (known: origins, exposeHeaders, maxAge)`);
  const origins = new Set(stringList(config.origins ?? '*', `${MEMBER}'s origins`));
  const maxAge = config.maxAge ?? DEFAULT_MAX_AGE;
  if (!Number.isInteger(maxAge) || maxAge < 0) throw new OptionError(`${MEMBER}'s maxAge must be an integer ≥ 0 (seconds), got ${JSON.stringify(maxAge)}`);
  return {
    origins: origins.has('*') ? undefined : origins,
    exposeHeaders: headerNames(config.exposeHeaders, `${MEMBER}'s exposeHeaders`),
    maxAge,
  };
}

/** `exposeHeaders` is the resolved option (FUNC_CORS_EXPOSE_HEADERS, else the member's list). */
export function createCors(policy: CorsPolicy, exposeHeaders: readonly string[] = policy.exposeHeaders): Cors {
  const expose = exposeHeaders.length > 0 ? ['access-control-expose-headers', exposeHeaders.join(', ')] : [];
  const anyOrigin: readonly string[] = ['access-control-allow-origin', '*', 'access-control-allow-methods', ALLOWED_METHODS, ...expose];
  const noOrigin: readonly string[] = ['access-control-allow-methods', ALLOWED_METHODS, 'vary', 'origin'];
  const perOrigin = new Map<string, readonly string[]>();
  const allowed = policy.origins;
  const headers = (req: IncomingMessage): readonly string[] => {
    if (!allowed) return anyOrigin;
    const origin = req.headers.origin;
    if (origin === undefined || !allowed.has(origin)) return noOrigin;
    let h = perOrigin.get(origin);
    if (!h) {
      h = ['access-control-allow-origin', origin, 'access-control-allow-methods', ALLOWED_METHODS, 'vary', 'origin', ...expose];
      perOrigin.set(origin, h);
    }
    return h;
  };
  const maxAge = String(policy.maxAge);
  return {
    headers,
    isPreflight: (req) => req.method === 'OPTIONS' && (req.headers['access-control-request-method'] !== undefined || req.headers.origin !== undefined),
    preflight(req, res) {
      const requested = req.headers['access-control-request-headers'];
      res.writeHead(204, [...headers(req), 'access-control-allow-headers', requested ?? '*', 'access-control-max-age', maxAge]);
      res.end();
    },
  };
}
