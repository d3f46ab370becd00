/**
 * What a function image runs on every cold start, bundled on its own (func-runtime-serve.cjs in the
 * runtime layer): the plain `func-runtime <path> [--flag value]` and nothing else, so Node.js parses
 * a third of what the whole command line is (no yargs, no build, deploy or dev). Anything that is
 * not a plain run of an existing path (a subcommand, --help, a flag the table lacks, a missing path)
 * is answered by the whole command line (func-runtime-cli.mjs beside it), word for word as from
 * `func-runtime` itself.
 */
import { existsSync } from 'node:fs';
import { exit, reportStartError } from '../command-exit.js';
import { serve } from '../commands/run.js';
import { importFunctionsWith } from '../loader.js';
import { looksLikeCommand, plainArgs } from '../plain-args.js';

/**
 * Serves `args` when they are a plain run of a path that exists, resolving once listening; false
 * when the whole command line must answer them. `importModule` imports the function's module (see
 * loader.ts' importFunctionsWith).
 */
export async function main(args: string[], importModule: (url: string) => Promise<unknown>): Promise<boolean> {
  const plain = plainArgs(args);
  // A bare word may be a (mistyped) command: the command line knows them all, this file does not.
  if (!plain || looksLikeCommand(plain.path) || !existsSync(plain.path)) return false;
  importFunctionsWith(importModule);
  await serve(plain, exit).catch(reportStartError);
  return true;
}
