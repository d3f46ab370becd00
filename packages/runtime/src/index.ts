/** Public API of @func/runtime. */
import type { Server } from 'node:http';
import { readValidFuncYaml } from './func-yaml.js';
import { gracefulStop } from './lifecycle.js';
import type { NodeHandler } from './invoke.js';
import { applyEnvDefaults, funcYamlEnvs } from './run-envs.js';
import { createRuntime, type Runtime, type RuntimeInit } from './runtime.js';
import { createDispatcher, createRuntimeServer, listen } from './server.js';
import type { FunctionModule, Handler, Options } from './types.js';

export { runtimeErrors, type RuntimeErrorCode, type RuntimeErrorEntry } from './errors.js';
export { OPTION_TABLE, resolveOptions, OptionError } from './config.js';
export { FuncYamlError, setFuncYamlValidator, type FuncYamlValidator } from './func-yaml.js';
export { LoadError, loadFunction, resolveEntry } from './loader.js';
export type { NodeHandler } from './invoke.js';
export { LOG_LEVELS } from './types.js';
export type {
  CloudEventLike, CloudEventResponse, Context, FunctionModule, Handler, HealthCheck, LogLevel, Logger,
  Options, StructuredReturn,
} from './types.js';

const runtimes = new WeakMap<Server, Runtime>();

/** start()'s options: the runtime options, plus the project whose func.yaml applies. */
export interface StartOptions extends Partial<Options> {
  /**
   * The project directory. Its func.yaml, when there is one, is validated against func.schema.json
   * (an invalid one rejects with a FuncYamlError naming the file and field) and applied as the CLI
   * applies it: deploy.healthEndpoints, and run.envs as defaults of process.env.
   */
  dir?: string;
}

function serverFor(fn: Handler | FunctionModule, init: RuntimeInit): Server {
  const rt = createRuntime(fn, init);
  const server = createRuntimeServer(rt);
  runtimes.set(server, rt);
  // Spec 001: `shutdown` runs after the server stops, however it was stopped.
  server.once('close', () => {
    rt.shutdown().catch((err: unknown) => rt.logger.error({ err }, 'the function\'s shutdown hook failed'));
  });
  return server;
}

/** A server that is not yet listening; `init` must already have run (start() does both). */
export function createServer(fn: Handler | FunctionModule, options: Partial<Options> = {}): Server {
  return serverFor(fn, { options });
}

/**
 * Runs `init`, then listens; resolves once it listens. options.port 0 = any free port
 * (read server.address()). Options not given come from the environment, then the defaults.
 */
export async function start(fn: Handler | FunctionModule, options: StartOptions = {}): Promise<Server> {
  if (typeof fn !== 'function' && (fn === null || typeof fn !== 'object' || typeof fn.handle !== 'function')) {
    throw new TypeError('Function must export a handle function');
  }
  const { dir, ...runtimeOptions } = options;
  const yaml = dir === undefined ? undefined : await readValidFuncYaml(dir);
  const env = { ...process.env };
  applyEnvDefaults(process.env, funcYamlEnvs(yaml, env));
  if (typeof fn === 'object' && typeof fn.init === 'function') await fn.init();
  const server = serverFor(fn, { options: runtimeOptions, env, yaml });
  const rt = runtimes.get(server)!;
  await listen(server, rt.options.port, rt.options.host);
  rt.metrics.ready();
  return server;
}

/** Drains in-flight requests (bounded by shutdownTimeout), then closes and runs `shutdown`. */
export async function stop(server: Server): Promise<void> {
  const rt = runtimes.get(server);
  if (!rt) throw new TypeError('stop() takes a server returned by start() or createServer()');
  await gracefulStop(server, rt, 'stop()');
}

/**
 * (req, res, next?) handler usable by node:http directly or as Express middleware: it serves the
 * health and metrics paths and sends everything else to `handle`. `init` runs at once; requests
 * that arrive before it finishes wait for it.
 */
export function createHandler(fn: Handler | FunctionModule, options: Partial<Options> = {}): NodeHandler {
  const rt = createRuntime(fn, { options });
  if (rt.fn.init) rt.ready = Promise.resolve(rt.fn.init()).then(() => { rt.ready = undefined; });
  return createDispatcher(rt);
}
