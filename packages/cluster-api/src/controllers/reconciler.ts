/**
 * The one shape of a controller (controller-runtime's): `reconcile(key) → { requeueAfter? }` over a
 * keyed, rate-limited work queue (queue.ts), fed by sources that turn changes into keys — a shared
 * cache (cache.ts), or a plain watch of a resource for controllers that keep no copy of it (a
 * deadline, a namespace being emptied). The queue runs once every cache source has its first list;
 * a reconcile that throws is retried with back-off, one that asks for `requeueAfter` runs again then.
 */
import type { KubeObject } from '../api/meta.js';
import type { ResourceClient } from '../client/interface.js';
import type { ObjectCache } from './cache.js';
import { objectKey, splitKey } from './context.js';
import { follow, type Controller } from './shared.js';
import { WorkQueue, type QueueOptions, type Result } from './queue.js';

export { requeueAfter, type Result } from './queue.js';

export type Reconcile = (key: string) => Promise<Result | void>;

/** Which keys a change wakes: by default the object's own (`namespace/name`, `/name` when cluster-scoped). */
export type KeysOf = (obj: KubeObject, old: KubeObject | undefined, type: 'ADDED' | 'MODIFIED' | 'DELETED') => readonly string[];

export type Source =
  | { cache: ObjectCache; keys?: KeysOf }
  /** A watch of every object of a resource; `admitCreated` skips creations that cannot matter undecoded. */
  | { watch: ResourceClient; keys?: KeysOf; admitCreated?: (stored: Uint8Array) => boolean };

const ownKey: KeysOf = (obj) => [objectKey(obj)];

export interface Reconciler extends Controller {
  /** Reconcile `key` (after `afterMs`, unless it is due sooner already). */
  enqueue(key: string, afterMs?: number): void;
  readonly isStopped: boolean;
}

/**
 * The running half of every reconciler: `queue`'s workers start once every cache it reads has its
 * first list; stop ends `more` (its watches), then the queue. Controllers that wire their own
 * handlers to the queue (the workload controllers: owners woken by their pods) call it directly.
 */
export const keyed = (queue: WorkQueue, reads: readonly ObjectCache[], ...more: { stop(): unknown }[]): Controller => {
  let stopped = false;
  void Promise.all(reads.map((c) => c.synced)).then(() => stopped || queue.start());
  return {
    stop: async () => {
      stopped = true;
      for (const m of more) await m.stop();
      await queue.stop();
    },
  };
};

/**
 * The queue of a workload controller, keyed by `cache`'s objects: every change of one queues it, and
 * `sync` gets the cached object (a key whose object has gone syncs nothing). Run it with `keyed`.
 */
export function objectQueue(name: string, cache: ObjectCache, sync: (o: KubeObject) => Promise<Result | void>, opts: QueueOptions = {}): WorkQueue {
  const queue = new WorkQueue(name, async (key) => {
    const { namespace, name } = splitKey(key);
    const o = cache.get(namespace, name);
    return o && sync(o);
  }, opts);
  cache.on((_, o) => queue.add(objectKey(o)));
  return queue;
}

export function startReconciler(name: string, reconcile: Reconcile, sources: readonly Source[], opts: QueueOptions = {}): Reconciler {
  const queue = new WorkQueue(name, reconcile, opts);
  const state = { isStopped: false };
  const watches: { stop(): void }[] = [];
  for (const source of sources) {
    const keys = source.keys ?? ownKey;
    if ('cache' in source) source.cache.on((type, obj, old) => keys(obj, old, type).forEach((k) => queue.add(k)));
    else {
      const w = follow(source.watch, state, (type, obj) => keys(obj, undefined, type).forEach((k) => queue.add(k)), source.admitCreated);
      watches.push({ stop: () => w.close() });
    }
  }
  const running = keyed(queue, sources.flatMap((s) => ('cache' in s ? [s.cache] : [])), { stop: () => void (state.isStopped = true) }, ...watches);
  return {
    enqueue: (key, afterMs = 0) => queue.addAfter(key, afterMs),
    get isStopped() {
      return state.isStopped;
    },
    stop: () => running.stop(),
  };
}

/**
 * A controller whose work is one pass over all it follows (the garbage collector's graph, every
 * CRD, every node's health): one key, so passes never overlap and changes arriving during one bring
 * exactly one more; `kick` asks for a pass (by default after a 20 ms debounce that gathers a burst),
 * and one runs at least every `resyncMs` (work that failed or waits on time).
 */
export function startSingleton(name: string, pass: () => Promise<Result | void>, resyncMs: number, opts: QueueOptions = {}): Reconciler & { kick(afterMs?: number): void } {
  const r = startReconciler(name, async () => ({ requeueAfter: Math.min((await pass())?.requeueAfter ?? resyncMs, resyncMs) }), [], { ...opts, workers: 1 });
  // The first pass is due one period after start even when nothing kicks it: each pass schedules the next,
  // so the resync (a kind added at run time, a deadline) never depends on a change arriving first.
  r.enqueue(name, resyncMs);
  return Object.assign(r, { kick: (afterMs = 20) => r.enqueue(name, afterMs) });
}
