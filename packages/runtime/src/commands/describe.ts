/**
 * `func-runtime describe [path]`: the deployed function at a glance (deploy/describe.ts), as text,
 * or as JSON / YAML for scripts.
 */
import type { Argv, CommandModule } from 'yargs';
import type { Description } from '../deploy/describe.js';
import type { Exit } from '../lifecycle.js';
import { withTargetFlags, type TargetFlags } from './deploy-flags.js';

interface DescribeArgs extends TargetFlags {
  output?: 'json' | 'yaml';
}

const ago = (time: string | undefined, now: number) => {
  if (!time) return '?';
  const s = Math.max(0, Math.round((now - Date.parse(time)) / 1000));
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : `${Math.round(s / 3600)}h`;
};

const ms = (seconds: number) => `${Math.round(seconds * 1000)} ms`;
/** A quantile read off the histogram: its bucket's upper bound (beyond the last bucket: above it). */
const bound = (seconds: number) => (Number.isFinite(seconds) ? `≤${ms(seconds)}` : '>10 s');

/** Rows as columns padded to their widest cell. */
export function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => r[i]!.length))) ?? [];
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ').trimEnd());
}

export function formatDescription(d: Description, now = Date.now()): string {
  const lines = [
    `Name:       ${d.name}`,
    `Namespace:  ${d.namespace}`,
    `Kind:       ${d.kind === 'Deployment' ? 'Deployment + Service' : 'Knative Service'}`,
    `Image:      ${d.image ?? '?'}`,
    `Replicas:   ${d.replicas.desired} desired | ${d.replicas.updated} updated | ${d.replicas.ready} ready | ${d.replicas.available} available`,
    'Pods:',
    ...(d.pods.length ? table([['NAME', 'STATUS', 'READY', 'RESTARTS', 'IP', 'NODE'], ...d.pods.map((p) => [p.name, p.status, p.ready ? 'yes' : 'no', String(p.restarts), p.podIP ?? '-', p.nodeName ?? '-'])]).map((l) => `  ${l}`) : ['  none']),
    ...(d.revisions ? ['Revisions:', ...(d.revisions.length ? table([['NAME', 'TRAFFIC', 'TAGS', 'READY', 'AGE', 'IMAGE'], ...d.revisions.map((r) => [r.name, `${r.percent}%`, r.tags.join(',') || '-', r.ready ? 'yes' : 'no', ago(r.created, now), r.image ?? '?'])]).map((l) => `  ${l}`) : ['  none'])] : []),
    ...(d.coldStarts?.length ? ['Cold starts (a request at zero pods to its answer, at the gateway):', ...table([['REVISION', 'COUNT', 'LAST', 'MEAN', 'P50', 'P99'], ...d.coldStarts.map((c) => [c.revision, String(c.count), ms(c.last), ms(c.mean), bound(c.p50), bound(c.p99)])]).map((l) => `  ${l}`)] : []),
    'Where:',
    ...(d.where.lines.length ? d.where.lines.map(([label, value]) => `  ${label}: ${value}`) : ['  not reachable yet']),
    ...(d.triggers.length ? ['Triggers:', ...d.triggers.map((t) => `  ${t}`)] : []),
    'Events:',
    ...(d.events.length ? table([['AGE', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'], ...d.events.map((e) => [ago(e.time, now), e.type ?? '', e.reason ?? '', e.object, `${e.message ?? ''}${e.count && e.count > 1 ? ` (x${e.count})` : ''}`])]).map((l) => `  ${l}`) : ['  none']),
  ];
  return `${lines.join('\n')}\n`;
}

async function describe(argv: DescribeArgs): Promise<void> {
  const { describeFunction } = await import('../deploy/describe.js');
  const d = await describeFunction(argv);
  if (argv.output === 'json') process.stdout.write(`${JSON.stringify(d, null, 2)}\n`);
  else if (argv.output === 'yaml') process.stdout.write((await import('yaml')).stringify(d));
  else process.stdout.write(formatDescription(d));
}

export function describeCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, DescribeArgs> {
  return {
    command: 'describe [path]',
    describe: 'Show a deployed function: image, replicas, pods, where it answers, recent Events',
    builder: (y) => withTargetFlags(y).option('output', { alias: 'o', choices: ['json', 'yaml'] as const, describe: 'machine-readable output' }) as unknown as Argv<DescribeArgs>,
    handler: (argv) => describe(argv).then(() => exit(0), onError),
  };
}
