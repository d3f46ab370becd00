/**
 * What start() and createServer() accept. faas-js-runtime's start() took the Function object's
 * members (cors, liveness, readiness, shutdown) and the func.yaml location (`config`) as options
 * too; they are accepted here under the same names. An option this runtime does not know is an
 * error, never ignored: a `cors` that were dropped would silently allow every origin.
 */
import { OPTION_TABLE, resolveOption } from './config.js';
import { defaultsHere } from './runtime.js';
import type { FunctionModule, Handler, Options, StartOptions } from './types.js';

const MEMBERS = ['cors', 'liveness', 'readiness', 'shutdown'] as const;
const LOCATIONS = ['dir', 'config', 'path'] as const;
const OPTION_KEYS: readonly string[] = OPTION_TABLE.map((r) => r.key);
const KNOWN: readonly string[] = [...OPTION_KEYS, ...MEMBERS, ...LOCATIONS];

export interface StartInput {
  fn: Handler | FunctionModule;
  options: Partial<Options>;
  /** Where func.yaml is read from, if anywhere. */
  yamlAt: string | undefined;
}

function checkFunction(fn: unknown): asserts fn is Handler | FunctionModule {
  if (typeof fn === 'function') return;
  if (fn === null || typeof fn !== 'object' || typeof (fn as FunctionModule).handle !== 'function') {
    throw new TypeError('Function must export a handle function');
  }
}

function withMembers(fn: Handler | FunctionModule, options: StartOptions): Handler | FunctionModule {
  const members: Partial<FunctionModule> = {};
  for (const name of MEMBERS) {
    const member = options[name];
    if (member === undefined) continue;
    if (typeof member !== 'function') throw new TypeError(`start() option "${name}" must be a function, as the Function member of that name, got ${typeof member}`);
    (members as Record<string, unknown>)[name] = member;
  }
  if (Object.keys(members).length === 0) return fn;
  // The Function object's own members win, as they did in faas-js-runtime.
  return typeof fn === 'function' ? { handle: fn, ...members } : { ...members, ...fn };
}

/**
 * Checks and splits start()'s arguments. `readsYaml`: start() reads func.yaml (from `dir`, and in
 * compatibility mode from the working directory by default, as faas-js-runtime did); createServer()
 * reads none.
 */
export function startInput(fn: unknown, options: StartOptions | undefined, readsYaml = true): StartInput {
  checkFunction(fn);
  const given = (options ?? {}) as Record<string, unknown>;
  if (typeof given !== 'object') throw new TypeError(`start() options must be an object, got ${typeof given}`);
  const unknown = Object.keys(given).filter((k) => given[k] !== undefined && !KNOWN.includes(k));
  if (unknown.length > 0) throw new TypeError(`start() does not know the option${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}; known: ${KNOWN.join(', ')}`);
  const locations = [...new Set(LOCATIONS.map((k) => given[k]).filter((v) => v !== undefined))];
  if (locations.some((l) => typeof l !== 'string') || locations.length > 1) throw new TypeError(`start() options dir, config and path name one project location (a string); got ${JSON.stringify(locations)}`);
  if (!readsYaml && locations.length > 0) throw new TypeError('createServer() reads no func.yaml; use start({ dir }) for a project');
  const runtimeOptions: Record<string, unknown> = {};
  for (const key of OPTION_KEYS) if (given[key] !== undefined) runtimeOptions[key] = given[key];
  const compat = readsYaml && locations.length === 0 && resolveOption('compat', { cli: runtimeOptions, env: process.env, defaults: defaultsHere(process.env) }) === 'faas-js-runtime';
  return { fn: withMembers(fn, options ?? {}), options: runtimeOptions as Partial<Options>, yamlAt: (locations[0] as string | undefined) ?? (compat ? '.' : undefined) };
}
