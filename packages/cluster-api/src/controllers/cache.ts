/**
 * An in-process informer: every object of one store, listed then watched, indexed by namespace and by
 * controller owner, shared by every controller that reads the kind (client-go's shared informers and
 * listers), filled through the manager's own client. Each controller sees it through an ObjectCache
whose `store` is that controller's client for the resource (its own identity), writes through it
and hands what it wrote to `observe`, so their
 * next pass sees their own writes at once: no "expectations" to wait out as client-go needs, and no
 * duplicate creates. A change is applied only when its resourceVersion is not older than the one
 * held, and a deleted uid never comes back, so a late watch event cannot undo a write seen earlier.
 */
import type { KubeObject } from '../api/meta.js';
import type { ApiClient, ResourceClient } from '../client/interface.js';
import { SystemContext } from './shared.js';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';
export type ChangeHandler = (type: ChangeType, obj: KubeObject, old: KubeObject | undefined) => void;

const keyOf = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
const revision = (o: KubeObject | undefined): number => Number(o?.metadata.resourceVersion ?? 0) || 0;

/** The uid of the controlling owner (metav1.GetControllerOf), if any. */
export const controllerUid = (o: KubeObject): string | undefined => o.metadata.ownerReferences?.find((r) => r.controller === true)?.uid;

/** How long a deleted uid is remembered: far longer than any watch lags behind a write. */
const TombstoneMs = 10 * 60_000;

/** One resource's objects, filled by one list-then-watch through `store` (the reading client). */
class SharedCache {
  private readonly objects = new Map<string, KubeObject>();
  private readonly namespaces = new Map<string, Map<string, KubeObject>>();
  private readonly owned = new Map<string, Map<string, KubeObject>>();
  private readonly gone = new Map<string, number>();
  private readonly handlers: ChangeHandler[] = [];
  private watch?: { close(): void };
  private stopped = false;
  private markSynced!: () => void;
  /** Resolves once the first list is in. */
  readonly synced = new Promise<void>((resolve) => (this.markSynced = resolve));

  /**
   * `resolve` gives the store to list and watch: looked up again at each relist, so a resource served
   * anew (a CustomResourceDefinition replaced: its old store's watches end) is followed again.
   */
  constructor(
    private readonly resolve: () => ResourceClient | undefined,
    private readonly log?: (entry: Record<string, unknown>) => void,
  ) {}

  on(handler: ChangeHandler): void {
    this.handlers.push(handler);
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.objects.get(`${namespace ?? ''}/${name}`);
  }

  /** Every object, or those of one namespace. */
  list(namespace?: string): KubeObject[] {
    if (namespace === undefined) return [...this.objects.values()];
    return [...(this.namespaces.get(namespace)?.values() ?? [])];
  }

  /** Objects whose controlling owner has this uid. */
  ownedBy(uid: string): KubeObject[] {
    return [...(this.owned.get(uid)?.values() ?? [])];
  }

  /** A write's answer, applied at once (its watch event follows and changes nothing). */
  observe(written: KubeObject): void {
    this.apply(this.objects.has(keyOf(written)) ? 'MODIFIED' : 'ADDED', written);
  }

  /** A delete's answer: gone now if it was removed, else (finalizers, grace) the marked object. */
  observeDelete(obj: KubeObject, deleted: boolean | undefined): void {
    this.apply(deleted === false ? 'MODIFIED' : 'DELETED', obj);
  }

  start(): void {
    void this.relist();
  }

  stop(): void {
    this.stopped = true;
    this.watch?.close();
  }

