/**
 * The watch cache (Kubernetes' cacher, kine's broadcaster): one upstream storage watch per resource
 * prefix, a ring buffer of its recent events, and the one fan-out (fanout.ts) to every subscriber.
 * Writers never wait for watchers; a subscriber whose queue overflows is cut off alone.
 *
 * Each upstream event is turned once into the cache's entry (`entry`, the registry's decoded event)
 * and that one entry is what every subscriber receives, so work done on it is shared.
 *
 * Revision invariant: every event with revision > `floor` is in the ring or still to arrive from the
 * upstream, so a subscription from R ≥ floor is exact (none lost, none repeated); one below it is
 * served from the backend's history (Compacted, 410 Expired above, when that is gone too).
 */
import { StorageError } from './errors.js';
import { endOfTurn, FanOut, type FanOutEvent, type FanOutHandlers, type Subscription } from './fanout.js';
import type { KeyValue, Storage, StorageEvent, Watch, WatchOptions } from './interface.js';

export type { Subscription } from './fanout.js';

export interface WatchCacheOptions {
  /** Events kept per resource prefix for replay. */
  capacity?: number;
  /** Pending events per subscriber before it is cut off. */
  maxQueue?: number;
}

export const DEFAULT_WATCH_CACHE = { capacity: 4096, maxQueue: 10_000 } as const;

export interface CacheHandlers<E> extends FanOutHandlers<E> {
  /**
   * With `watch` from the current state: that state, as put events read at `revision`, before any
   * change; called once a page, and once at least (with no events when there is nothing).
   */
  onState?(events: readonly E[], revision: number): void;
}

const StatePage = 500;

/**
 * A resume point older than the ring (the cache started later, or the watcher lagged): the backend
 * replays it from its own history, or answers Compacted when that is gone too. Rare by design —
 * informers resume from recent revisions — so these few watchers get their own upstream.
 */
const direct = <E>(storage: Storage, opts: WatchOptions, handlers: FanOutHandlers<E>, entry: (ev: StorageEvent) => E): Subscription => {
  let delivered = opts.afterRevision;
  const watch = storage.watch(opts, {
    onEvents: (events) => {
      delivered = events[events.length - 1]?.revision ?? delivered;
      handlers.onEvents(events.map(entry));
    },
    onError: (err) => handlers.onError(err),
  });
  return { close: () => watch.close(), progress: () => delivered };
};

/** One resource prefix: the upstream watch, the ring and the fan-out to its subscribers. */
class Feed<E extends FanOutEvent> {
  readonly fanOut: FanOut<E>;
  private readonly ring: (E | undefined)[];
  private head = 0;
  private size = 0;
  floor = 0;
  private upstream?: Watch;
  /** Until the floor is known no subscription can be placed exactly. */
  started = false;
  readonly ready: Promise<void>;

  constructor(
    private readonly storage: Storage,
    readonly prefix: string,
    capacity: number,
    maxQueue: number,
    private readonly entry: (ev: StorageEvent) => E,
    private readonly onEnd: (f: Feed<E>) => void,
  ) {
    this.ring = new Array<E | undefined>(capacity);
    this.fanOut = new FanOut<E>({ maxQueue, defer: endOfTurn });
    this.ready = this.start();
    // A feed that could not start is forgotten, so the next subscription tries again.
    this.ready.catch(() => this.onEnd(this));
  }

  private async start(): Promise<void> {
    const rev = await this.storage.currentRevision();
    // afterRevision 0 means "from now" to a backend: on a store that has never been written that
    // leaves a moment between reading the revision and subscribing. Take the revision again after
    // subscribing: every event above it is certain to arrive, so it is the floor.
    this.upstream = this.storage.watch(
      { key: this.prefix, prefix: true, afterRevision: rev },
      { onEvents: (evs) => this.accept(evs), onError: (err) => this.end(err) },
    );
    this.floor = rev > 0 ? rev : await this.storage.currentRevision();
    this.fanOut.latest = Math.max(this.fanOut.latest, this.floor);
    this.started = true;
  }

  get latest(): number {
    return this.fanOut.latest;
  }

  private accept(events: readonly StorageEvent[]): void {
    const entries = events.map(this.entry);
    const capacity = this.ring.length;
    for (const e of entries) {
      if (this.size === capacity) {
        this.floor = this.ring[this.head]!.revision;
        this.head = (this.head + 1) % capacity;
        this.size--;
      }
      this.ring[(this.head + this.size) % capacity] = e;
      this.size++;
    }
    this.fanOut.publish(entries);
  }

  private *retainedEntries(): Generator<E> {
    for (let i = 0; i < this.size; i++) yield this.ring[(this.head + i) % this.ring.length]!;
  }

