/**
 * One table of options. Each row says where a value may come from; resolveOptions() merges the
 * sources in the order CLI > env (the real one, then func.yaml run.envs) > function member >
 * func.yaml field > caller default > default, and is pure, so tests can pin every rule.
 */
import { funcYamlEnvs } from './run-envs.js';
import { COMPAT_MODES, LOG_LEVELS, type CompatMode, type LogLevel, type Options } from './types.js';

type Parse<T> = (raw: unknown, name: string) => T;

interface OptionRow<K extends keyof Options> {
  key: K;
  flag: string;
  /** Env names, first match wins (PORT is what Knative sets; FUNC_PORT is faas-js-runtime's). */
  env: readonly string[];
  /**
   * Dotted paths in func.yaml, first match wins. A top-level name (`logLevel`, `port`) is
   * faas-js-runtime's func.yaml; the schema rejects it, so only compatibility mode (which reads
   * func.yaml unvalidated, as faas-js-runtime did) can reach it.
   */
  yamlPath?: readonly string[];
  default: Options[K];
  parse: Parse<Options[K]>;
  describe: string;
}

export class OptionError extends Error {
  override name = 'OptionError';
}

const integer = (min: number): Parse<number> => (raw, name) => {
  const n = typeof raw === 'number' ? raw : Number(String(raw).trim());
  if (!Number.isInteger(n) || n < min) throw new OptionError(`${name} must be an integer ≥ ${min}, got "${String(raw)}"`);
  return n;
};
const port: Parse<number> = (raw, name) => {
  const n = integer(0)(raw, name);
  if (n > 65535) throw new OptionError(`${name} must be a port number 0–65535, got "${String(raw)}"`);
  return n;
};
const bool: Parse<boolean> = (raw) => raw === true || (typeof raw === 'string' && !/^(|0|false|no|off)$/i.test(raw.trim()));
const text: Parse<string> = (raw) => String(raw);
const urlPath: Parse<string> = (raw, name) => {
  const s = String(raw);
  if (!s.startsWith('/')) throw new OptionError(`${name} must be a path starting with "/", got "${s}"`);
  return s;
};
const oneOf = <T extends string>(values: readonly T[]): Parse<T> => (raw, name) => {
  const s = String(raw).trim().toLowerCase();
  if (!(values as readonly string[]).includes(s)) throw new OptionError(`${name} must be one of ${values.join(', ')}, got "${String(raw)}"`);
  return s as T;
};
const level: Parse<LogLevel> = oneOf(LOG_LEVELS);
const compat: Parse<CompatMode> = oneOf(COMPAT_MODES);

/** A list given as an array of strings or one comma-separated string (as faas-js-runtime's cors() allows). */
export function stringList(raw: unknown, name: string): string[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw === 'string') return raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (Array.isArray(raw) && raw.every((s) => typeof s === 'string')) return raw.map((s) => s.trim()).filter(Boolean);
  throw new OptionError(`${name} must be a string or an array of strings, got ${JSON.stringify(raw) ?? typeof raw}`);
}

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/; // RFC 9110 token

/** Header names, for the env / flag and for the cors() member alike. */
export function headerNames(raw: unknown, name: string): string[] {
  const names = stringList(raw, name);
  const bad = names.find((n) => !HEADER_NAME.test(n));
  if (bad !== undefined) throw new OptionError(`${name} must list header names, got "${bad}"`);
  return names;
}

const headerList: Parse<string> = (raw, name) => headerNames(String(raw), name).join(', ');

const row = <K extends keyof Options>(r: OptionRow<K>): OptionRow<K> => r;

/** The option table; cli.ts derives its flags from it and the README documents it. */
export const OPTION_TABLE = [
  row({ key: 'port', flag: 'port', env: ['PORT', 'FUNC_PORT'], yamlPath: ['port'], default: 8080, parse: port, describe: 'port to listen on (0 = any free port)' }),
  row({ key: 'host', flag: 'host', env: ['FUNC_HOST'], default: '', parse: text, describe: 'address to listen on (empty = all addresses, IPv4 and IPv6)' }),
  row({ key: 'logLevel', flag: 'log-level', env: ['FUNC_LOG_LEVEL'], yamlPath: ['logLevel'], default: 'warn', parse: level, describe: `log level: ${LOG_LEVELS.join(', ')}` }),
  row({ key: 'bodyLimit', flag: 'body-limit', env: ['FUNC_BODY_LIMIT'], yamlPath: ['bodyLimit'], default: 1_048_576, parse: integer(0), describe: 'largest request body in bytes' }),
  row({ key: 'includeRaw', flag: 'include-raw', env: ['FUNC_INCLUDE_RAW'], yamlPath: ['includeRaw'], default: false, parse: bool, describe: 'keep the raw body bytes in context.rawBody' }),
  row({ key: 'timeout', flag: 'timeout', env: ['FUNC_TIMEOUT'], default: 300_000, parse: integer(0), describe: 'per-request timeout in ms (0 = none)' }),
  row({ key: 'shutdownTimeout', flag: 'shutdown-timeout', env: ['FUNC_SHUTDOWN_TIMEOUT'], default: 10_000, parse: integer(0), describe: 'ms in-flight requests may take after SIGTERM' }),
  row({ key: 'drainDelay', flag: 'drain-delay', env: ['FUNC_DRAIN_DELAY'], default: 0, parse: integer(0), describe: 'ms readiness answers 503 after SIGTERM before the listener closes (default 5000 in a Kubernetes pod outside Knative, else 0)' }),
  row({ key: 'livenessPath', flag: 'liveness-path', env: ['LIVENESS_URL'], yamlPath: ['deploy.healthEndpoints.liveness'], default: '/health/liveness', parse: urlPath, describe: 'liveness probe path' }),
  row({ key: 'readinessPath', flag: 'readiness-path', env: ['READINESS_URL'], yamlPath: ['deploy.healthEndpoints.readiness'], default: '/health/readiness', parse: urlPath, describe: 'readiness probe path' }),
  row({ key: 'metricsPath', flag: 'metrics-path', env: ['METRICS_URL'], default: '/metrics', parse: urlPath, describe: 'Prometheus metrics path' }),
  row({ key: 'corsExposeHeaders', flag: 'cors-expose-headers', env: ['FUNC_CORS_EXPOSE_HEADERS'], default: '', parse: headerList, describe: 'response headers browsers may read (Access-Control-Expose-Headers), comma-separated' }),
  row({ key: 'maxEventLoopDelay', flag: 'max-event-loop-delay', env: ['FUNC_MAX_EVENT_LOOP_DELAY'], default: 1000, parse: integer(0), describe: 'event-loop delay in ms above which readiness answers 503 (0 = never)' }),
  row({ key: 'containerConcurrency', flag: 'container-concurrency', env: ['CONTAINER_CONCURRENCY'], default: 0, parse: integer(0), describe: 'invocations running at once (0 = no limit); the next ones wait in a queue of 10 per slot, then get 503 (Knative sets CONTAINER_CONCURRENCY from the revision)' }),
  row({ key: 'compat', flag: 'compat', env: ['FUNC_COMPAT'], default: 'none', parse: compat, describe: `compatibility mode: ${COMPAT_MODES.join(', ')} (faas-js-runtime when installed under that name)` }),
] as const;

