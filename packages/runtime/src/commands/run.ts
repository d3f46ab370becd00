/**
 * `func-runtime [path]`: load a function and serve it until SIGTERM. Failures before listening are
 * reported as one paragraph and a non-zero exit; nothing here ends the process itself (cli.ts does).
 */
import { relative } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { boot, StartError } from '../boot.js';
import { OPTION_TABLE } from '../config.js';
import { defaultListenHost } from '../listen-host.js';
import { installProcessHandlers, type Exit } from '../lifecycle.js';
import { loadFunction, resolveEntry } from '../loader.js';
import type { Options } from '../types.js';

export { StartError };

interface RunArgs {
  path: string;
  [flag: string]: unknown;
}

/** Adds one flag per row of the option table: the table is the only list of options. */
export function withOptionFlags<T>(y: Argv<T>): Argv<T> {
  let out = y;
  for (const row of OPTION_TABLE) {
    const type = typeof row.default === 'boolean' ? 'boolean' : typeof row.default === 'number' ? 'number' : 'string';
    out = out.option(row.flag, { type, describe: `${row.describe} [env ${row.env.join(' / ')}; default ${JSON.stringify(row.default)}]` });
  }
  return out;
}

export function cliOptions(argv: RunArgs): Partial<Options> {
  const out: Record<string, unknown> = {};
  for (const row of OPTION_TABLE) if (argv[row.flag] !== undefined) out[row.key] = argv[row.flag];
  return out as Partial<Options>;
}

/**
 * Whatever the log level (unless silent), one line for the person who started it: where it
 * listens, what it serves, how loudly it logs. On stderr, so stdout stays one JSON object per line.
 */
function announce(command: string, file: string) {
  return ({ url, runtime }: { url: string; runtime: { options: Options } }) => {
    const { logLevel, compat } = runtime.options;
    if (logLevel === 'silent') return;
    const shown = relative(process.cwd(), file) || file;
    const mode = compat === 'none' ? '' : `, ${compat} compatibility mode`;
    process.stderr.write(`${command}: serving ${shown} at ${url} (log level ${logLevel}${mode}; Ctrl-C stops)\n`);
  };
}

/** Loads and serves; resolves once listening. Signals later call `exit` with the exit code. */
export async function serve(argv: RunArgs, exit: Exit, options: { command?: string; defaults?: Partial<Options> } = {}): Promise<void> {
  const entry = resolveEntry(argv.path);
  const booted = await boot({
    yamlAt: entry.dir,
    options: cliOptions(argv),
    defaults: { host: defaultListenHost(), ...options.defaults },
    load: () => loadFunction(entry),
    initError: (err) => new StartError(`The init hook of ${entry.file} failed: ${(err as Error)?.message ?? String(err)}. Fix init so it completes, then run again.`),
    announce: announce(options.command ?? 'func-runtime', entry.file),
  });
  installProcessHandlers(booted.server, booted.runtime(), exit);
}

export function runCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, RunArgs> {
  return {
    command: '$0 [path]',
    describe: 'Serve a function (a file, or a directory with func.yaml / package.json / index.*)',
    builder: (y) => withOptionFlags(y.positional('path', { type: 'string', default: '.', describe: 'function file or directory' })) as Argv<RunArgs>,
    handler: (argv) => serve(argv, exit).catch(onError),
  };
}
