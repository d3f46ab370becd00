/**
 * `func-runtime rollback [path] [--to <revision>]`: all of a Knative Service's traffic to the ready
 * revision before the one serving, or to the one named; `func-runtime traffic --split rev=percent…`:
 * any split, as `kn service update --traffic` (deploy/revisions.ts). The next deploy sends the
 * traffic to the latest revision again.
 */
import type { Argv, CommandModule } from 'yargs';
import type { TrafficResult } from '../deploy/revisions.js';
import type { Exit } from '../lifecycle.js';
import { withTargetFlags, type TargetFlags } from './deploy-flags.js';

interface TrafficArgs extends TargetFlags {
  timeout: number;
}

const formatTraffic = (r: TrafficResult): string =>
  `func-runtime: ${r.namespace}/${r.name}: ${r.traffic.filter((x) => x.percent).map((x) => `${x.percent}% to ${x.revisionName}${x.tag ? ` (tag ${x.tag})` : ''}`).join(', ')}${r.from ? ` (was ${r.from})` : ''}; the next deploy sends it all to the latest revision\n`;

const withTimeout = <T>(y: Argv<T>) => withTargetFlags(y).option('timeout', { type: 'number', default: 60, describe: 'seconds to wait for the Route to serve it' });

export function rollbackCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, TrafficArgs & { to?: string }> {
  const run = async (argv: TrafficArgs & { to?: string }) => {
    const { rollbackTarget, setTraffic } = await import('../deploy/revisions.js');
    process.stdout.write(formatTraffic(await setTraffic({ ...argv, timeoutMs: argv.timeout * 1000 }, (ksvc, revisions) => [{ revisionName: rollbackTarget(ksvc, revisions, argv.to), percent: 100 }])));
  };
  return {
    command: 'rollback [path]',
    describe: 'Send all of a Knative Service\'s traffic to its previous ready revision (or --to one)',
    builder: (y) => withTimeout(y).option('to', { type: 'string', describe: 'the revision to send the traffic to [default: the newest ready one before the one serving]' }) as unknown as Argv<TrafficArgs & { to?: string }>,
    handler: (argv) => run(argv).then(() => exit(0), onError),
  };
}

export function trafficCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, TrafficArgs & { split: string[] }> {
  const run = async (argv: TrafficArgs & { split: string[] }) => {
    const { parseSplit, setTraffic } = await import('../deploy/revisions.js');
    process.stdout.write(formatTraffic(await setTraffic({ ...argv, timeoutMs: argv.timeout * 1000 }, (ksvc, revisions) => parseSplit(argv.split, revisions, ksvc.metadata.name))));
  };
  return {
    command: 'traffic [path]',
    describe: 'Split a Knative Service\'s traffic between its revisions: --split hello-00001=90 --split @latest=10',
    builder: (y) => withTimeout(y).option('split', { type: 'string', array: true, demandOption: true, describe: '<revision>=<percent> or @latest=<percent> (repeatable; the percents sum to 100)' }) as unknown as Argv<TrafficArgs & { split: string[] }>,
    handler: (argv) => run(argv).then(() => exit(0), onError),
  };
}
