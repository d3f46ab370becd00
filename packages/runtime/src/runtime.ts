/**
 * The state one served function shares across requests, built once at start-up: the resolved
 * options, the logger, CORS headers, metrics and the counters shutdown and readiness read.
 */
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { placeDefaults, resolveOptions } from './config.js';
import { corsPolicy, createCors, type Cors } from './cors.js';
import { Breaker } from './breaker.js';
import { InFlight } from './inflight.js';
import { LoadError, toFunctionModule } from './loader.js';
import { createLogger, createRequestLogger, type RequestLogger, type RuntimeLogger } from './logger.js';
import { Metrics } from './metrics.js';
import type { FunctionModule, Handler, LoadedFunction, Options } from './types.js';

export interface RuntimeState {
  shuttingDown: boolean;
  /** Latest measured event-loop delay, ms. */
  loopDelay: number;
}

export interface Runtime {
  readonly fn: LoadedFunction;
  readonly options: Options;
  readonly logger: RuntimeLogger;
  readonly requestLogger: RequestLogger | undefined;
  readonly cors: Cors;
  readonly metrics: Metrics;
  readonly state: RuntimeState;
  readonly inflight: InFlight;
  /** The containerConcurrency limit, when there is one. */
  readonly breaker: Breaker | undefined;
  readonly includeRaw: boolean;
  /** faas-js-runtime 4's behaviour where the spec differs from it (FUNC_COMPAT=faas-js-runtime). */
  readonly compat: boolean;
  /** Resolves once `init` has finished; requests wait for it. */
  ready: Promise<void> | undefined;
  /** Calls the function's `shutdown` at most once. */
  shutdown(): Promise<void>;
}

/** The name this package is installed under: `faas-js-runtime` after `npm install faas-js-runtime@npm:@func/runtime`. */
const INSTALLED_AS = basename(dirname(dirname(fileURLToPath(import.meta.url))));

/** The defaults that depend on where this process runs (config.ts placeDefaults). */
export function defaultsHere(env: Record<string, string | undefined>): Partial<Options> {
  return placeDefaults(env, INSTALLED_AS);
}

/** Accepts a bare handler or a Function object; rejects anything else with the reason. */
export function asFunctionModule(fn: Handler | FunctionModule | LoadedFunction): LoadedFunction {
  if (typeof fn === 'function') return { handle: fn };
  if (fn && typeof fn === 'object' && 'source' in fn) return fn;
  try {
    return toFunctionModule(fn, 'the function passed to start()');
  } catch (err) {
    throw new TypeError((err as LoadError).message);
  }
}

export interface RuntimeInit {
  options?: Partial<Options>;
  env?: Record<string, string | undefined>;
  yaml?: unknown;
  /** Defaults of the caller (e.g. dev's log level); every other source overrides them. */
  defaults?: Partial<Options>;
  destination?: NodeJS.WritableStream;
}

export function createRuntime(input: Handler | FunctionModule, init: RuntimeInit = {}): Runtime {
  const fn = asFunctionModule(input);
  const cors = corsPolicy(fn);
  const env = init.env ?? process.env;
  const fnOptions = { logLevel: fn.logLevel, includeRaw: fn.includeRaw, corsExposeHeaders: cors.exposeHeaders.length > 0 ? cors.exposeHeaders.join(', ') : undefined };
  const defaults = { ...defaultsHere(env), ...init.defaults };
  const options = resolveOptions({ cli: init.options, env, fn: fnOptions, yaml: init.yaml, defaults });
  const logger = createLogger(options.logLevel, init.destination);
  let shutdownCalled: Promise<void> | undefined;
  return {
    fn,
    options,
    logger,
    requestLogger: createRequestLogger(logger),
    cors: createCors(cors, options.corsExposeHeaders === '' ? [] : options.corsExposeHeaders.split(', ')),
    metrics: new Metrics(),
    state: { shuttingDown: false, loopDelay: 0 },
    inflight: new InFlight(),
    breaker: options.containerConcurrency > 0 ? new Breaker(options.containerConcurrency) : undefined,
    includeRaw: options.includeRaw,
    compat: options.compat === 'faas-js-runtime',
    ready: undefined,
    shutdown() {
      shutdownCalled ??= Promise.resolve().then(() => fn.shutdown?.()).then(() => undefined);
      return shutdownCalled;
    },
  };
}
