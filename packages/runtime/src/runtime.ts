/**
 * The state one served function shares across requests, built once at start-up: the resolved
 * options, the logger, CORS headers, metrics and the counters shutdown and readiness read.
 */
import { resolveOptions } from './config.js';
import { corsPolicy, createCors, type Cors } from './cors.js';
import { LoadError, toFunctionModule } from './loader.js';
import { createLogger, createRequestLogger, type RequestLogger, type RuntimeLogger } from './logger.js';
import { Metrics } from './metrics.js';
import type { FunctionModule, Handler, LoadedFunction, Options } from './types.js';

export interface RuntimeState {
  inflight: number;
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
  readonly includeRaw: boolean;
  /** Resolves once `init` has finished; requests wait for it. */
  ready: Promise<void> | undefined;
  /** Calls the function's `shutdown` at most once. */
  shutdown(): Promise<void>;
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
  const fnOptions = { logLevel: fn.logLevel, includeRaw: fn.includeRaw, corsExposeHeaders: cors.exposeHeaders.length > 0 ? cors.exposeHeaders.join(', ') : undefined };
  const options = resolveOptions({ cli: init.options, env: init.env ?? process.env, fn: fnOptions, yaml: init.yaml, defaults: init.defaults });
  const logger = createLogger(options.logLevel, init.destination);
  let shutdownCalled: Promise<void> | undefined;
  return {
    fn,
    options,
    logger,
    requestLogger: createRequestLogger(logger),
    cors: createCors(cors, options.corsExposeHeaders === '' ? [] : options.corsExposeHeaders.split(', ')),
    metrics: new Metrics(),
    state: { inflight: 0, shuttingDown: false, loopDelay: 0 },
    includeRaw: options.includeRaw,
    ready: undefined,
    shutdown() {
      shutdownCalled ??= Promise.resolve().then(() => fn.shutdown?.());
      return shutdownCalled;
    },
  };
}
