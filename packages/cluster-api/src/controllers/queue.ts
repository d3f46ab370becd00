/**
 * A keyed work queue (client-go's workqueue with its rate limiter): a key is processed by one worker
 * at a time, a key added while it waits is processed once, a key added while it is processed is
 * processed again afterwards, failures come back with exponential back-off, and a sync may ask to be
 * run again after a delay (a progress deadline, minReadySeconds, the next cron time).
 */
import { isApiError } from '../api/errors.js';

/** What a reconcile returns (controller-runtime's Result): nothing, or when (ms from now) its key wants another look. */
export interface Result {
  /** Run this key again after this many ms (a deadline, a wait on something else). */
  requeueAfter?: number;
}

/** The Result of a reconcile due again in `ms` (undefined: not on time). */
export const requeueAfter = (ms: number | undefined): Result => (ms === undefined ? {} : { requeueAfter: ms });

export interface QueueOptions {
  /** Keys processed at once (kube-controller-manager runs 5 workers per controller by default). */
  workers?: number;
  log?: (entry: Record<string, unknown>) => void;
}

const MinBackoffMs = 10;
const MaxBackoffMs = 30_000;

export class WorkQueue {
  private readonly waiting = new Set<string>();
  private readonly order: string[] = [];
  private readonly active = new Set<string>();
  private readonly dirtyWhileActive = new Set<string>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private pumping = false;
  private stopped = false;
  private started = false;

  constructor(
    private readonly name: string,
    private readonly sync: (key: string) => Promise<Result | void>,
    private readonly opts: QueueOptions = {},
  ) {}

  /** Workers start here (after the caches the syncs read are filled); keys added before wait. */
  start(): void {
    this.started = true;
    this.schedule();
  }

  add(key: string): void {
    if (this.stopped) return;
    if (this.active.has(key)) return void this.dirtyWhileActive.add(key);
    if (this.waiting.has(key)) return;
    this.waiting.add(key);
    this.order.push(key);
    this.schedule();
  }

  /** Adds `key` after `ms`, unless it is already due sooner. */
  addAfter(key: string, ms: number): void {
    if (this.stopped) return;
    if (ms <= 0) return this.add(key);
    const at = Date.now() + ms;
    const had = this.timers.get(key);
    if (had && had.at <= at) return;
    clearTimeout(had?.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.timers.set(key, { at, timer });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t.timer);
    this.timers.clear();
    await Promise.all([...this.running]);
  }

  /** Keys added in one tick (a burst of watch events) are taken together. */
  private schedule(): void {
    if (this.pumping || !this.started) return;
    this.pumping = true;
    setImmediate(() => {
      this.pumping = false;
      this.pump();
    });
  }

  private pump(): void {
    const workers = this.opts.workers ?? 5;
    while (!this.stopped && this.active.size < workers && this.order.length > 0) {
      const key = this.order.shift()!;
      this.waiting.delete(key);
      this.active.add(key);
      const run = this.process(key);
      this.running.add(run);
      void run.finally(() => this.running.delete(run));
    }
  }

  private async process(key: string): Promise<void> {
    try {
      const after = (await this.sync(key))?.requeueAfter;
      this.failures.delete(key);
      if (typeof after === 'number' && Number.isFinite(after)) this.addAfter(key, Math.max(after, 1));
    } catch (err) {
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      // A conflict is someone else's newer write: look again at once, it is not a failure to report.
      if (!(isApiError(err) && err.code === 409)) {
        this.opts.log?.({ level: 'warn', controller: this.name, key, msg: String((err as Error)?.message ?? err) });
      }
      this.addAfter(key, Math.min(MinBackoffMs * 2 ** (n - 1), MaxBackoffMs));
    } finally {
      this.active.delete(key);
      if (this.dirtyWhileActive.delete(key)) this.add(key);
      this.schedule();
    }
  }
}
