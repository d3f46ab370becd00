/**
 * The func-runtime command line. Each subcommand is a module in commands/; this file wires them to
 * yargs. The entry points (cli.ts, faas-cli.ts) load it; a function image's entry
 * (image/serve-entry.ts) serves a plain run without it and loads it for anything else.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { CommandModule } from 'yargs';
import { runCommand, serve } from './commands/run.js';
import { exit, reportStartError } from './command-exit.js';
import { asksForUsage, looksLikeCommand, plainArgs, type PlainArgs } from './plain-args.js';
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
import { subscribeCommand } from './commands/subscribe.js';
import { configCommand } from './commands/config.js';
import { secretCommand } from './commands/secret.js';
import { completionCommand } from './commands/completion.js';
import { commandTree, walk, type CommandNode } from './commands/command-tree.js';
import { closest, didYouMean } from './suggest.js';

/** Every command; `$0 [path]` (run) is the default. A new command is a module plus one entry here. */
const commands = [runCommand, devCommand, buildCommand, invokeCommand, eventsCommand, deployCommand, undeployCommand, describeCommand, listCommand, rollbackCommand, trafficCommand, logsCommand].map((make) => make(exit, reportStartError) as CommandModule);
// Knative func's verbs around func.yaml and Secrets; then `completion`, generated from all the others.
commands.push(...[subscribeCommand, configCommand, secretCommand].map((make) => make(exit, reportStartError) as CommandModule));
let tree: CommandNode | undefined;
const commandsTree = (): CommandNode => (tree ??= commandTree(commands));
commands.push(completionCommand(exit, reportStartError, commandsTree) as CommandModule);
const SUBCOMMANDS = commands.flatMap((c) => [c.command ?? [], c.aliases ?? []].flat().map((name) => String(name).split(' ')[0]!)).filter((name) => name !== '$0').concat('help');

// requireLazy: a function image's bundle of this file inlines package.json (runtime-layer.ts).
const requireLazy = createRequire(import.meta.url);
const version = (): string => (requireLazy('../package.json') as { version: string }).version;

function usageError(message: string): never {
  process.stderr.write(`func-runtime: ${message.trim().replace(/\s*\n\s*/g, ' ')}\nRun func-runtime --help for usage.\n`);
  exit(2);
}

/** yargs' strict-mode message (its camelCase twins of dashed flags left out), with the closest subcommand or flag of the command the words selected. */
function withSuggestion(message: string, args: string[]): string {
  const m = /^Unknown arguments?: (.+)$/.exec(message);
  if (!m) return message;
  const listed = m[1]!.split(', ');
  const camel = (w: string) => w.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  const unknowns = listed.filter((w) => !listed.some((other) => other !== w && other.includes('-') && camel(other) === w));
  const { node } = walk(commandsTree(), args);
  const unknown = unknowns[0]!;
  const isFlag = args.includes(`--${unknown}`) || args.includes(`-${unknown}`) || args.some((a) => a.startsWith(`--${unknown}=`));
  const hint = isFlag ? didYouMean(unknown.length > 1 ? `--${unknown}` : `-${unknown}`, node.flags) : didYouMean(unknown, node.children.flatMap((c) => c.names));
  return `Unknown argument${unknowns.length > 1 ? 's' : ''}: ${unknowns.join(', ')}.${hint}`;
}

async function withYargs(args: string[]): Promise<void> {
  const { default: yargs } = await import('yargs');
  let cli = yargs(args).scriptName('func-runtime');
  for (const command of commands) cli = cli.command(command);
  await cli
    .strict()
    .help()
    .version(version())
    .fail((msg, err) => usageError(withSuggestion(msg ?? err?.message ?? '', args)))
    .parseAsync();
}

/** A plain run (plain-args.ts), unless its first word is a (mistyped) command. */
function plainRun(args: string[]): PlainArgs | undefined {
  if (SUBCOMMANDS.includes(args[0] ?? '') || asksForUsage(args)) return undefined;
  const first = args[0];
  // A word that is no path but almost a command is a mistyped command, not a function to serve.
  if (first !== undefined && looksLikeCommand(first) && !existsSync(first)) {
    const meant = closest(first, SUBCOMMANDS);
    if (meant !== undefined) usageError(`unknown command "${first}". Did you mean "${meant}"?`);
  }
  return plainArgs(args);
}

/** Runs `func-runtime ARGS…`: serves, or runs a subcommand. */
export async function runCommandLine(args: string[]): Promise<void> {
  if (args.length === 1 && args[0] === '--version') {
    process.stdout.write(`${version()}\n`);
    return exit(0);
  }
  const plain = plainRun(args);
  if (plain) await serve(plain, exit).catch(reportStartError);
  else await withYargs(args);
}