  subscribe(opts: WatchOptions, handlers: FanOutHandlers<E>): Subscription {
    if (opts.afterRevision < this.floor) return direct(this.storage, opts, handlers, this.entry);
    return this.fanOut.add(opts, handlers, opts.afterRevision, this.retainedEntries());
  }

  /** The upstream ended (backend closed or unreachable): every subscriber learns it; the next subscription starts afresh. */
  private end(err: Error): void {
    this.onEnd(this);
    this.fanOut.failAll(err);
  }

  close(): void {
    this.upstream?.close();
    this.onEnd(this);
  }

  get retained(): number {
    return this.size;
  }
}

/** A stored value as the put event that would have created it, for a watch's initial state. */
const stateEvent = (kv: KeyValue): StorageEvent => ({ type: 'put', kv, revision: kv.modRevision });

/** The prefix a watch's initial state is read under: the key's own folder for a single object. */
const stateScope = (opts: { key: string; prefix: boolean }): string => (opts.prefix ? opts.key : opts.key.slice(0, opts.key.lastIndexOf('/') + 1));

export class WatchCache<E extends FanOutEvent = StorageEvent> {
  private readonly feeds = new Map<string, Feed<E>>();
  private readonly capacity: number;
  private readonly maxQueue: number;
  private readonly entry: (ev: StorageEvent) => E;

  constructor(
    private readonly storage: Storage,
    options: WatchCacheOptions & { entry?: (ev: StorageEvent) => E } = {},
  ) {
    this.capacity = Math.max(1, options.capacity ?? DEFAULT_WATCH_CACHE.capacity);
    this.maxQueue = Math.max(1, options.maxQueue ?? DEFAULT_WATCH_CACHE.maxQueue);
    this.entry = options.entry ?? ((ev) => ev as unknown as E);
  }

  private feed(prefix: string): Feed<E> {
    let feed = this.feeds.get(prefix);
    if (!feed) {
      feed = new Feed(this.storage, prefix, this.capacity, this.maxQueue, this.entry, (f) => {
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

  /**
   * `afterRevision` is exact here (0 = everything since an empty store), unlike Storage.watch.
   * `opts.key` must lie under `resourcePrefix`; call `ready(resourcePrefix)` first.
   */
  subscribe(resourcePrefix: string, opts: WatchOptions, handlers: FanOutHandlers<E>): Subscription {
    if (!opts.key.startsWith(resourcePrefix)) throw new StorageError('InvalidArgument', opts.key, `key outside ${resourcePrefix}`);
    const feed = this.feed(resourcePrefix);
    if (!feed.started) throw new StorageError('InvalidArgument', opts.key, `the watch cache for ${resourcePrefix} is not ready`);
    return feed.subscribe(opts, handlers);
  }

  /**
   * The whole of a watch: without `afterRevision`, first the current state under `opts.key` (to
   * `handlers.onState`, read at one revision once the upstream is up), then every change after that
   * revision; with it, every change after it. Storage errors of the state read are thrown.
   */
  async watch(resourcePrefix: string, opts: { key: string; prefix: boolean; afterRevision?: number }, handlers: CacheHandlers<E>): Promise<Subscription> {
    await this.ready(resourcePrefix);
    const after = opts.afterRevision ?? (await this.state(opts, handlers));
    return this.subscribe(resourcePrefix, { key: opts.key, prefix: opts.prefix, afterRevision: after }, handlers);
  }

  /** Reads the state under `opts.key` page by page at one revision; answers that revision. */
  private async state(opts: { key: string; prefix: boolean }, handlers: CacheHandlers<E>): Promise<number> {
    let revision = 0;
    let startAfter: string | undefined;
    for (;;) {
      const page = await this.storage.list({ prefix: stateScope(opts), revision, limit: StatePage, startAfter });
      revision = page.revision;
      const items = opts.prefix ? page.items : page.items.filter((kv) => kv.key === opts.key);
      const last = !page.more || page.items.length === 0;
      if (items.length > 0 || last) handlers.onState?.(items.map((kv) => this.entry(stateEvent(kv))), revision);
      if (last) return revision;
      startAfter = page.items[page.items.length - 1]!.key;
    }
  }

  /** Subscribers and retained events per prefix: for tests and the benchmark. */
  stats(): { prefix: string; subscribers: number; retained: number; floor: number; latest: number }[] {
    return [...this.feeds.values()].map((f) => ({
      prefix: f.prefix, subscribers: f.fanOut.size, retained: f.retained, floor: f.floor, latest: f.latest,
    }));
  }

  /** Stop every upstream; open subscribers stay silent (their owners close them). */
  close(): void {
    for (const f of [...this.feeds.values()]) f.close();
  }
}
