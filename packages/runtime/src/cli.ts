#!/usr/bin/env node
/**
 * The func-runtime command. Each subcommand is a module in commands/; this file wires them to yargs
 * and is the only place that ends the process, so library code can be embedded and tested.
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { runCommand } from './commands/run.js';
import { devCommand } from './commands/dev.js';
import { buildCommand } from './commands/build.js';

function exit(code: number): never {
  process.exit(code);
}

/** Known start-up failures carry a complete message; anything else is a bug worth its stack. */
function reportStartError(err: unknown): void {
  const e = err as Error;
  const known = ['LoadError', 'FuncYamlError', 'OptionError', 'StartError'].includes(e?.name);
  process.stderr.write(`func-runtime: ${known ? e.message : e?.stack ?? String(err)}\n`);
  exit(1);
}

await yargs(hideBin(process.argv))
  .scriptName('func-runtime')
  .command(runCommand(exit, reportStartError))
  .command(devCommand(exit, reportStartError))
  .command(buildCommand(exit, reportStartError))
  .strict()
  .help()
  .version(false)
  .fail((msg, err) => {
    process.stderr.write(`func-runtime: ${msg ?? err?.message}\nRun func-runtime --help for usage.\n`);
    exit(2);
  })
  .parseAsync();
