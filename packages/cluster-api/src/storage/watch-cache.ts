/**
 * The watch cache (Kubernetes' cacher, kine's broadcaster): one upstream storage watch per resource
 * prefix, a ring buffer of its recent events, and fan-out to every subscriber through a bounded
 * queue. Writers never wait for watchers; a subscriber whose queue overflows is cut off alone.
 *
 * Revision invariant: every event with revision > `floor` is in the ring or still to arrive from the
 * upstream, so a subscription from R ≥ floor is exact (none lost, none repeated); one below it is
 * served from the backend's history (Compacted, 410 Expired above, when that is gone too).
 */
import { StorageError } from './errors.js';
import type { Storage, StorageEvent, Watch, WatchHandlers, WatchOptions } from './interface.js';

export interface WatchCacheOptions {
  /** Events kept per resource prefix for replay. */
  capacity?: number;
  /** Pending events per subscriber before it is cut off. */
  maxQueue?: number;
}

export const DEFAULT_WATCH_CACHE = { capacity: 4096, maxQueue: 10_000 } as const;

/** A subscription: `afterRevision` is exact (0 = everything since an empty store), unlike Storage.watch. */
export type Subscription = Watch & {
  /** Highest revision this subscriber has been brought up to: everything ≤ it was delivered or did not match. */
  progress(): number;
};

class Subscriber implements Subscription {
  queue: StorageEvent[] = [];
  closed = false;

  constructor(
    readonly opts: WatchOptions,
    private readonly handlers: WatchHandlers,
    private delivered: number,
    private readonly feed: Feed,
  ) {}

  matches(key: string): boolean {
    return this.opts.prefix ? key.startsWith(this.opts.key) : key === this.opts.key;
  }

  push(ev: StorageEvent): void {
    if (this.closed || ev.revision <= this.delivered || !this.matches(ev.kv.key)) return;
    if (this.queue.length >= this.feed.maxQueue) {
      this.fail(new StorageError('Unavailable', this.opts.key, 'watcher fell too far behind and was cut off'));
      return;
    }
    this.queue.push(ev);
    this.feed.schedule(this);
  }

