/**
 * The ping adapter (Knative's mt-ping): one scheduler in this process for every PingSource. Each
 * scheduled source is one timer set for its next fire (the CronJob controller's cron parser and
 * time zone arithmetic, controllers/cronjob/schedule.ts; the zone is `spec.timezone`, else UTC, as
 * mt-ping runs), so an idle source costs one pending timer and nothing per tick. At each fire the
 * event is sent after a random delay under 500 ms (Knative's, to spread sources firing together),
 * with the sender's retries (emit.ts).
 */
import { isDeepStrictEqual } from 'node:util';
import { parseSchedule } from '../../registry/kinds/cron.js';
import { nextFire } from '../../controllers/cronjob/schedule.js';
import { emit, failure, withContext } from '../emit.js';
import { pingEvent, type PingSpec } from './event.js';
import type { Router } from '../../broker/dispatch/cluster-hosts.js';

export interface Scheduled {
  namespace: string;
  name: string;
  spec: PingSpec;
  sinkUri: string;
}

/** What became of one fire: sent, or why not. */
export type PingResult = { source: Scheduled; id: string; error?: string };

/** When a PingSource fires next after `afterMs`: its schedule in its `timezone`, else UTC (mt-ping's zone). */
export const nextPingAt = (spec: PingSpec, afterMs: number): number | undefined => nextFire(parseSchedule(spec.schedule ?? ''), afterMs, spec.timezone || 'UTC');

const Jitter = 500;
/** setTimeout's limit; a later fire is reached in steps. */
const MaxTimer = 2 ** 31 - 1;

export class PingAdapter {
  private readonly entries = new Map<string, { scheduled: Scheduled; timer: NodeJS.Timeout }>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private stopped = false;

  constructor(private readonly onResult: (r: PingResult) => void = () => undefined, private readonly router?: Router) {}

  /** Schedules (or reschedules, when its spec or sink changed) the source under `key`. */
  upsert(key: string, scheduled: Scheduled): void {
    const current = this.entries.get(key);
    if (current && isDeepStrictEqual(current.scheduled, scheduled)) return;
    this.remove(key);
    if (!this.stopped) this.arm(key, scheduled, Date.now());
  }

  remove(key: string): void {
    const current = this.entries.get(key);
    if (current) clearTimeout(current.timer);
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  private arm(key: string, scheduled: Scheduled, after: number): void {
    const at = nextPingAt(scheduled.spec, after);
    if (at === undefined) return;
    const wait = (): NodeJS.Timeout => setTimeout(() => {
      if (Date.now() < at) return void (entry.timer = wait());
      this.fire(scheduled);
      if (this.entries.get(key) === entry) this.arm(key, scheduled, at);
    }, Math.min(Math.max(at - Date.now(), 0), MaxTimer)).unref();
    const entry = { scheduled, timer: undefined as unknown as NodeJS.Timeout };
    entry.timer = wait();
    this.entries.set(key, entry);
  }

  private fire(s: Scheduled): void {
    const { attributes, data } = pingEvent(s.namespace, s.name, s.spec);
    const event = withContext(attributes, data, s.spec.ceOverrides);
    const id = String(event.attributes.id);
    const sending = new Promise((r) => setTimeout(r, Math.floor(Math.random() * Jitter)).unref())
      .then(() => emit(s.sinkUri, event, undefined, this.router))
      .then((outcome) => this.onResult({ source: s, id, ...(failure(outcome) && { error: failure(outcome) }) }))
      .finally(() => this.inFlight.delete(sending));
    this.inFlight.add(sending);
  }

  /** No more fires; waits for the sends under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const key of [...this.entries.keys()]) this.remove(key);
    await Promise.allSettled([...this.inFlight]);
  }
}
