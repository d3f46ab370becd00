/**
 * The controllers' shared informers (client-go's shared informers and listers): one kube-client
 * Informer per resource, listed then watched through the manager's own client (apiListerWatcher),
 * indexed by namespace and by controller owner, shared by every controller that reads the kind.
 * Each controller sees it through an ObjectCache whose `store` is that controller's client for the
 * resource (its own identity), writes through it and hands what it wrote to `observe`, so its next
 * pass sees its own write at once: no "expectations" to wait out as client-go needs, and no
 * duplicate creates. The Informer's store drops a change older than the object held and never
 * brings a deleted uid back, so a late watch event cannot undo a write seen earlier.
 */
import { Informer } from '@func/kube-client';
import type { KubeObject } from '../api/meta.js';
import type { ApiClient, ResourceClient } from '../client/interface.js';
import { apiListerWatcher } from '../client/lister-watcher.js';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';
export type ChangeHandler = (type: ChangeType, obj: KubeObject, old: KubeObject | undefined) => void;

/** The uid of the controlling owner (metav1.GetControllerOf), if any. */
export const controllerUid = (o: KubeObject): string | undefined => o.metadata.ownerReferences?.find((r) => r.controller === true)?.uid;

type SharedCache = Informer<KubeObject>;

const indexers = {
  namespace: (o: KubeObject) => [o.metadata.namespace ?? ''],
  controller: (o: KubeObject) => {
    const uid = controllerUid(o);
    return uid ? [uid] : [];
  },
};

/**
 * One resource's objects, filled by one list-then-watch through the reading client's store, looked up
 * again at each list and watch: a resource served anew (a CustomResourceDefinition replaced: its old
 * store's watches end) is followed again.
 */
const sharedCache = (store: () => ResourceClient | undefined, definition: ResourceClient['definition'], log?: (entry: Record<string, unknown>) => void): SharedCache =>
  new Informer<KubeObject>(apiListerWatcher<KubeObject>(store, definition.plural), definition, {
    namespace: '', indexers,
    onError: (err) => log?.({ level: 'warn', msg: 'cache list or watch failed', resource: definition.plural, error: String((err as Error)?.message ?? err) }),
  });

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
    this.shared
      .on('add', (o) => handler('ADDED', o, undefined))
      .on('update', (o, old) => handler('MODIFIED', o, old))
      .on('delete', (o, old) => handler('DELETED', o, old));
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.shared.get(name, namespace ?? '');
  }

  /** Every object, or those of one namespace. */
  list(namespace?: string): KubeObject[] {
    return namespace === undefined ? this.shared.list() : this.shared.byIndex('namespace', namespace);
  }

  /** Objects whose controlling owner has this uid. */
  ownedBy(uid: string): KubeObject[] {
    return this.shared.byIndex('controller', uid);
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
      const current = () => this.reader.find(group, version, plural) ?? (this.reader.generation === generation ? initial : undefined);
      cache = sharedCache(current, store.definition, this.log);
      this.caches.set(key, cache);
      cache.start();
    }
    return new ObjectCache(cache, store);
  }

  stop(): void {
    for (const c of this.caches.values()) void c.stop();
  }
}
