/**
 * The option tables of the cluster-api commands (serve and broker in config.ts, node in
 * node/config.ts): each row says where a value may come from (flag, environment variable), its
 * default and how it is parsed; `resolveRows` resolves a table by a pure function, CLI > environment >
 * default (principle 10; as the runtime's config.ts). Only cli.ts reads process state and exits.
 */
import { resolve } from 'node:path';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Options resolved so far (rows resolve in table order) and the directory relative paths start from. */
export interface Resolving<C> {
  config: Partial<C>;
  cwd: string;
}

export interface OptionRow<C, K extends keyof C> {
  key: K;
  /** The yargs flag (kebab-case, as kube-apiserver names its flags). */
  flag: string;
  env: string;
  /** Given neither on the command line nor in the environment; a function when it follows earlier rows. */
  default: C[K] | ((at: Resolving<C>) => C[K]);
  /** A given value (a CLI value, or the environment's string) → the option; throws ConfigError naming the flag. */
  parse: (raw: unknown, at: Resolving<C>) => C[K];
  describe: string;
  type: 'string' | 'number' | 'boolean';
}

/** A row of any option of `C`. */
export type AnyRow<C> = { [K in keyof C]-?: OptionRow<C, K> }[keyof C];

export const portOf = (flag: string) => (raw: unknown): number => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigError(`--${flag} must be an integer 0-65535, got ${String(raw)}`);
  return n;
};
export const port = portOf('port');
export const text = (raw: unknown): string => String(raw);
export const bool = (raw: unknown): boolean => raw === true || raw === 'true' || raw === '1';
export const path = (raw: unknown, { cwd }: Resolving<unknown>): string => resolve(cwd, String(raw));
export const count = (flag: string, min: number, max: number) => (raw: unknown): number => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`--${flag} must be an integer ${min}-${max}, got ${String(raw)}`);
  return n;
};

/** The value a row is given: the CLI's (by key or flag), else the environment's; undefined when neither. */
function given<C>(row: AnyRow<C>, cli: Record<string, unknown>, env: Record<string, string | undefined>): unknown {
  const fromCli = cli[row.key as string] ?? cli[row.flag];
  if (fromCli !== undefined && fromCli !== '') return fromCli;
  const fromEnv = env[row.env];
  return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
}

/** Pure: each row in order, given or defaulted. */
export function resolveRows<C>(rows: readonly AnyRow<C>[], cli: Record<string, unknown>, env: Record<string, string | undefined>, cwd: string): C {
  const at: Resolving<C> = { config: {}, cwd };
  for (const r of rows) {
    const raw = given(r, cli, env);
    const value = raw === undefined ? (typeof r.default === 'function' ? (r.default as (at: Resolving<C>) => unknown)(at) : r.default) : r.parse(raw, at);
    if (value !== undefined) (at.config as Record<string, unknown>)[r.key as string] = value;
  }
  return at.config as C;
}
