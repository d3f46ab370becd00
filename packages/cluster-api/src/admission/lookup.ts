/**
 * What plugins read besides the request: the objects of a kind in the request's namespace (the
 * LimitRanges, the ResourceQuotas), read fresh from storage on each request, as the API server's
 * own store sees them.
 */
import type { KubeObject } from '../api/meta.js';
import type { ResourceStore } from '../registry/rest.js';
import type { AdmissionRequest } from './plugin.js';

/** The objects of `group/version/plural` in the request's namespace; none when the kind is not served. */
export const namespaceObjects = async (req: AdmissionRequest, group: string, version: string, plural: string): Promise<KubeObject[]> => {
  const store = req.services.find(group, version, plural);
  if (!store || !req.namespace) return [];
  return (await store.list({ namespace: req.namespace }, {})).items;
};

/** One read per request of what several steps of a plugin use (its mutate and its validate). */
export const perRequest = <T>(read: (req: AdmissionRequest) => Promise<T>): ((req: AdmissionRequest) => Promise<T>) => {
  const seen = new WeakMap<AdmissionRequest, Promise<T>>();
  return (req) => {
    let p = seen.get(req);
    if (!p) seen.set(req, (p = read(req)));
    return p;
  };
};

/**
 * A kind's objects as an informer's lister holds them (OpenShift's SCC admission reads SCCs so,
 * kube-apiserver's LimitRanger and ResourceQuota their kinds): listed once, kept, and listed again
 * after any change its watch reports, or as soon as this server has written to the kind since (its
 * store's `writes`), so a lister never misses a write this server made, even one whose watch event
 * has not arrived. A watch from the current state replays that state first, so nothing written
 * before it started is missed; another server's write arrives by the watch, as to an informer.
 * `shape` turns the list into what readers use (sorted, grouped), once per list.
 */
export class WatchedList<T> {
  private current?: Promise<T>;
  private listedAtWrites = -1;
  private watching?: Promise<{ close(): void }>;

  constructor(
    private readonly store: ResourceStore,
    private readonly shape: (items: KubeObject[]) => T,
  ) {}

  get(): Promise<T> {
    this.watching ??= this.watch();
    const writes = this.store.writes ?? -1;
    if (writes !== this.listedAtWrites || writes === -1) this.current = undefined;
    if (!this.current) {
      this.listedAtWrites = writes;
      this.current = this.store.list({}, {}).then((l) => this.shape(l.items), (err: unknown) => {
        this.current = undefined;
        throw err;
      });
    }
    return this.current;
  }

  private watch(): Promise<{ close(): void }> {
    const forget = () => (this.current = undefined);
    const restart = () => {
      forget();
      this.watching = undefined;
    };
    const watching = this.store.watch({}, {}, { onEvent: forget, onError: restart, onEnd: restart });
    watching.catch(restart);
    return watching;
  }
}

const watched = new WeakMap<ResourceStore, WatchedList<unknown>>();

/** The one WatchedList of `store` (per shape: one shape per store in this server). */
export const watchedList = <T>(store: ResourceStore, shape: (items: KubeObject[]) => T): WatchedList<T> => {
  let list = watched.get(store) as WatchedList<T> | undefined;
  if (!list) watched.set(store, (list = new WatchedList(store, shape)));
  return list;
};

const byNamespace = (items: KubeObject[]): Map<string, KubeObject[]> => {
  const out = new Map<string, KubeObject[]>();
  for (const o of items) {
    const ns = o.metadata.namespace ?? '';
    const list = out.get(ns);
    if (list) list.push(o);
    else out.set(ns, [o]);
  }
  return out;
};

/**
 * The objects of `group/version/plural` in the request's namespace, from the kind's lister
 * (WatchedList): most namespaces have none, and then no request reads storage. A plugin that must be
 * exact (a quota's charge) reads the store again before it writes.
 */
export const listedNamespaceObjects = async (req: AdmissionRequest, group: string, version: string, plural: string): Promise<KubeObject[]> => {
  const store = req.services.find(group, version, plural);
  if (!store || !req.namespace) return [];
  return (await watchedList(store, byNamespace).get()).get(req.namespace) ?? [];
};
