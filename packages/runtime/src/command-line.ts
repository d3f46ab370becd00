/**
 * The func-runtime command line. Each subcommand is a module in commands/; this file wires them to
 * yargs and is the only place that ends the process, so library code can be embedded and tested.
 * The entry points (cli.ts, faas-cli.ts) load it.
 */
import { parseArgs } from 'node:util';
import type { CommandModule } from 'yargs';
import { runCommand, serve } from './commands/run.js';
import { OPTION_TABLE } from './config.js';
import { devCommand } from './commands/dev.js';
import { buildCommand } from './commands/build.js';
import { invokeCommand } from './commands/invoke.js';
import { eventsCommand } from './commands/events.js';
import { deployCommand } from './commands/deploy.js';
import { undeployCommand } from './commands/undeploy.js';
import { describeCommand } from './commands/describe.js';
import { listCommand } from './commands/list.js';
import { rollbackCommand, trafficCommand } from './commands/rollback.js';
import { logsCommand } from './commands/logs.js';

function exit(code: number): never {
  process.exit(code);
}

/** Known start-up failures carry a complete message; anything else is a bug worth its stack. */
function reportStartError(err: unknown): void {
  const e = err as Error;
  const known = ['LoadError', 'FuncYamlError', 'OptionError', 'StartError', 'CommandError'].includes(e?.name);
  process.stderr.write(`func-runtime: ${known ? e.message : e?.stack ?? String(err)}\n`);
  exit(1);
}

/** Every command; `$0 [path]` (run) is the default. A new command is a module plus one entry here. */
const commands = [runCommand, devCommand, buildCommand, invokeCommand, eventsCommand, deployCommand, undeployCommand, describeCommand, listCommand, rollbackCommand, trafficCommand, logsCommand].map((make) => make(exit, reportStartError) as CommandModule);
const SUBCOMMANDS = commands.map((c) => String(c.command).split(' ')[0]).filter((name) => name !== '$0').concat('help');

async function withYargs(args: string[]): Promise<void> {
  const { default: yargs } = await import('yargs');
  let cli = yargs(args).scriptName('func-runtime');
  for (const command of commands) cli = cli.command(command);
  await cli
    .strict()
    .help()
    .version(false)
    .fail((msg, err) => {
      process.stderr.write(`func-runtime: ${msg ?? err?.message}\nRun func-runtime --help for usage.\n`);
      exit(2);
    })
    .parseAsync();
}

/**
 * The plain `func-runtime [path] [--flag value]` a container runs on every cold start is parsed
 * with node:util from the same option table: loading yargs costs more start-up time than the rest
 * of the runtime together. Anything else (a subcommand, --help, a malformed flag) goes to yargs,
 * which owns usage text and error messages.
 */
function plainRun(args: string[]): { path: string; [flag: string]: unknown } | undefined {
  if (SUBCOMMANDS.includes(args[0] ?? '') || args.some((a) => /^(-h|--help|--version)$/.test(a))) return undefined;
  const options: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const row of OPTION_TABLE) options[row.flag] = { type: typeof row.default === 'boolean' ? 'boolean' : 'string' };
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return positionals.length > 1 ? undefined : { ...values, path: positionals[0] ?? '.' };
  } catch {
    return undefined;
  }
}

/** Runs `func-runtime ARGS…`: serves, or runs a subcommand. */
export async function runCommandLine(args: string[]): Promise<void> {
  const plain = plainRun(args);
  if (plain) await serve(plain, exit).catch(reportStartError);
  else await withYargs(args);
}
