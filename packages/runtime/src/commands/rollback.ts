/**
 * `func-runtime rollback [path] [--to <revision>]`: all of a Knative Service's traffic to the ready
 * revision before the one serving, or to the one named (deploy/revisions.ts); the next deploy
 * sends it to the latest revision again.
 */
import type { Argv, CommandModule } from 'yargs';
import type { Exit } from '../lifecycle.js';
import { withTargetFlags, type TargetFlags } from './deploy-flags.js';

interface RollbackArgs extends TargetFlags {
  to?: string;
  timeout: number;
}

async function rollback(argv: RollbackArgs): Promise<void> {
  const { rollback: moveTraffic } = await import('../deploy/revisions.js');
  const r = await moveTraffic({ ...argv, timeoutMs: argv.timeout * 1000 });
  process.stdout.write(`func-runtime: ${r.namespace}/${r.name}: 100% of the traffic to ${r.to}${r.from && r.from !== r.to ? ` (was ${r.from})` : ''}; the next deploy sends it to the latest revision\n`);
}

export function rollbackCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, RollbackArgs> {
  return {
    command: 'rollback [path]',
    describe: 'Send all of a Knative Service\'s traffic to its previous ready revision (or --to one)',
    builder: (y) =>
      withTargetFlags(y)
        .option('to', { type: 'string', describe: 'the revision to send the traffic to [default: the newest ready one before the one serving]' })
        .option('timeout', { type: 'number', default: 60, describe: 'seconds to wait for the Route to serve it' }) as unknown as Argv<RollbackArgs>,
    handler: (argv) => rollback(argv).then(() => exit(0), onError),
  };
}
