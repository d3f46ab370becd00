/**
 * Watch over the watch cache (Kubernetes' cacher semantics): unset or "0" resourceVersion first
 * replays the current state as ADDED at one snapshot, then streams every change after that snapshot,
 * so nothing is lost or repeated between the two (the cache reads the state once its upstream is up).
 * Selectors are applied to both the old and the new object: leaving the selection is DELETED,
 * entering it is ADDED, as informers expect. Bookmarks carry only a resourceVersion.
 */
import type { KubeObject, WatchEventType } from '../../api/meta.js';
import { isStorageError } from '../../storage/errors.js';
import type { FanOutEvent } from '../../storage/fanout.js';
import type { KeyValue, StorageEvent } from '../../storage/interface.js';
import type { Subscription, WatchCache } from '../../storage/watch-cache.js';
import { groupVersion, type ResourceDefinition } from '../definition.js';
import { type DeliveredEvent, type RequestContext, type WatchQuery, type WatchSink } from '../rest.js';
import { fromStorageError, tooOldResourceVersion } from '../../api/errors.js';
import type { Codec } from './codec.js';
import { groupResource, listPrefix, objectKey } from './meta.js';
import { objectFilter, parseResourceVersion, type ObjectFilter } from './list.js';

export interface WatchDeps {
  cache: WatchCache<CachedEvent>;
  /** How often a watch with allowWatchBookmarks gets a BOOKMARK (Kubernetes: about once a minute). */
  bookmarkIntervalMs: number;
}

/**
 * One storage change as every watcher of its resource receives it (the watch cache's entry). Each
 * group version its watchers ask for gets one view of it (`in`), in which the objects are decoded
 * once, on first need, and each event made of them (ADDED, MODIFIED, DELETED) exists once, with the
 * frames its watchers' encodings share. Read-only for everyone.
 */
export class CachedEvent implements FanOutEvent {
  readonly revision: number;
  readonly kv: KeyValue;
  /** The view most changes only ever need (one version watched); others, when several are. */
  private first?: VersionView;
  private others?: Map<Codec, VersionView>;

  constructor(readonly source: StorageEvent) {
    this.revision = source.revision;
    this.kv = source.kv;
  }

  /** The change as the group version of `codec` answers it. */
  in(codec: Codec): VersionView {
    if (!this.first) return (this.first = new VersionView(this.source, codec));
    if (this.first.codec === codec) return this.first;
    this.others ??= new Map();
    let view = this.others.get(codec);
    if (!view) this.others.set(codec, (view = new VersionView(this.source, codec)));
    return view;
  }
}

/** One change in one served version: its objects and its events, shared by every watcher of that version. */
export class VersionView {
  private cur?: KubeObject;
  private prev?: KubeObject | null;
  private readonly made: Partial<Record<WatchEventType, DeliveredEvent>> = {};

  constructor(
    private readonly source: StorageEvent,
    readonly codec: Codec,
  ) {}

  /** The object after a put. */
  current(): KubeObject {
    return (this.cur ??= this.codec.decode(this.source.kv));
  }

  /** The object before the change (at the change's revision, as Kubernetes reports a deletion). */
  previous(): KubeObject | undefined {
    if (this.prev === undefined) this.prev = this.source.prevKv ? this.codec.decode(this.source.prevKv, this.source.revision) : null;
    return this.prev ?? undefined;
  }

  /** The event of `type` about `object`, the same instance for every watcher that receives it. */
  event(type: WatchEventType, object: () => KubeObject): DeliveredEvent {
    return (this.made[type] ??= { type, object: object(), frames: new Map() });
  }
}

export const cachedEvent = (ev: StorageEvent): CachedEvent => new CachedEvent(ev);

/** The event (if any) one storage change produces for a watcher with this filter. */
export const translate = (def: ResourceDefinition, change: CachedEvent, codec: Codec, matches: ObjectFilter): DeliveredEvent | undefined => {
  const ev = change.in(codec);
  const prev = ev.previous();
  if (change.source.type === 'delete') {
    const gone = prev ?? tombstone(def, change.kv.key, change.revision);
    return matches(gone) ? ev.event('DELETED', () => gone) : undefined;
  }
  const cur = ev.current();
  const prevOk = prev !== undefined && matches(prev);
  if (matches(cur)) return ev.event(prevOk ? 'MODIFIED' : 'ADDED', () => cur);
  return prevOk ? ev.event('DELETED', () => prev) : undefined;
};

/** A deleted key whose last value the backend did not keep: name and namespace from the key. */
const tombstone = (def: ResourceDefinition, key: string, revision: number): KubeObject => {
  const parts = key.split('/');
  const name = parts[parts.length - 1]!;
  const namespace = def.namespaced ? parts[parts.length - 2] : undefined;
  return { apiVersion: groupVersion(def), kind: def.kind, metadata: { name, namespace, resourceVersion: String(revision) } };
};

/** Periodic BOOKMARKs at the subscription's progress: a client resuming from one misses nothing. */
const bookmarks = (deps: WatchDeps, def: ResourceDefinition, sub: Subscription, sink: WatchSink, close: () => void): NodeJS.Timeout => {
  const timer = setInterval(() => {
    const object = { apiVersion: groupVersion(def), kind: def.kind, metadata: { resourceVersion: String(sub.progress()) } };
    try {
      sink.onEvent({ type: 'BOOKMARK', object });
    } catch {
      close();
    }
  }, deps.bookmarkIntervalMs);
  timer.unref();
  return timer;
};

export const watchObjects = async (
  deps: WatchDeps,
  codec: Codec,
  def: ResourceDefinition,
  ctx: RequestContext,
  query: WatchQuery,
  sink: WatchSink,
): Promise<{ close(): void }> => {
  const filter = objectFilter(def, query.labelSelector, query.fieldSelector);
  const matches: ObjectFilter = query.name ? (o) => o.metadata.name === query.name && filter(o) : filter;
  const requested = parseResourceVersion(query.resourceVersion);
  const key = query.name ? objectKey(def, ctx.namespace, query.name) : listPrefix(def, ctx.namespace);
  const gr = groupResource(def);
  let after = requested;
  let open = true;
  let timer: NodeJS.Timeout | undefined;
  const close = () => {
    open = false;
    clearInterval(timer);
    sub?.close();
  };
  const deliver = (events: readonly CachedEvent[], state: boolean) => {
    for (const ev of events) {
      if (!open) return;
      if (!state && sink.admitCreated && ev.source.type === 'put' && !ev.source.prevKv && !sink.admitCreated(ev.kv.value)) continue;
      const out = translate(def, ev, codec, matches);
      // A sink that throws (its client went away) ends this watch only, never the cache's fan-out.
      try {
        if (out) sink.onEvent(out);
      } catch {
        close();
      }
    }
  };
  let sub: Subscription | undefined;
  try {
    sub = await deps.cache.watch(listPrefix(def), { key, prefix: !query.name, ...(requested > 0 && { afterRevision: requested }) }, {
      onState: (events, revision) => ((after = revision), deliver(events, true)),
      onEvents: (events) => deliver(events, false),
      onError(err) {
        if (!open) return;
        close();
        sink.onError(isStorageError(err, 'Compacted') ? tooOldResourceVersion(after, err.revision ?? 0) : fromStorageError(err, gr, ''));
      },
    });
  } catch (err) {
    throw fromStorageError(err, gr, query.name ?? '');
  }
  if (!open) sub.close();
  if (query.allowWatchBookmarks) timer = bookmarks(deps, def, sub, sink, close);
  return { close };
};
