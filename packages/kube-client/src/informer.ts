/**
 * An informer, as client-go's reflector + store: list, then watch from the list's resourceVersion;
 * keep a local cache by namespace/name; call handlers on add, update and delete. A 410 (the version
 * is gone from the server's history) means list again, reporting what changed meanwhile; any other
 * end of the watch resumes from the last version seen, after a backoff that grows while failures
 * repeat. `synced` resolves after the first list has been delivered. The cache is an IndexedStore
 * (indexes, out-of-order writes dropped, a writer's own answers applied at once by `observe`). What it lists and watches is a
 * ListerWatcher (client-go's cache.ListerWatcher): a KubeClient's resource over HTTP, or any other
 * client's (cluster-api's in-process ApiClient).
 */
import type { KubeClient, ListOptions } from './client.js';
import { isExpired } from './errors.js';
import type { ResourceType } from './resources.js';
import type { KubeList, KubeObject, WatchEvent } from './types.js';
import type { WatchOptions } from './watch.js';
import { IndexedStore, keyOf, type Change, type Indexers } from './indexed-store.js';

/** The list (every page) and the watch an informer runs on. A watch failure is thrown from the iteration (a KubeApiError 410: list again). */
export interface ListerWatcher<T> {
  list(opts: ListOptions): Promise<KubeList<T>>;
  watch(opts: WatchOptions): AsyncIterable<WatchEvent<T>>;
}

/** A resource through a KubeClient. */
export const kubeListerWatcher = <T>(kube: KubeClient, type: ResourceType): ListerWatcher<T> => ({
  list: (opts) => kube.listAll<T>(type, opts),
  watch: (opts) => kube.watch<T>(type, opts),
});

export interface InformerOptions<T = KubeObject> {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size of the list (default 500). */
  pageSize?: number;
  /** Backoff after a failed list or watch: from minBackoffMs doubling to maxBackoffMs (default 200 ms → 30 s). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Server-side watch timeout: the watch is renewed after it (default 5 minutes, as client-go). */
  watchTimeoutSeconds?: number;
  /** Called for every failure the informer recovers from (for logs); never with credentials. */
  onError?: (err: unknown) => void;
  /** Indexes kept beside the cache, read with `byIndex` (client-go's Indexers). */
  indexers?: Indexers<T>;
}

type Handler<T> = (obj: T, old?: T) => void;

export class Informer<T extends KubeObject = KubeObject> {
  private readonly store: IndexedStore<T>;
  private readonly handlers = { add: [] as Handler<T>[], update: [] as Handler<T>[], delete: [] as Handler<T>[] };
  private readonly abort = new AbortController();
  private resourceVersion = '';
  private running?: Promise<void>;
  private markSynced!: () => void;
  /** Resolves once the first list is in the cache and its handlers have run. */
  readonly synced = new Promise<void>((resolve) => (this.markSynced = resolve));
  /** How many times the informer listed (1 + relists after 410). */
  lists = 0;

  private readonly source: ListerWatcher<T>;

  constructor(client: KubeClient | ListerWatcher<T>, private readonly type: ResourceType, private readonly options: InformerOptions<T> = {}) {
    this.source = 'listAll' in client ? kubeListerWatcher<T>(client, type) : client;
    this.store = new IndexedStore<T>(options.indexers);
  }

  /** `delete` handlers get the object as last seen (the event's), and the one held before it. */
  on(event: 'add' | 'update' | 'delete', handler: Handler<T>): this {
    this.handlers[event].push(handler);
    return this;
  }

  get(name: string, namespace?: string): T | undefined {
    return this.store.get(`${this.type.namespaced ? (namespace ?? this.options.namespace ?? '') : ''}/${name}`);
  }

  list(): T[] {
    return this.store.list();
  }

  /** The objects an indexer (`options.indexers`) files under `value`. */
  byIndex(name: string, value: string): T[] {
    return this.store.byIndex(name, value);
  }

  /**
   * A write's answer (create, update, patch), applied at once: `get`, `list` and the handlers see the
   * writer's own write before its watch event comes (which then changes nothing older). A write that
   * changed nothing (the answer is the version held: same uid and resourceVersion) tells the handlers
   * nothing: a controller whose handlers requeue it would otherwise loop on its own no-op updates.
   */
  observe(written: T): void {
    const held = this.store.get(keyOf(written));
    if (held && held.metadata?.uid === written.metadata?.uid && held.metadata?.resourceVersion === written.metadata?.resourceVersion) return;
    this.emit(this.store.apply('MODIFIED', written));
  }

  /** A delete's answer: gone now when it was removed (`deleted`), else (finalizers, grace) the marked object. */
  observeDelete(obj: T, deleted: boolean | undefined): void {
    this.emit(this.store.apply(deleted === false ? 'MODIFIED' : 'DELETED', obj));
  }

  start(): this {
    this.running ??= this.run();
    return this;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  private emit(changes: readonly Change<T>[]): void {
    for (const { event, obj, old } of changes) {
      for (const h of this.handlers[event]) {
        try {
          h(obj, old);
        } catch (err) {
          this.options.onError?.(err);
        }
      }
    }
  }

  private async relist(): Promise<void> {
    const opts: ListOptions = { namespace: this.options.namespace, labelSelector: this.options.labelSelector, fieldSelector: this.options.fieldSelector, limit: this.options.pageSize ?? 500 };
    const list = await this.source.list(opts);
    this.lists++;
    this.emit(this.store.replace(list.items, list.metadata.resourceVersion));
    this.resourceVersion = list.metadata.resourceVersion ?? '';
    this.markSynced();
  }

  private async watchOnce(): Promise<void> {
    const events = this.source.watch({
      namespace: this.options.namespace, labelSelector: this.options.labelSelector, fieldSelector: this.options.fieldSelector,
      resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: this.options.watchTimeoutSeconds ?? 300, signal: this.abort.signal,
    });
    for await (const event of events) {
      const obj = event.object;
      if (obj.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
      if (event.type === 'BOOKMARK') continue;
      this.emit(this.store.apply(event.type, obj));
    }
  }

  private async run(): Promise<void> {
    const min = this.options.minBackoffMs ?? 200;
    const max = this.options.maxBackoffMs ?? 30_000;
    let backoff = min;
    let needList = true;
    while (!this.abort.signal.aborted) {
      try {
        if (needList) await this.relist();
        needList = false;
        const started = Date.now();
        await this.watchOnce();
        // A watch that ran a while ended by its timeout: renew at once. One that ended at once backs off.
        if (Date.now() - started > 1_000) {
          backoff = min;
          continue;
        }
      } catch (err) {
        if (this.abort.signal.aborted) return;
        if (isExpired(err)) {
          needList = true;
          continue;
        }
        this.options.onError?.(err);
      }
      await sleep(backoff * (0.8 + Math.random() * 0.4), this.abort.signal);
      backoff = Math.min(backoff * 2, max);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
