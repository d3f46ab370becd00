/**
 * The error-description service as a Function object: `init` loads keys and builds the catalog
 * once; `handle` only routes. A factory, so tests can run several differently-configured instances
 * in one process; index.ts exports the one configured from the environment.
 */
import type { TLSSocket } from 'node:tls';
import type { Context, FunctionModule, LogLevel } from '@func/runtime';
import { Authenticator } from './auth.js';
import { buildCatalog, type Catalog } from './catalog.js';
import { resolveConfig } from './config.js';
import { loadVerifier } from './keys.js';
import { buildOpenApi } from './openapi.js';
import { route, type Service } from './routes.js';
import { mintToken } from './token.js';
import type { RuntimeErrorTable } from './types.js';

export interface ServiceOptions {
  /** Settings source; `process.env` when omitted. Read in `init`, not before. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The runtime's error catalog, merged into the served catalog. */
  runtimeErrors: RuntimeErrorTable;
  /** Where dev mode prints its token (stderr by default, apart from the JSON log on stdout). */
  announce?: (line: string) => void;
  logLevel?: LogLevel;
}

/** A FunctionModule whose optional members are all present. */
export interface ErrorApi extends FunctionModule {
  init: () => Promise<void>;
  handle: (context: Context) => Promise<unknown>;
  liveness: () => string;
  readiness: () => string;
  logLevel: LogLevel;
  /** The served catalog, once `init` has run. */
  catalog: () => Catalog;
}

const DEV_TOKEN_TTL_SECONDS = 12 * 3600;

const announceDevToken = async (svc: Service, secret: Uint8Array, announce: (line: string) => void): Promise<void> => {
  const { scope, issuer, audience } = svc.config;
  const token = await mintToken({ secret, scope, issuer, audience, ttlSeconds: DEV_TOKEN_TTL_SECONDS });
  announce(
    `error-api dev mode: tokens are signed with a random key made at start-up; this one is valid for 12 h:\n` +
      `  Authorization: Bearer ${token}\n`,
  );
};

export const createErrorApi = (options: ServiceOptions): ErrorApi => {
  let svc: Service | undefined;
  const announce = options.announce ?? ((line: string) => process.stderr.write(line));

  const init = async (): Promise<void> => {
    const config = resolveConfig(options.env ?? process.env);
    const verifier = await loadVerifier(config.key);
    const catalog = buildCatalog(options.runtimeErrors);
    const next: Service = { config, catalog, auth: new Authenticator(verifier, config), openapi: buildOpenApi(catalog, config.scope) };
    if (verifier.devSecret) await announceDevToken(next, verifier.devSecret, announce);
    svc = next;
  };

  const handle = async (context: Context): Promise<unknown> => {
    if (!svc) throw Object.assign(new Error('error-api is not initialised'), { statusCode: 503 });
    const response = await route(svc, {
      method: context.method,
      path: context.path,
      headers: context.headers,
      encrypted: (context.req.socket as TLSSocket).encrypted === true,
    });
    if (response.statusCode >= 400) context.log.debug({ status: response.statusCode }, 'error-api request refused');
    return response;
  };

  const readiness = (): string => {
    if (!svc) throw new Error('error-api is not initialised');
    return 'OK';
  };

  const catalog = (): Catalog => {
    if (!svc) throw new Error('error-api is not initialised');
    return svc.catalog;
  };

  return { init, handle, liveness: () => 'OK', readiness, logLevel: options.logLevel ?? 'warn', catalog };
};
