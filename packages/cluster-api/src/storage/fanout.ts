/**
 * The one fan-out of watch events (kine's broadcaster): each subscriber has a key or prefix and a
 * bounded queue; writers only append, delivery happens later in one batch per subscriber, and a
 * subscriber that falls too far behind is cut off alone. The single-writer backends (memory, SQLite)
 * feed their storage watches through one, and the watch cache its subscribers.
 *
 * Ordering invariant: a subscriber is added together with its replay (the events after its start it
 * must see first) in one synchronous step, and every later event reaches `publish` in revision order
 * on the same thread, so replay plus published tail is exactly the changes after the start — none
 * lost, none doubled (anything at or below the highest revision taken is dropped as a duplicate).
 * Handlers never run inside `add` or `publish`: delivery is deferred by `options.defer`.
 */
import { StorageError } from './errors.js';
import type { StorageEvent, Watch, WatchHandlers } from './interface.js';

/** What a fan-out carries: a storage event, or something that extends one (the registry's decoded events). */
export type FanOutEvent = Pick<StorageEvent, 'revision' | 'kv'>;

export interface FanOutHandlers<E> {
  onEvents(events: readonly E[]): void;
  onError(err: Error): void;
}

/** A subscription: `progress` is the revision everything up to which was delivered or did not match. */
export type Subscription = Watch & { progress(): number };

export interface FanOutOptions {
  /** Events queued for one subscriber (beyond its replay) before it is cut off with Unavailable. */
  maxQueue: number;
  /**
   * When queued events leave: the backends use a microtask (right after the write's own step); the
   * watch cache the end of the event-loop turn, so every write committed in a turn is one batch.
   */
  defer(flush: () => void): void;
}

export const microtask = (flush: () => void): void => queueMicrotask(flush);
export const endOfTurn = (flush: () => void): void => void setImmediate(flush);

class Subscriber<E extends FanOutEvent> implements Subscription {
  private queue: E[] = [];
  closed = false;
  /** Highest revision queued or delivered (or the start): anything at or below it is a duplicate. */
  private taken: number;
  private delivered: number;

  constructor(
    private readonly key: string,
    private readonly prefix: boolean,
    private readonly handlers: FanOutHandlers<E>,
    start: number,
    private readonly fanOut: FanOut<E>,
  ) {
    this.taken = start;
    this.delivered = start;
  }

  /** Queues `ev` if it is new and under the key; false when the bound is exceeded (`bounded`). */
  offer(ev: E, bounded: boolean): boolean {
    if (this.closed || ev.revision <= this.taken) return true;
    const key = ev.kv.key;
    if (this.prefix ? !key.startsWith(this.key) : key !== this.key) return true;
    if (bounded && this.queue.length >= this.fanOut.maxQueue) return false;
    this.queue.push(ev);
    this.taken = ev.revision;
    return true;
  }

  get pending(): boolean {
    return this.queue.length > 0;
  }

  flush(): void {
    if (this.closed || this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.delivered = batch[batch.length - 1]!.revision;
    try {
      this.handlers.onEvents(batch);
    } catch (err) {
      // A handler that throws cannot be trusted to have seen the batch: end loudly, not with a gap.
      this.fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  progress(): number {
    return this.queue.length > 0 ? this.delivered : Math.max(this.delivered, this.fanOut.latest);
  }

  /** Terminal: what is queued is still delivered, then the error. */
  fail(err: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.fanOut.remove(this);
    const pending = this.queue;
    this.queue = [];
    this.fanOut.options.defer(() => {
      if (pending.length > 0) {
        try {
          this.handlers.onEvents(pending);
        } catch {
          // The watch is ending with err anyway.
        }
      }
      this.handlers.onError(err);
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    this.fanOut.remove(this);
  }
}

export class FanOut<E extends FanOutEvent = StorageEvent> {
  private readonly subscribers = new Set<Subscriber<E>>();
  private readonly dirty = new Set<Subscriber<E>>();
  private scheduled = false;
  /** Highest revision published (or known to be reached): a subscriber with nothing queued is up to it. */
  latest = 0;

  constructor(readonly options: FanOutOptions) {}

  get maxQueue(): number {
    return this.options.maxQueue;
  }

  /**
   * A subscriber of `key` (or everything under it, `prefix`) that sees every event after `start`:
   * first those of `replay` (in revision order, not counted against the bound), then those published.
   * The caller must compute `replay` in the same synchronous step.
   */
  add(watch: { key: string; prefix: boolean }, handlers: FanOutHandlers<E>, start: number, replay: Iterable<E> = []): Subscription {
    const sub = new Subscriber(watch.key, watch.prefix, handlers, start, this);
    this.subscribers.add(sub);
    for (const ev of replay) sub.offer(ev, false);
    this.schedule(sub);
    return sub;
  }

  /** A subscription that only reports `err` (invalid options, a compacted start, a closed backend). */
  failed(handlers: WatchHandlers | FanOutHandlers<E>, err: Error): Subscription {
    const sub = new Subscriber<E>('', true, handlers as FanOutHandlers<E>, 0, this);
    sub.fail(err);
    return sub;
  }

  publish(events: Iterable<E>): void {
    for (const ev of events) {
      if (ev.revision > this.latest) this.latest = ev.revision;
      for (const sub of this.subscribers) {
        if (sub.offer(ev, true)) this.schedule(sub);
        else sub.fail(new StorageError('Unavailable', ev.kv.key, 'watcher fell too far behind and was cut off'));
      }
    }
  }

  /** Ends every subscription with `err` (backend closing, upstream lost). */
  failAll(err: Error): void {
    for (const sub of [...this.subscribers]) sub.fail(err);
  }

  get size(): number {
    return this.subscribers.size;
  }

  /** @internal */
  remove(sub: Subscriber<E>): void {
    this.subscribers.delete(sub);
    this.dirty.delete(sub);
  }

  private schedule(sub: Subscriber<E>): void {
    if (!sub.pending) return;
    this.dirty.add(sub);
    if (this.scheduled) return;
    this.scheduled = true;
    this.options.defer(() => {
      this.scheduled = false;
      const subs = [...this.dirty];
      this.dirty.clear();
      for (const s of subs) s.flush();
    });
  }
}

/**
 * Events one storage watcher may have waiting beyond its replay: far more than a turn's writes (a
 * group commit), so only a watcher whose handler stopped consuming reaches it.
 */
export const BackendMaxQueue = 100_000;

/** The fan-out of a single-writer backend: delivery right after the write's own step. */
export const backendFanOut = (): FanOut => new FanOut({ maxQueue: BackendMaxQueue, defer: microtask });