  private async relist(): Promise<void> {
    if (this.stopped) return;
    const store = this.resolve();
    if (!store) return this.retry();
    try {
      const list = await store.list(SystemContext, {});
      const seen = new Set<string>();
      for (const o of list.items) {
        seen.add(keyOf(o));
        this.apply(this.objects.has(keyOf(o)) ? 'MODIFIED' : 'ADDED', o);
      }
      for (const [key, o] of [...this.objects]) if (!seen.has(key) && revision(o) <= Number(list.metadata.resourceVersion)) this.apply('DELETED', o);
      this.markSynced();
      this.watch = await store.watch(SystemContext, { resourceVersion: list.metadata.resourceVersion }, {
        onEvent: (e) => {
          if (e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED') this.apply(e.type, e.object);
        },
        onError: () => this.retry(),
        // The resource stopped being served by this store: list and watch again through whichever serves it now.
        onEnd: () => this.retry(),
      });
      if (this.stopped) this.watch.close();
    } catch (err) {
      this.log?.({ level: 'warn', msg: 'cache list failed', resource: store.definition.plural, error: String((err as Error)?.message ?? err) });
      this.retry();
    }
  }

  private retry(): void {
    if (!this.stopped) setTimeout(() => void this.relist(), 1000).unref();
  }

  private apply(type: ChangeType, obj: KubeObject): void {
    const key = keyOf(obj);
    const uid = obj.metadata.uid ?? '';
    if (this.gone.has(uid)) return;
    const old = this.objects.get(key);
    const same = old?.metadata.uid === uid;
    // Older than what is held: a late event of this object, or of one the held object replaced.
    if (old && revision(obj) < revision(old)) return;
    if (type === 'DELETED') {
      this.forget(uid);
      if (!same) return;
      this.unindex(key, old!);
      return this.notify('DELETED', obj, old);
    }
    if (old) this.unindex(key, old);
    this.index(key, obj);
    if (old && !same) {
      this.forget(old.metadata.uid ?? '');
      this.notify('DELETED', old, undefined);
    }
    this.notify(type === 'MODIFIED' && !same ? 'ADDED' : type, obj, same ? old : undefined);
  }

  private notify(type: ChangeType, obj: KubeObject, old: KubeObject | undefined): void {
    for (const h of this.handlers) h(type, obj, old);
  }

  private forget(uid: string): void {
    const now = Date.now();
    this.gone.set(uid, now);
    if (this.gone.size % 256 === 0) for (const [u, at] of this.gone) if (now - at > TombstoneMs) this.gone.delete(u);
  }

  private index(key: string, o: KubeObject): void {
    this.objects.set(key, o);
    const ns = o.metadata.namespace ?? '';
    if (!this.namespaces.has(ns)) this.namespaces.set(ns, new Map());
    this.namespaces.get(ns)!.set(key, o);
    const owner = controllerUid(o);
    if (owner) {
      if (!this.owned.has(owner)) this.owned.set(owner, new Map());
      this.owned.get(owner)!.set(key, o);
    }
  }

  private unindex(key: string, o: KubeObject): void {
    this.objects.delete(key);
    this.namespaces.get(o.metadata.namespace ?? '')?.delete(key);
    const owner = controllerUid(o);
    if (owner) {
      const m = this.owned.get(owner);
      m?.delete(key);
      if (m?.size === 0) this.owned.delete(owner);
    }
  }
}

/** A controller's view of a shared cache: reads from it, `store` the controller's own client. */
export class ObjectCache {
  constructor(
    private readonly shared: SharedCache,
    readonly store: ResourceClient,
  ) {}

  get synced(): Promise<void> {
    return this.shared.synced;
  }

  on(handler: ChangeHandler): void {
    this.shared.on(handler);
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.shared.get(namespace, name);
  }

  list(namespace?: string): KubeObject[] {
    return this.shared.list(namespace);
  }

  ownedBy(uid: string): KubeObject[] {
    return this.shared.ownedBy(uid);
  }

  observe(written: KubeObject): void {
    this.shared.observe(written);
  }

  observeDelete(obj: KubeObject, deleted: boolean | undefined): void {
    this.shared.observeDelete(obj, deleted);
  }
}

/**
 * One cache per resource, made on first use and shared by every controller asking for it, filled
 * through `reader` (kube-controller-manager's shared informers run as its own identity).
 */
export class Caches {
  private readonly caches = new Map<string, SharedCache>();

  constructor(
    private readonly reader: ApiClient,
    private readonly log?: (entry: Record<string, unknown>) => void,
  ) {}

  /** The cache of `store`'s resource, seen by the controller `store` belongs to. */
  of(store: ResourceClient): ObjectCache {
    const { group, version, plural } = store.definition;
    const key = `${group}/${version}/${plural}`;
    const generation = this.reader.generation;
    let cache = this.caches.get(key);
    if (!cache) {
      const initial = this.reader.find(group, version, plural) ?? store;
      cache = new SharedCache(() => this.reader.find(group, version, plural) ?? (this.reader.generation === generation ? initial : undefined), this.log);
      this.caches.set(key, cache);
      cache.start();
    }
    return new ObjectCache(cache, store);
  }

  stop(): void {
    for (const c of this.caches.values()) c.stop();
  }
}
