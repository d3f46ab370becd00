/**
 * Watch over storage.watch (Kubernetes' etcd3 watcher semantics): unset or "0" resourceVersion first
 * replays the current state as ADDED at one snapshot, then streams every change after that snapshot,
 * so nothing is lost or repeated between the two. Selectors are applied to both the old and the new
 * object: leaving the selection is DELETED, entering it is ADDED, as informers expect.
 */
import type { KubeObject, WatchEvent } from '../api/meta.js';
import { isStorageError } from '../storage/errors.js';
import type { Storage, StorageEvent } from '../storage/interface.js';
import { groupVersion, type RequestContext, type ResourceDefinition, type WatchQuery, type WatchSink } from './definition.js';
import { fromStorageError, tooOldResourceVersion } from './errors.js';
import { decode, groupResource, listPrefix, objectKey } from './meta.js';
import { objectFilter, parseResourceVersion, type ObjectFilter } from './list.js';

type Event = WatchEvent<KubeObject>;

/** The event (if any) one storage change produces for a watcher with this filter. */
export const translate = (def: ResourceDefinition, ev: StorageEvent, matches: ObjectFilter): Event | undefined => {
  const prev = ev.prevKv ? decode(ev.prevKv, ev.revision) : undefined;
  if (ev.type === 'delete') {
    const gone = prev ?? tombstone(def, ev.kv.key, ev.revision);
    return matches(gone) ? { type: 'DELETED', object: gone } : undefined;
  }
  const cur = decode(ev.kv);
  const curOk = matches(cur);
  const prevOk = prev !== undefined && matches(prev);
  if (curOk) return { type: prev && prevOk ? 'MODIFIED' : 'ADDED', object: cur };
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

export const watchObjects = async (
  storage: Storage,
  def: ResourceDefinition,
  ctx: RequestContext,
  query: WatchQuery,
  sink: WatchSink,
): Promise<{ close(): void }> => {
  const filter = objectFilter(def, query.labelSelector, query.fieldSelector);
  const matches: ObjectFilter = query.name ? (o) => o.metadata.name === query.name && filter(o) : filter;
  const requested = parseResourceVersion(query.resourceVersion);
  const prefix = listPrefix(def, ctx.namespace);
  const gr = groupResource(def);
  let after = requested;
  try {
    if (requested === 0) after = await replay(storage, prefix, matches, sink);
  } catch (err) {
    throw fromStorageError(err, gr, query.name ?? '');
  }
  let open = true;
  let upstream: { close(): void } | undefined;
  const close = () => {
    open = false;
    upstream?.close();
  };
  const key = query.name ? objectKey(def, ctx.namespace, query.name) : prefix;
  upstream = storage.watch({ key, prefix: !query.name, afterRevision: after }, {
    onEvents(events) {
      for (const ev of events) {
        if (!open) return;
        const out = translate(def, ev, matches);
        // A sink that throws (its client went away) ends this watch only, never the storage's fan-out.
        try {
          if (out) sink.onEvent(out);
        } catch {
          close();
        }
      }
    },
    onError(err) {
      if (!open) return;
      open = false;
      sink.onError(isStorageError(err, 'Compacted') ? tooOldResourceVersion(after, err.revision ?? 0) : fromStorageError(err, gr, ''));
    },
  });
  if (!open) upstream.close();
  return { close };
};