export interface OptionSources {
  /** Values given on the command line or to start(); undefined means "not given". */
  cli?: Partial<Record<keyof Options, unknown>>;
  env?: Record<string, string | undefined>;
  /** Values the function module declares (its `logLevel` and `includeRaw` members). */
  fn?: Partial<Record<keyof Options, unknown>>;
  /** The parsed func.yaml document: its fields (yamlPath) and its run.envs (below the real env). */
  yaml?: unknown;
  /** A caller's own defaults, e.g. a more talkative log level in dev; anything above overrides them. */
  defaults?: Partial<Record<keyof Options, unknown>>;
}

function yamlValue(doc: unknown, path: string): unknown {
  let cur: unknown = doc;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function fromEnv(r: OptionRow<keyof Options>, env: OptionSources['env'], yamlEnv: Map<string, string>): { raw: unknown; name: string } | undefined {
  for (const name of r.env) {
    const v = env?.[name];
    if (v !== undefined && v !== '') return { raw: v, name };
  }
  for (const name of r.env) {
    const v = yamlEnv.get(name);
    if (v !== undefined && v !== '') return { raw: v, name: `func.yaml run.envs ${name}` };
  }
  return undefined;
}

function pick(r: OptionRow<keyof Options>, src: OptionSources, yamlEnv: Map<string, string>): { raw: unknown; name: string } | undefined {
  const cliValue = src.cli?.[r.key];
  if (cliValue !== undefined) return { raw: cliValue, name: `--${r.flag}` };
  const env = fromEnv(r, src.env, yamlEnv);
  if (env) return env;
  const fromFn = src.fn?.[r.key];
  if (fromFn !== undefined) return { raw: fromFn, name: `the function's ${r.key} member` };
  for (const path of r.yamlPath ?? []) {
    const y = yamlValue(src.yaml, path);
    if (y !== undefined && y !== null) return { raw: y, name: `func.yaml ${path}` };
  }
  const fallback = src.defaults?.[r.key];
  return fallback === undefined ? undefined : { raw: fallback, name: `the default ${r.key}` };
}

function resolveRow(r: OptionRow<keyof Options>, src: OptionSources, yamlEnv: Map<string, string>): unknown {
  const found = pick(r, src, yamlEnv);
  return found === undefined ? r.default : r.parse(found.raw, found.name);
}

/** Merges the sources; throws OptionError naming the source of a bad value. Pure. */
export function resolveOptions(src: OptionSources = {}): Options {
  const out: Record<string, unknown> = {};
  const yamlEnv = funcYamlEnvs(src.yaml, src.env);
  for (const r of OPTION_TABLE as readonly OptionRow<keyof Options>[]) out[r.key] = resolveRow(r, src, yamlEnv);
  return out as unknown as Options;
}

/** One option, by the same rules: for a decision that must come before the rest can be read. */
export function resolveOption<K extends keyof Options>(key: K, src: OptionSources): Options[K] {
  const r = (OPTION_TABLE as readonly OptionRow<keyof Options>[]).find((row) => row.key === key)!;
  return resolveRow(r, src, funcYamlEnvs(src.yaml, src.env)) as Options[K];
}

/**
 * Defaults that depend on where the runtime runs; callers pass them as `defaults`, below every
 * explicit source. Installed under the name faas-js-runtime (`npm install
 * faas-js-runtime@npm:@func/runtime`), it serves a project written for faas-js-runtime: its
 * compatibility mode. In a Kubernetes pod outside Knative, endpoints need a moment to see the pod
 * unready before its listener closes; Knative's queue-proxy does that drain itself.
 */
export function placeDefaults(env: Record<string, string | undefined>, installedAs: string): Partial<Options> {
  const out: Partial<Options> = {};
  if (installedAs === 'faas-js-runtime') out.compat = 'faas-js-runtime';
  if (env.KUBERNETES_SERVICE_HOST && !env.K_SERVICE) out.drainDelay = 5000;
  return out;
}