  flush(): void {
    if (this.closed || this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.delivered = batch[batch.length - 1]!.revision;
    try {
      this.handlers.onEvents(batch);
    } catch (err) {
      this.fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  progress(): number {
    return this.queue.length > 0 ? this.delivered : Math.max(this.delivered, this.feed.latest);
  }

  fail(err: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    this.feed.subscribers.delete(this);
    queueMicrotask(() => this.handlers.onError(err));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    this.feed.subscribers.delete(this);
  }
}

/**
 * A resume point older than the ring (the cache started later, or the watcher lagged): the backend
 * replays it from its own history, or answers Compacted when that is gone too. Rare by design —
 * informers resume from recent revisions — so these few watchers get their own upstream.
 */
const direct = (storage: Storage, opts: WatchOptions, handlers: WatchHandlers): Subscription => {
  let delivered = opts.afterRevision;
  const watch = storage.watch(opts, {
    onEvents: (events) => {
      delivered = events[events.length - 1]?.revision ?? delivered;
      handlers.onEvents(events);
    },
    onError: (err) => handlers.onError(err),
  });
  return { close: () => watch.close(), progress: () => delivered };
};

/** One resource prefix: the upstream watch, the ring and the subscribers. */
class Feed {
  readonly subscribers = new Set<Subscriber>();
  private readonly ring: (StorageEvent | undefined)[];
  private head = 0;
  private size = 0;
  floor = 0;
  latest = 0;
  private upstream?: Watch;
  /** Subscribers with queued events, flushed together once per event-loop turn. */
  private readonly dirty = new Set<Subscriber>();
  private flushing = false;
  /** Until the floor is known no subscription can be placed exactly. */
  started = false;
  readonly ready: Promise<void>;

  constructor(
    private readonly storage: Storage,
    readonly prefix: string,
    capacity: number,
    readonly maxQueue: number,
    private readonly onEnd: (f: Feed) => void,
  ) {
    this.ring = new Array<StorageEvent | undefined>(capacity);
    this.ready = this.start();
    // A feed that could not start is forgotten, so the next subscription tries again.
    this.ready.catch(() => this.onEnd(this));
  }

  private async start(): Promise<void> {
    const rev = await this.storage.currentRevision();
    const handlers: WatchHandlers = { onEvents: (evs) => this.accept(evs), onError: (err) => this.end(err) };
    // afterRevision 0 means "from now" to a backend: on a store that has never been written that
    // leaves a moment between reading the revision and subscribing. Take the revision again after
    // subscribing: every event above it is certain to arrive, so it is the floor.
    this.upstream = this.storage.watch({ key: this.prefix, prefix: true, afterRevision: rev }, handlers);
    this.floor = rev > 0 ? rev : await this.storage.currentRevision();
    this.latest = Math.max(this.latest, this.floor);
    this.started = true;
  }

  private accept(events: readonly StorageEvent[]): void {
    for (const ev of events) {
      const capacity = this.ring.length;
      if (this.size === capacity) {
        this.floor = this.ring[this.head]!.revision;
        this.head = (this.head + 1) % capacity;
        this.size--;
      }
      this.ring[(this.head + this.size) % capacity] = ev;
      this.size++;
      this.latest = Math.max(this.latest, ev.revision);
      for (const s of this.subscribers) s.push(ev);
    }
  }

  /**
   * Delivery waits for the end of the current event-loop turn (setImmediate): every write committed
   * in that turn reaches a subscriber as one batch, so under load batches grow and each watcher's
   * socket sees one write per turn instead of one per event. Idle, it costs a single turn.
   */
  schedule(sub: Subscriber): void {
    this.dirty.add(sub);
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => {
      this.flushing = false;
      const subs = [...this.dirty];
      this.dirty.clear();
      for (const s of subs) s.flush();
    });
  }

  subscribe(opts: WatchOptions, handlers: WatchHandlers): Subscription {
    if (opts.afterRevision < this.floor) return direct(this.storage, opts, handlers);
    const sub = new Subscriber(opts, handlers, opts.afterRevision, this);
    this.subscribers.add(sub);
    for (let i = 0; i < this.size; i++) sub.push(this.ring[(this.head + i) % this.ring.length]!);
    return sub;
  }

  /** The upstream ended (backend closed or unreachable): every subscriber learns it; the next subscription starts afresh. */
  private end(err: Error): void {
    this.onEnd(this);
    for (const s of [...this.subscribers]) s.fail(err);
  }

  close(): void {
    this.upstream?.close();
    this.onEnd(this);
  }

  get retained(): number {
    return this.size;
  }
}

export class WatchCache {
  private readonly feeds = new Map<string, Feed>();
  private readonly capacity: number;
  private readonly maxQueue: number;

  constructor(
    private readonly storage: Storage,
    options: WatchCacheOptions = {},
  ) {
    this.capacity = Math.max(1, options.capacity ?? DEFAULT_WATCH_CACHE.capacity);
    this.maxQueue = Math.max(1, options.maxQueue ?? DEFAULT_WATCH_CACHE.maxQueue);
  }

  private feed(prefix: string): Feed {
    let feed = this.feeds.get(prefix);
    if (!feed) {
      feed = new Feed(this.storage, prefix, this.capacity, this.maxQueue, (f) => {
        if (this.feeds.get(f.prefix) === f) this.feeds.delete(f.prefix);
      });
      this.feeds.set(prefix, feed);
    }
    return feed;
  }

  /**
   * Resolves once the upstream for `resourcePrefix` is established: a list read after this is at a
   * revision the cache can continue from, which makes list-then-watch atomic.
   */
  async ready(resourcePrefix: string): Promise<void> {
    await this.feed(resourcePrefix).ready;
  }

  /** `opts.key` must lie under `resourcePrefix`; call `ready(resourcePrefix)` first. */
  subscribe(resourcePrefix: string, opts: WatchOptions, handlers: WatchHandlers): Subscription {
    if (!opts.key.startsWith(resourcePrefix)) throw new StorageError('InvalidArgument', opts.key, `key outside ${resourcePrefix}`);
    const feed = this.feed(resourcePrefix);
    if (!feed.started) throw new StorageError('InvalidArgument', opts.key, `the watch cache for ${resourcePrefix} is not ready`);
    return feed.subscribe(opts, handlers);
  }

  /** Subscribers and retained events per prefix: for tests and the benchmark. */
  stats(): { prefix: string; subscribers: number; retained: number; floor: number; latest: number }[] {
    return [...this.feeds.values()].map((f) => ({
      prefix: f.prefix, subscribers: f.subscribers.size, retained: f.retained, floor: f.floor, latest: f.latest,
    }));
  }

  /** Stop every upstream; open subscribers stay silent (their owners close them). */
  close(): void {
    for (const f of [...this.feeds.values()]) f.close();
  }
}
