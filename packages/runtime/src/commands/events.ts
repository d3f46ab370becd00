/**
 * `func-runtime events <tail|get|replay|filter-test>`: the broker's event debugger, over its durable
 * log (client/events-api.ts). Exit codes: 0 done, 1 the broker refused (401/403/404/400, its message
 * printed), 2 bad flags or kubeconfig, 3 nothing answered.
 */
import type { Argv, CommandModule } from 'yargs';
import type { Exit } from '../lifecycle.js';
import { withClusterFlags, type ClusterFlags } from './deploy-flags.js';

export const EVENTS_EXIT = { ok: 0, refused: 1, usage: 2, unreachable: 3 } as const;

interface EventsArgs extends ClusterFlags {
  action: string;
  target?: string;
  broker: string;
  filter?: string;
  follow: boolean;
  last?: number;
  'from-dead-letter': boolean;
  output: string;
}

type Step = { k: string; id: string; at: string; trigger?: string; matched?: boolean; why?: string; n?: number; url?: string; code?: number; ms?: number; outcome?: string; sink?: string; ok?: boolean; via?: string; replyTo?: string; attributes?: Record<string, unknown> };

/** One step of an event's path, as a line. */
function describeStep(s: Step): string {
  switch (s.k) {
    case 'event':
      return `${s.at}  stored (${s.via}${s.replyTo ? ` to ${s.replyTo} from ${s.trigger}` : ''})  ${s.id}  type=${String(s.attributes?.type)} source=${String(s.attributes?.source)}`;
    case 'match':
      return `${s.at}  ${s.trigger}: ${s.matched ? 'matched' : `not matched: ${s.why}`}`;
    case 'attempt':
      return `${s.at}  ${s.trigger}: attempt ${s.n} → ${s.url}: ${s.outcome}${s.code ? ` (HTTP ${s.code})` : ''}${s.why ? ` ${s.why}` : ''} in ${s.ms} ms`;
    case 'deadletter':
      return `${s.at}  ${s.trigger}: ${s.ok ? 'sent to the dead-letter sink' : 'the dead-letter sink failed too'} ${s.sink}`;
    case 'dropped':
      return `${s.at}  ${s.trigger ?? ''}: dropped: ${s.why}`;
    default:
      return `${s.at}  ${s.k}`;
  }
}

