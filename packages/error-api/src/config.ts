/**
 * The service's settings, one table resolved from the environment by a pure function. The runtime's
 * CLI owns the command line, so a function is configured through env (or func.yaml `envs`).
 */

export const DEFAULT_SCOPE = 'errors:read';

/** Where the token-verification key comes from. `dev` = a random secret made at start-up. */
export type KeySource =
  | { kind: 'secret'; secret: string }
  | { kind: 'pem'; file: string }
  | { kind: 'jwks'; file: string }
  | { kind: 'dev' };

export interface Config {
  key: KeySource;
  issuer?: string;
  audience?: string[];
  scope: string;
  /** Absolute base URL without trailing slash; unset = derived from each request. */
  baseUrl?: string;
  devMode: boolean;
  cacheMaxAge: number;
  clockToleranceSeconds: number;
  /** How long a verified token is remembered (never past its exp); 0 = verify every request. */
  tokenCacheSeconds: number;
}

/** Names of the variables, in one place so README, tests and errors agree. */
export const Env = {
  secret: 'ERROR_API_JWT_SECRET',
  publicKeyFile: 'ERROR_API_JWT_PUBLIC_KEY_FILE',
  jwksFile: 'ERROR_API_JWKS_FILE',
  issuer: 'ERROR_API_JWT_ISSUER',
  audience: 'ERROR_API_JWT_AUDIENCE',
  scope: 'ERROR_API_REQUIRED_SCOPE',
  baseUrl: 'ERROR_API_BASE_URL',
  devMode: 'ERROR_API_DEV_MODE',
  cacheMaxAge: 'ERROR_API_CACHE_MAX_AGE',
  clockTolerance: 'ERROR_API_CLOCK_TOLERANCE',
  tokenCache: 'ERROR_API_TOKEN_CACHE_SECONDS',
} as const;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** HS256 needs a key at least as long as its hash (RFC 7518 §3.2). */
const MIN_SECRET_BYTES = 32;
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

type EnvMap = Readonly<Record<string, string | undefined>>;

const nonEmpty = (v: string | undefined): string | undefined => (v === undefined || v.trim() === '' ? undefined : v.trim());

const flag = (v: string | undefined): boolean => ['1', 'true', 'yes', 'on'].includes((v ?? '').trim().toLowerCase());

const integer = (env: EnvMap, name: string, fallback: number): number => {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(raw)) throw new ConfigError(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
};

const keySource = (env: EnvMap, devMode: boolean): KeySource => {
  const secret = env[Env.secret] === undefined || env[Env.secret] === '' ? undefined : env[Env.secret];
  const pem = nonEmpty(env[Env.publicKeyFile]);
  const jwks = nonEmpty(env[Env.jwksFile]);
  const given = [secret && Env.secret, pem && Env.publicKeyFile, jwks && Env.jwksFile].filter(Boolean);
  if (given.length > 1) throw new ConfigError(`set only one of ${given.join(', ')}`);
  if (secret !== undefined) {
    if (Buffer.byteLength(secret) < MIN_SECRET_BYTES) {
      throw new ConfigError(`${Env.secret} must be at least ${MIN_SECRET_BYTES} bytes long`);
    }
    return { kind: 'secret', secret };
  }
  if (devMode && given.length > 0) throw new ConfigError(`${Env.devMode} signs its token itself: unset ${given[0]}`);
  if (pem) return { kind: 'pem', file: pem };
  if (jwks) return { kind: 'jwks', file: jwks };
  if (devMode) return { kind: 'dev' };
  throw new ConfigError(
    `no token-verification key: set ${Env.secret}, ${Env.publicKeyFile} or ${Env.jwksFile} (or ${Env.devMode}=1 for local use)`,
  );
};

const baseUrl = (raw: string | undefined): string | undefined => {
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${Env.baseUrl} must be an absolute URL, got ${JSON.stringify(raw)}`);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`${Env.baseUrl} must be an http(s) URL without credentials, query or fragment`);
  }
  return url.href.replace(/\/+$/, '');
};

export const resolveConfig = (env: EnvMap): Config => {
  const devMode = flag(env[Env.devMode]);
  const scope = nonEmpty(env[Env.scope]) ?? DEFAULT_SCOPE;
  if (!SCOPE_TOKEN.test(scope)) throw new ConfigError(`${Env.scope} must be one scope token, got ${JSON.stringify(scope)}`);
  const audience = nonEmpty(env[Env.audience])
    ?.split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  return {
    key: keySource(env, devMode),
    issuer: nonEmpty(env[Env.issuer]),
    audience: audience?.length ? audience : undefined,
    scope,
    baseUrl: baseUrl(nonEmpty(env[Env.baseUrl])),
    devMode,
    cacheMaxAge: integer(env, Env.cacheMaxAge, 3600),
    clockToleranceSeconds: integer(env, Env.clockTolerance, 5),
    tokenCacheSeconds: integer(env, Env.tokenCache, 60),
  };
};
