/**
 * Start-up, written once for every entry point (start(), `func-runtime`, `func-runtime dev`, the
 * `faas-js-runtime` command), as one pipeline: env → runtime → init → server → listen → ready.
 *
 * - env: func.yaml is read and checked (refused when it breaks func.schema.json; in compatibility
 *   mode a warning, as faas-js-runtime read it unchecked), then its run.envs become defaults of
 *   process.env before the function's module loads (its top-level code may read them).
 * - runtime and init: the function is loaded, its Runtime built, `init` awaited: one function
 *   (serveFunction), or dev's reloader, which does the same for each version it swaps in.
 * - server, listen, ready: node:http on the resolved host and port; once it listens, the cold start
 *   is recorded and the caller may announce it.
 */
import type { Server } from 'node:http';
import { resolveOption } from './config.js';
import { describeHolder, portHolder } from './listen-host.js';
import { funcSchemaValidator, funcYamlProblem, FuncYamlError, parseFuncYaml, type FuncYaml } from './func-yaml.js';
import { applyEnvDefaults, funcYamlEnvs } from './run-envs.js';
import { createRuntime, defaultsHere, type Runtime } from './runtime.js';
import { listen, serveFunction, serverFor, type Served } from './server.js';
import type { FunctionModule, Handler, Options } from './types.js';

export class StartError extends Error {
  override name = 'StartError';
}

type Env = Record<string, string | undefined>;

/** What the env step hands on: func.yaml as checked, and the environment before run.envs were applied. */
export interface BootEnv {
  /** The parsed func.yaml, when the project has one. */
  yaml: unknown;
  /** process.env as it was: an option read from run.envs is then blamed on func.yaml when it is bad. */
  env: Env;
  /** What compatibility mode tolerated in func.yaml, to log once a logger exists. */
  warning: string | undefined;
}

export interface BootSpec {
  /** The project directory, or its func.yaml file; undefined: no func.yaml. */
  yamlAt?: string;
  /** Options given by the caller (command-line flags, start() options). */
  options: Partial<Options>;
  /** The caller's defaults, below every other source (dev logs requests). */
  defaults?: Partial<Options>;
  destination?: NodeJS.WritableStream;
  /** The function, loaded once run.envs are in process.env. */
  load?: () => Promise<Handler | FunctionModule> | Handler | FunctionModule;
  /** Serving other than one function: dev's reloader. */
  serve?: (env: BootEnv) => Promise<Served>;
  /** Turns a failing init into the error to report (the CLI names the file). */
  initError?: (err: unknown) => Error;
  /** Called once listening, e.g. to print the one human line. */
  announce?: (info: { url: string; port: number; runtime: Runtime }) => void;
}

export interface Booted {
  server: Server;
  /** The runtime now serving (dev swaps it on every save). */
  runtime(): Runtime;
  port: number;
  /** Where a person on this machine reaches it. */
  url: string;
}

/**
 * func.yaml as a runtime may use it: checked against func.schema.json, unless compatibility mode is
 * on, which reads it anyway and returns the problem as a warning.
 */
export async function projectYaml(yaml: FuncYaml | undefined, options: Partial<Options>, env: Env): Promise<{ doc: unknown; warning: string | undefined }> {
  if (yaml === undefined) return { doc: undefined, warning: undefined };
  const problem = funcYamlProblem(yaml, await funcSchemaValidator());
  if (problem === undefined) return { doc: yaml.doc, warning: undefined };
  const compat = resolveOption('compat', { cli: options, env, yaml: yaml.doc, defaults: defaultsHere(env) });
  if (compat !== 'faas-js-runtime') throw new FuncYamlError(problem);
  return { doc: yaml.doc, warning: `${problem} (read anyway: faas-js-runtime compatibility mode)` };
}

async function prepareEnv(spec: BootSpec): Promise<BootEnv> {
  const env = { ...process.env };
  const parsed = spec.yamlAt === undefined ? undefined : parseFuncYaml(spec.yamlAt);
  const { doc, warning } = await projectYaml(parsed, spec.options, env);
  applyEnvDefaults(process.env, funcYamlEnvs(doc, env));
  return { yaml: doc, env, warning };
}

async function serveOne(spec: BootSpec, { yaml, env, warning }: BootEnv): Promise<Served> {
  const fn = await spec.load!();
  const rt = createRuntime(fn, { options: spec.options, env, yaml, defaults: spec.defaults, destination: spec.destination });
  if (warning) rt.logger.warn(warning);
  try {
    await rt.fn.init?.();
  } catch (err) {
    throw spec.initError ? spec.initError(err) : err;
  }
  return serveFunction(rt);
}

function listenError(err: NodeJS.ErrnoException, port: number): StartError {
  if (err.code === 'EADDRINUSE') return new StartError(`Port ${port} is already in use${describeHolder(portHolder(port))}. Stop the other process or choose another port with --port / PORT.`);
  if (err.code === 'EACCES') return new StartError(`Not allowed to listen on port ${port}. Use a port above 1024 with --port / PORT.`);
  return new StartError(`Cannot listen on port ${port}: ${err.message}.`);
}

export async function boot(spec: BootSpec): Promise<Booted> {
  const bootEnv = await prepareEnv(spec);
  const served = await (spec.serve ?? ((e: BootEnv) => serveOne(spec, e)))(bootEnv);
  const { port: wanted, host } = served.runtime().options;
  const server = serverFor(served);
  try {
    await listen(server, wanted, host);
  } catch (err) {
    await served.dispose?.();
    throw listenError(err as NodeJS.ErrnoException, wanted);
  }
  const rt = served.runtime();
  rt.metrics.ready();
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : wanted;
  const shown = host && host !== '0.0.0.0' && host !== '::' ? host : 'localhost';
  const url = `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
  rt.logger.info({ port, url, entry: rt.fn.source }, 'listening');
  spec.announce?.({ url, port, runtime: rt });
  return { server, runtime: served.runtime, port, url };
}