async function run(argv: EventsArgs, exit: Exit): Promise<void> {
  const { debuggerTarget, callDebugger, failureOf, DebuggerUsageError } = await import('../client/events-api.js');
  const { InvokeUsageError } = await import('../client/invoke-request.js');
  const usage = (m: string) => (process.stderr.write(`func-runtime events: ${m}\n`), exit(EVENTS_EXIT.usage));
  const needsTarget = argv.action === 'get' || argv.action === 'filter-test' || (argv.action === 'replay' && !argv['from-dead-letter']);
  if (needsTarget && !argv.target) return usage(`${argv.action} needs ${argv.action === 'filter-test' ? 'a Trigger name' : 'an event id'}${argv.action === 'replay' ? ' (or --from-dead-letter)' : ''}`);
  if (argv.action === 'replay' && argv['from-dead-letter'] && argv.target) return usage('replay takes an event id or --from-dead-letter, not both');
  if (argv.last !== undefined && (!Number.isInteger(argv.last) || argv.last < 1 || argv.last > 2000)) return usage('--last must be an integer from 1 to 2000');
  let target;
  try {
    target = await debuggerTarget(argv);
  } catch (err) {
    const e = err as Error & { unreachable?: boolean };
    process.stderr.write(`func-runtime events: ${e.message}\n`);
    if (err instanceof DebuggerUsageError || err instanceof InvokeUsageError) return exit(EVENTS_EXIT.usage);
    return exit(e.unreachable ? EVENTS_EXIT.unreachable : EVENTS_EXIT.refused);
  }
  const q = new URLSearchParams();
  if (argv.last !== undefined) q.set('last', String(argv.last));
  if (argv.action === 'tail' && argv.filter) q.set('filter', argv.filter);
  if (argv.action === 'tail' && argv.follow) q.set('follow', 'true');
  const broker = `brokers/${encodeURIComponent(target.broker)}`;
  const request =
    argv.action === 'tail' ? { method: 'GET' as const, path: `${broker}/events?${q}` }
    : argv.action === 'get' ? { method: 'GET' as const, path: `${broker}/events/${encodeURIComponent(argv.target!)}` }
    : argv.action === 'replay' ? { method: 'POST' as const, path: argv.target ? `${broker}/events/${encodeURIComponent(argv.target)}/replay` : `${broker}/replay?from=dead-letter` }
    : { method: 'GET' as const, path: `triggers/${encodeURIComponent(argv.target!)}/filter-test?${q}` };
  let res: Response;
  try {
    res = await callDebugger(target, request.method, request.path);
  } catch (err) {
    process.stderr.write(`func-runtime events: cannot reach the broker at ${target.base}: ${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}\n`);
    return exit(EVENTS_EXIT.unreachable);
  }
  if (!res.ok) {
    process.stderr.write(`func-runtime events: the broker refused: ${await failureOf(res)}\n`);
    return exit(EVENTS_EXIT.refused);
  }
  const json = argv.output === 'json';
  if (argv.action === 'tail') {
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const text = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        process.stdout.write(`${json ? text : describeStep(JSON.parse(text) as Step)}\n`);
      }
    }
    return exit(EVENTS_EXIT.ok);
  }
  const body = (await res.json()) as Record<string, unknown>;
  if (json) process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  else if (argv.action === 'get') for (const s of body.steps as Step[]) process.stdout.write(`${describeStep(s)}\n`);
  else if (argv.action === 'replay') process.stdout.write(`replayed: ${(body.replayed as string[]).join(' ') || '(nothing)'}\n`);
  else {
    const results = body.results as { id: string; type: string; matched: boolean; why?: string }[];
    process.stdout.write(`Trigger ${String(body.trigger)} against the last ${results.length} events of broker ${String(body.broker)}:\n`);
    for (const r of results) process.stdout.write(`${r.matched ? 'MATCH   ' : 'NO MATCH'}  ${r.id}  type=${r.type}${r.why ? `  (${r.why})` : ''}\n`);
    process.stdout.write(`${results.filter((r) => r.matched).length} of ${results.length} match\n`);
  }
  exit(EVENTS_EXIT.ok);
}

export function eventsCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, EventsArgs> {
  return {
    command: 'events <action> [target]',
    describe: 'Debug events in a Broker (tail, get <id>, replay <id>|--from-dead-letter, filter-test <trigger>)',
    builder: (y) =>
      withClusterFlags(y)
        .positional('action', { type: 'string', choices: ['tail', 'get', 'replay', 'filter-test'], describe: 'tail: stream events as they pass; get: an event\'s whole path; replay: store it again; filter-test: a Trigger\'s filter against the last events' })
        .positional('target', { type: 'string', describe: 'the event id (get, replay) or the Trigger (filter-test)' })
        .option('broker', { type: 'string', default: 'default', describe: 'the Broker: <namespace>/<name> or <name> (the context\'s namespace, or -n)' })
        .option('filter', { type: 'string', describe: 'tail: a CESQL expression, e.g. \'type = "order.created"\'' })
        .option('follow', { type: 'boolean', default: true, describe: 'tail: keep streaming (--no-follow: print the last events and stop)' })
        .option('last', { type: 'number', describe: 'tail, filter-test: how many stored events (default 100, at most 2000)' })
        .option('from-dead-letter', { type: 'boolean', default: false, describe: 'replay: every event a Trigger dead-lettered or dropped' })
        .option('output', { alias: 'o', type: 'string', choices: ['text', 'json'], default: 'text', describe: 'output format' }) as unknown as Argv<EventsArgs>,
    handler: (argv) => run(argv, exit).catch(onError),
  };
}
