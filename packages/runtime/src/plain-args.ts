/**
 * The plain `func-runtime [path] [--flag value]` that a container runs on every cold start, parsed
 * with node:util from the option table (loading yargs costs more start-up time than the rest of the
 * runtime together). Undefined for anything else (a second positional, --help, --version, a flag the
 * table does not have, a malformed value): yargs owns those, with usage text and error messages.
 */
import { parseArgs } from 'node:util';
import { OPTION_TABLE } from './config.js';

export interface PlainArgs {
  path: string;
  [flag: string]: unknown;
}

/** A bare lowercase word (`biuld`, `deploy`): maybe a command, unless a path of that name exists. */
export const looksLikeCommand = (word: string): boolean => /^[a-z][a-z-]*$/.test(word);

/** --help, -h or --version anywhere: yargs answers those. */
export const asksForUsage = (args: string[]): boolean => args.some((a) => /^(-h|--help|--version)$/.test(a));

export function plainArgs(args: string[]): PlainArgs | undefined {
  if (asksForUsage(args)) return undefined;
  const options: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const row of OPTION_TABLE) options[row.flag] = { type: typeof row.default === 'boolean' ? 'boolean' : 'string' };
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return positionals.length > 1 ? undefined : { ...values, path: positionals[0] ?? '.' };
  } catch {
    return undefined;
  }
}
