/**
 * `func-runtime dev [path]` (also `run`, Knative func's name for running a function on this
 * machine): serve TypeScript or JavaScript source, rebuild and swap on save.
 * The dev loop is imported on first use, so `func-runtime` (production) never loads esbuild,
 * chokidar or pino-pretty.
 */
import type { Argv, CommandModule } from 'yargs';
import type { Exit } from '../lifecycle.js';
import { cliOptions, withOptionFlags } from './run.js';

interface DevArgs {
  path: string;
  json: boolean;
  [flag: string]: unknown;
}

async function dev(argv: DevArgs, exit: Exit): Promise<void> {
  const { startDev } = await import('../dev/dev-server.js');
  const session = await startDev({ path: argv.path, options: cliOptions(argv), json: argv.json });
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return exit(1);
    stopping = true;
    session.stop(signal).then(exit, () => exit(1));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // In dev a stray exception is a bug to fix on the next save, not a reason to lose the session.
  const report = (kind: string) => (err: unknown) => session.logger.error({ err }, `${kind} escaped the function (still serving)`);
  process.on('uncaughtException', report('uncaught exception'));
  process.on('unhandledRejection', report('unhandled promise rejection'));
}

export function devCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, DevArgs> {
  return {
    command: 'dev [path]',
    aliases: ['run'],
    describe: 'Serve a function from source and reload it on every save',
    builder: (y) =>
      withOptionFlags(
        y.positional('path', { type: 'string', default: '.', describe: 'function file or directory' })
          .option('json', { type: 'boolean', default: false, describe: 'log JSON lines instead of human-readable ones' }),
      ) as unknown as Argv<DevArgs>,
    handler: (argv) => dev(argv, exit).catch(onError),
  };
}
