/**
 * `func-runtime logs [path] [-f]`: the logs of every pod of a deployed function, interleaved
 * (deploy/logs.ts); pretty by default, `--json` for one JSON object per line with the pod's name.
 */
import type { Argv, CommandModule } from 'yargs';
import type { Exit } from '../lifecycle.js';
import { withTargetFlags, type TargetFlags } from './deploy-flags.js';

interface LogsArgs extends TargetFlags {
  follow: boolean;
  json: boolean;
  tail?: number;
  since?: number;
}

async function logs(argv: LogsArgs): Promise<void> {
  const { functionLogs } = await import('../deploy/logs.js');
  const abort = new AbortController();
  const stop = () => abort.abort();
  process.once('SIGINT', stop).once('SIGTERM', stop);
  const { name, pods } = await functionLogs({ ...argv, out: process.stdout, signal: abort.signal });
  if (pods === 0) process.stderr.write(`func-runtime: ${name} has no pods\n`);
}

export function logsCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, LogsArgs> {
  return {
    command: 'logs [path]',
    describe: 'Print the logs of every pod of a deployed function, interleaved (-f: follow, new pods included)',
    builder: (y) =>
      withTargetFlags(y)
        .option('follow', { alias: 'f', type: 'boolean', default: false, describe: 'keep streaming; pods that start later join' })
        .option('json', { type: 'boolean', default: false, describe: 'one JSON object per line, with the pod\'s name' })
        .option('tail', { type: 'number', describe: 'lines per pod from the end' })
        .option('since', { type: 'number', describe: 'only lines from the last N seconds' }) as unknown as Argv<LogsArgs>,
    handler: (argv) => logs(argv).then(() => exit(0), onError),
  };
}
