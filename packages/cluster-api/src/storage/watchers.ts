/**
 * In-process watch fan-out for backends that are the only writer of their data (memory, SQLite).
 *
 * Ordering invariant: a backend registers a watcher and reads its replay (every stored change after
 * afterRevision) in one synchronous step, and publishes each committed change synchronously after
 * its commit. Nothing can interleave in between on the one JavaScript thread, so the replay plus the
 * published tail is exactly the changes after afterRevision — none lost, none doubled. Delivery is
 * deferred to a microtask so handlers never run inside watch() or inside a write.
 */
import type { StorageEvent, Watch, WatchHandlers, WatchOptions } from './interface.js';

class Watcher implements Watch {
  private queue: StorageEvent[] = [];
  private scheduled = false;
  private closed = false;
  /** Highest revision handed to onEvents (or the start point): anything ≤ it is a duplicate. */
  private delivered: number;

  constructor(
    private readonly opts: WatchOptions,
    private readonly handlers: WatchHandlers,
    start: number,
    private readonly detach: (w: Watcher) => void,
  ) {
    this.delivered = start;
  }

  matches(key: string): boolean {
    return this.opts.prefix ? key.startsWith(this.opts.key) : key === this.opts.key;
  }

  push(events: readonly StorageEvent[]): void {
    if (this.closed) return;
    for (const ev of events) if (this.matches(ev.kv.key)) this.queue.push(ev);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    queueMicrotask(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    if (this.closed) return;
    const batch = this.queue.filter((ev) => ev.revision > this.delivered);
    this.queue = [];
    if (batch.length === 0) return;
    this.delivered = batch[batch.length - 1]!.revision;
    try {
      this.handlers.onEvents(batch);
    } catch (err) {
      // A handler that throws cannot be trusted to have seen the batch: end the watch loudly
      // rather than continue with a gap.
      this.fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Terminal error: deliver after any events already queued, then stop. */
  fail(err: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.detach(this);
    const pending = this.queue.filter((ev) => ev.revision > this.delivered);
    this.queue = [];
    queueMicrotask(() => {
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
    this.detach(this);
  }
}

export class WatcherSet {
  private readonly watchers = new Set<Watcher>();

  /**
   * Registers a watcher whose history starts with `replay` (events after `start`, in revision
   * order). The caller must compute `replay` in the same synchronous step.
   */
  add(opts: WatchOptions, handlers: WatchHandlers, start: number, replay: readonly StorageEvent[]): Watch {
    const w = new Watcher(opts, handlers, start, (x) => this.watchers.delete(x));
    this.watchers.add(w);
    w.push(replay);
    return w;
  }

  /** A watch that only reports `err` (invalid options, compacted start, closed backend). */
  failed(opts: WatchOptions, handlers: WatchHandlers, err: Error): Watch {
    const w = new Watcher(opts, handlers, 0, () => undefined);
    w.fail(err);
    return w;
  }

  publish(events: readonly StorageEvent[]): void {
    for (const w of this.watchers) w.push(events);
  }

  /** Ends every watch with `err` (backend closing). */
  failAll(err: Error): void {
    for (const w of [...this.watchers]) w.fail(err);
  }

  get size(): number {
    return this.watchers.size;
  }
}
