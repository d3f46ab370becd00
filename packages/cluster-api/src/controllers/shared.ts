/**
 * What the controllers share: their options and stop handle, the request context they act in (the
 * client they act through sets the user), a watch over a resource that restarts itself until the
 * controller stops (the source of reconcilers that keep no cache), the managed resources the
 * garbage collector and the namespace controller walk, and the race-tolerant error handling.
 */
import type { KubeObject } from '../api/meta.js';
import type { RequestContext } from '../registry/rest.js';
import type { ApiClient, ResourceClient, ResourceInfo } from '../client/interface.js';
import { isApiError } from '../api/errors.js';

export interface ControllerOptions {
  /** Where reconcile failures go (they never stop the controller). */
  log?: (entry: Record<string, unknown>) => void;
}

export interface Controller {
  stop(): Promise<void>;
}

/** Controllers act as themselves, never on behalf of a user: the client they act through sets the user (this one is the API server's own loops' when they call the registry directly). */
export const SystemContext: RequestContext = { user: { name: 'system:controller', uid: '', groups: ['system:masters'] } };

export const inNamespace = (namespace: string | undefined): RequestContext => ({ ...SystemContext, namespace });

/**
 * The registry's generic stores a controller may act on: not the review kinds, not ComponentStatus,
 * and each object set once, through its storage version (`storedAs` marks the other versions of it).
 * `everyVersion` keeps the other versions too, for looking objects up by the apiVersion they are named with.
 */
export const managedStores = (registry: ApiClient, everyVersion = false): { def: ResourceInfo; store: ResourceClient }[] =>
  registry
    .definitions()
    .filter((def) => !def.ephemeral && def.verbs.includes('watch') && def.verbs.includes('delete') && (everyVersion || !def.storedAs))
    .map((def) => ({ def, store: registry.find(def.group, def.version, def.plural)! }))
    .filter((x) => x.store !== undefined);

export type Observe = (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject, store: ResourceClient) => void;

/**
 * Whether stored JSON mentions any of these field names. A controller that acts only on objects with
 * such a field skips decoding the rest: most objects never have them (see WatchSink.admitCreated).
 */
export const mentions = (...fields: string[]): ((stored: Uint8Array) => boolean) => {
  const needles = fields.map((f) => Buffer.from(`"${f}"`));
  return (stored) => {
    const bytes = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
    return needles.some((n) => bytes.includes(n));
  };
};

/**
 * Watch `store` across namespaces for as long as `loop` (a reconciler) runs, re-watching (with a fresh replay) after
 * an error. `admitCreated`: which creations `observe` needs to see (default all).
 */
export const follow = (store: ResourceClient, loop: { readonly isStopped: boolean }, observe: Observe, admitCreated?: (stored: Uint8Array) => boolean): { close(): void } => {
  let handle: { close(): void } | undefined;
  let closed = false;
  const start = (): void => {
    if (closed || loop.isStopped) return;
    const retry = () => setTimeout(start, 1000).unref();
    store
      .watch(SystemContext, {}, {
        onEvent: (e) => {
          if (e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED') observe(e.type, e.object, store);
        },
        onError: () => retry(),
        // The store's definition was removed: nothing is left to follow.
        onEnd: () => undefined,
        ...(admitCreated && { admitCreated }),
      })
      .then((h) => (closed ? h.close() : (handle = h)), retry);
  };
  start();
  return { close: () => ((closed = true), handle?.close()) };
};

/**
 * `follow` on every store `managedStores` gives, as definitions come and go while the server runs: a
 * store added since the last `sync` is followed from then on, a removed one is let go. Controllers
 * call `sync` at the start of each pass, so a new kind is watched within one resync period.
 */
export const followManaged = (registry: ApiClient, loop: { readonly isStopped: boolean }, observe: Observe, admitCreated?: (stored: Uint8Array) => boolean) => {
  const followed = new Map<ResourceClient, { close(): void }>();
  let generation = -1;
  const sync = (): void => {
    if (generation === registry.generation) return;
    generation = registry.generation;
    const current = new Set(managedStores(registry).map(({ store }) => store));
    for (const [store, watch] of followed) if (!current.has(store)) (watch.close(), followed.delete(store));
    for (const store of current) if (!followed.has(store)) followed.set(store, follow(store, loop, observe, admitCreated));
  };
  sync();
  return { sync, close: () => [...followed.values()].forEach((w) => w.close()) };
};

/** 404 and 409 mean someone else got there first: the next pass sees the new state. */
export const ignoreRaces = (err: unknown): void => {
  if (isApiError(err) && (err.code === 404 || err.code === 409)) return;
  throw err;
};
