/**
 * Public API of @func/runtime. It is also faas-js-runtime 4's API (`start`, `defaults` and its type
 * names), so `npm install faas-js-runtime@npm:@func/runtime` swaps one for the other.
 */
import type { Server } from 'node:http';
import { boot } from './boot.js';
import { OPTION_TABLE } from './config.js';
import type { NodeHandler } from './invoke.js';
import { gracefulStop } from './lifecycle.js';
import { createRuntime, type Runtime } from './runtime.js';
import { createDispatcher, serveFunction, serverFor } from './server.js';
import { startInput } from './start-options.js';
import type { FunctionModule, Handler, LogLevel, StartOptions } from './types.js';
import type { Invokable } from './faas-types.js';

export { runtimeErrors, type RuntimeErrorCode, type RuntimeErrorEntry } from './errors.js';
export { OPTION_TABLE, resolveOptions, OptionError } from './config.js';
export { FuncYamlError, type FuncYamlValidator } from './func-yaml.js';
export { LoadError, loadFunction, resolveEntry } from './loader.js';
export type { NodeHandler } from './invoke.js';
export { LOG_LEVELS, LogLevel, COMPAT_MODES } from './types.js';
export type {
  CloudEventLike, CloudEventResponse, CompatMode, Context, CorsConfig, FunctionModule, Handler, HealthCheck,
  Logger, Options, StartOptions, StructuredReturn,
} from './types.js';
export type {
  CloudEventFunction, CloudEventFunctionReturn, Config, Function, FunctionReturn, HTTPFunction, HTTPFunctionReturn,
  IncomingBody, Invokable, InvokerOptions, ResponseBody,
} from './faas-types.js';

const runtimes = new WeakMap<Server, () => Runtime>();

const defaultOf = (key: string) => OPTION_TABLE.find((r) => r.key === key)!.default;

/** faas-js-runtime's `defaults`: the values used when nothing else sets them. */
export const defaults = Object.freeze({
  LOG_LEVEL: defaultOf('logLevel') as LogLevel,
  PORT: defaultOf('port') as number,
  INCLUDE_RAW: defaultOf('includeRaw') as boolean,
  BODY_LIMIT: defaultOf('bodyLimit') as number,
});

/** A server that is not yet listening; `init` must already have run (start() does both). */
export function createServer(fn: Handler | FunctionModule | Invokable, options: StartOptions = {}): Server {
  const input = startInput(fn, options, false);
  const rt = createRuntime(input.fn, { options: input.options });
  const server = serverFor(serveFunction(rt));
  runtimes.set(server, () => rt);
  return server;
}

/**
 * Runs `init`, then listens; resolves once it listens. options.port 0 = any free port
 * (read server.address()). Options not given come from the environment, then the defaults.
 */
export async function start(fn: Handler | FunctionModule | Invokable, options: StartOptions = {}): Promise<Server> {
  const input = startInput(fn, options);
  const booted = await boot({ yamlAt: input.yamlAt, options: input.options, load: () => input.fn });
  runtimes.set(booted.server, booted.runtime);
  return booted.server;
}

/** Drains in-flight requests (bounded by shutdownTimeout), then closes and runs `shutdown`. */
export async function stop(server: Server): Promise<void> {
  const rt = runtimes.get(server);
  if (!rt) throw new TypeError('stop() takes a server returned by start() or createServer()');
  await gracefulStop(server, rt(), 'stop()');
}

/**
 * (req, res, next?) handler usable by node:http directly or as Express middleware: it serves the
 * health and metrics paths and sends everything else to `handle`. `init` runs at once; requests
 * that arrive before it finishes wait for it.
 */
export function createHandler(fn: Handler | FunctionModule | Invokable, options: StartOptions = {}): NodeHandler {
  const input = startInput(fn, options, false);
  const rt = createRuntime(input.fn, { options: input.options });
  if (rt.fn.init) rt.ready = Promise.resolve(rt.fn.init()).then(() => { rt.ready = undefined; });
  return createDispatcher(rt);
}
