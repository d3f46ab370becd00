/**
 * An informer's store (client-go's thread-safe store with indexers), kept consistent under writes
 * seen out of order: a change older than the object held (by resourceVersion, when both are
 * numbers, as etcd revisions are) is dropped, and a deleted uid never comes back, so a late watch
 * event cannot undo a write its client observed earlier ("observe my own write"). A change of uid
 * under one name is the old object deleted and a new one added.
 */
import type { KubeObject } from './types.js';

/** Named index functions: the values an object is found under (client-go's Indexers). */
export type Indexers<T> = Record<string, (obj: T) => readonly string[]>;

export type ChangeEvent = 'add' | 'update' | 'delete';
export interface Change<T> {
  event: ChangeEvent;
  obj: T;
  old?: T;
}

export const keyOf = (o: KubeObject): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

const revision = (o: KubeObject | undefined): number | undefined => {
  const rv = o?.metadata?.resourceVersion;
  return rv !== undefined && /^\d+$/.test(rv) ? Number(rv) : undefined;
};

/** Whether `a` is older than `b` (false when either resourceVersion is not a number). */
const older = (a: KubeObject | undefined, b: KubeObject | undefined): boolean => {
  const [ra, rb] = [revision(a), revision(b)];
  return ra !== undefined && rb !== undefined && ra < rb;
};

/** How long a deleted uid is remembered: far longer than any watch lags behind a write. */
const TombstoneMs = 10 * 60_000;

export class IndexedStore<T extends KubeObject> {
  private readonly objects = new Map<string, T>();
  private readonly indexes = new Map<string, Map<string, Map<string, T>>>();
  private readonly gone = new Map<string, number>();

  constructor(private readonly indexers: Indexers<T> = {}) {
    for (const name of Object.keys(indexers)) this.indexes.set(name, new Map());
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  /** The objects index `name` files under `value`. */
  byIndex(name: string, value: string): T[] {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`no index ${name}`);
    return [...(index.get(value)?.values() ?? [])];
  }

  /** Applies a change (a watch event, a list item, a write's answer) and answers what it changed. */
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): Change<T>[] {
    const key = keyOf(obj);
    const uid = obj.metadata?.uid ?? '';
    if (uid && this.gone.has(uid)) return [];
    const old = this.objects.get(key);
    const same = old?.metadata?.uid === obj.metadata?.uid;
    // Older than what is held: a late event of this object, or of one the held object replaced.
    if (old && older(obj, old)) return [];
    if (type === 'DELETED') {
      this.forget(uid);
      if (!old || !same) return [];
      this.unindex(key, old);
      return [{ event: 'delete', obj, old }];
    }
    if (old) this.unindex(key, old);
    this.index(key, obj);
    if (old && !same) {
      this.forget(old.metadata?.uid ?? '');
      return [{ event: 'delete', obj: old }, { event: 'add', obj }];
    }
    return [old ? { event: 'update', obj, old } : { event: 'add', obj }];
  }

  /** A full list: its items applied (unchanged ones silently), then what it lacks deleted, unless newer than the list. */
  replace(items: readonly T[], listVersion: string | undefined): Change<T>[] {
    const changes: Change<T>[] = [];
    const seen = new Set<string>();
    for (const item of items) {
      seen.add(keyOf(item));
      const held = this.objects.get(keyOf(item));
      if (held && held.metadata?.uid === item.metadata?.uid && held.metadata?.resourceVersion === item.metadata?.resourceVersion) continue;
      changes.push(...this.apply('MODIFIED', item));
    }
    const list = { metadata: { resourceVersion: listVersion } } as KubeObject;
    for (const [key, held] of [...this.objects]) {
      if (seen.has(key) || older(list, held)) continue;
      this.unindex(key, held);
      changes.push({ event: 'delete', obj: held, old: held });
    }
    return changes;
  }

  private forget(uid: string): void {
    if (!uid) return;
    const now = Date.now();
    this.gone.set(uid, now);
    if (this.gone.size % 256 === 0) for (const [u, at] of this.gone) if (now - at > TombstoneMs) this.gone.delete(u);
  }

  private index(key: string, o: T): void {
    this.objects.set(key, o);
    for (const [name, fn] of Object.entries(this.indexers)) {
      const index = this.indexes.get(name)!;
      for (const value of fn(o)) {
        if (!index.has(value)) index.set(value, new Map());
        index.get(value)!.set(key, o);
      }
    }
  }

  private unindex(key: string, o: T): void {
    this.objects.delete(key);
    for (const [name, fn] of Object.entries(this.indexers)) {
      const index = this.indexes.get(name)!;
      for (const value of fn(o)) {
        const m = index.get(value);
        m?.delete(key);
        if (m?.size === 0) index.delete(value);
      }
    }
  }
}
