/**
 * Watch over the watch cache (Kubernetes' cacher semantics): unset or "0" resourceVersion first
 * replays the current state as ADDED at one snapshot, then streams every change after that snapshot,
 * so nothing is lost or repeated between the two (the cache's upstream is established before the
 * snapshot is read). Selectors are applied to both the old and the new object: leaving the selection
 * is DELETED, entering it is ADDED, as informers expect. Bookmarks carry only a resourceVersion.
 */
import type { KubeObject, WatchEvent } from '../api/meta.js';
import { isStorageError } from '../storage/errors.js';
import type { Storage, StorageEvent } from '../storage/interface.js';
import type { Subscription, WatchCache } from '../storage/watch-cache.js';
import { groupVersion, type RequestContext, type ResourceDefinition, type WatchQuery, type WatchSink } from './definition.js';
import { fromStorageError, tooOldResourceVersion } from './errors.js';
import { decode, groupResource, listPrefix, objectKey } from './meta.js';
import { objectFilter, parseResourceVersion, type ObjectFilter } from './list.js';

type Event = WatchEvent<KubeObject>;

export interface WatchDeps {
  storage: Storage;
  cache: WatchCache;
  /** How often a watch with allowWatchBookmarks gets a BOOKMARK (Kubernetes: about once a minute). */
  bookmarkIntervalMs: number;
}

interface Decoded {
  cur?: KubeObject;
  prev?: KubeObject;
}

/**
 * Every watcher of a prefix receives the same StorageEvent object from the cache: decode it once.
 * The decoded objects are shared between watchers and must be treated as read-only.
 */
const decodedEvents = new WeakMap<StorageEvent, Decoded>();
const decodeEvent = (ev: StorageEvent): Decoded => {
  let d = decodedEvents.get(ev);
  if (!d) {
    d = { prev: ev.prevKv ? decode(ev.prevKv, ev.revision) : undefined, cur: ev.type === 'put' ? decode(ev.kv) : undefined };
    decodedEvents.set(ev, d);
  }
  return d;
};

/** The event (if any) one storage change produces for a watcher with this filter. */
export const translate = (def: ResourceDefinition, ev: StorageEvent, matches: ObjectFilter): Event | undefined => {
  const { cur, prev } = decodeEvent(ev);
  if (ev.type === 'delete') {
    const gone = prev ?? tombstone(def, ev.kv.key, ev.revision);
    return matches(gone) ? { type: 'DELETED', object: gone } : undefined;
  }
  const curOk = matches(cur!);
  const prevOk = prev !== undefined && matches(prev);
  if (curOk) return { type: prev && prevOk ? 'MODIFIED' : 'ADDED', object: cur! };
  return prevOk ? { type: 'DELETED', object: prev } : undefined;
};

/** A deleted key whose last value the backend did not keep: name and namespace from the key. */
const tombstone = (def: ResourceDefinition, key: string, revision: number): KubeObject => {
  const parts = key.split('/');
  const name = parts[parts.length - 1]!;
  const namespace = def.namespaced ? parts[parts.length - 2] : undefined;
  return { apiVersion: groupVersion(def), kind: def.kind, metadata: { name, namespace, resourceVersion: String(revision) } };
};

const replay = async (storage: Storage, prefix: string, matches: ObjectFilter, sink: WatchSink): Promise<number> => {
  let revision = 0;
  let startAfter: string | undefined;
  for (;;) {
    const page = await storage.list({ prefix, revision, limit: 500, startAfter });
    revision = page.revision;
    for (const kv of page.items) {
      const obj = decode(kv);
      if (matches(obj)) sink.onEvent({ type: 'ADDED', object: obj });
    }
    if (!page.more || page.items.length === 0) return revision;
    startAfter = page.items[page.items.length - 1]!.key;
  }
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
  def: ResourceDefinition,
  ctx: RequestContext,
  query: WatchQuery,
  sink: WatchSink,
): Promise<{ close(): void }> => {
  const filter = objectFilter(def, query.labelSelector, query.fieldSelector);
  const matches: ObjectFilter = query.name ? (o) => o.metadata.name === query.name && filter(o) : filter;
  const requested = parseResourceVersion(query.resourceVersion);
  const prefix = listPrefix(def, ctx.namespace);
  const resourcePrefix = listPrefix(def);
  const gr = groupResource(def);
  let after = requested;
  try {
    await deps.cache.ready(resourcePrefix);
    if (requested === 0) after = await replay(deps.storage, prefix, matches, sink);
  } catch (err) {
    throw fromStorageError(err, gr, query.name ?? '');
  }
  let open = true;
  let timer: NodeJS.Timeout | undefined;
  const close = () => {
    open = false;
    clearInterval(timer);
    sub.close();
  };
  const key = query.name ? objectKey(def, ctx.namespace, query.name) : prefix;
  const sub = deps.cache.subscribe(resourcePrefix, { key, prefix: !query.name, afterRevision: after }, {
    onEvents(events) {
      for (const ev of events) {
        if (!open) return;
        if (sink.admitCreated && ev.type === 'put' && !ev.prevKv && !sink.admitCreated(ev.kv.value)) continue;
        const out = translate(def, ev, matches);
        // A sink that throws (its client went away) ends this watch only, never the cache's fan-out.
        try {
          if (out) sink.onEvent(out);
        } catch {
          close();
        }
      }
    },
    onError(err) {
      if (!open) return;
      close();
      sink.onError(isStorageError(err, 'Compacted') ? tooOldResourceVersion(after, err.revision ?? 0) : fromStorageError(err, gr, ''));
    },
  });
  if (query.allowWatchBookmarks) timer = bookmarks(deps, def, sub, sink, close);
  return { close };
};
