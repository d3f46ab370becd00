/**
 * The RBAC objects in memory, as kube-apiserver's RBAC authorizer reads them from informers: each of
 * Role, ClusterRole, RoleBinding and ClusterRoleBinding listed once, then followed by a watch from the
 * list's revision (relisted after a watch error). Every change moves `generation`, which is what the
 * authorizer's cached rule evaluation is invalidated by.
 *
 * The watch is a moment behind a write, longer on a busy machine; kube-apiserver leaves it at that, so
 * a request right after a RoleBinding's create can still be refused there. Here a denial is only
 * final once the cache has been brought up to the store (`sync`: every kind listed live, what
 * changed applied), so a committed write is in effect for the next request whatever the load.
 * Allowed requests, the common case, never wait.
 */
import type { KubeObject } from '../api/meta.js';
import { RbacGroup, type ClusterRole, type ClusterRoleBinding, type Role, type RoleBinding, type RoleRef } from '../api/rbac-v1.js';
import type { PolicySource } from '../registry/rbac/resolver.js';
import type { Registry, ResourceStore } from '../registry/rest.js';

const Kinds = ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'] as const;
type Plural = (typeof Kinds)[number];

/** Objects of one kind by `namespace/name`, and derived per-namespace arrays rebuilt on first use after a change. */
class Index<T extends KubeObject> {
  readonly byKey = new Map<string, T>();
  private arrays = new Map<string, T[]>();
  static key = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

  set(o: T): void {
    this.byKey.set(Index.key(o), o);
    this.arrays.clear();
  }

  delete(o: KubeObject): void {
    this.byKey.delete(Index.key(o));
    this.arrays.clear();
  }

  reset(items: readonly T[]): void {
    this.byKey.clear();
    for (const o of items) this.byKey.set(Index.key(o), o);
    this.arrays.clear();
  }

  /** Whether `items` (a list) differ from what is held: another set of keys, or another version of one. */
  differs(items: readonly T[]): boolean {
    return items.length !== this.byKey.size || items.some((o) => this.byKey.get(Index.key(o))?.metadata.resourceVersion !== o.metadata.resourceVersion);
  }

  /** The namespace's objects in name order (the order a list answers, so "allowed by" is stable). */
  inNamespace(namespace: string): T[] {
    let found = this.arrays.get(namespace);
    if (!found) {
      found = [...this.byKey.values()].filter((o) => (o.metadata.namespace ?? '') === namespace);
      found.sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
      this.arrays.set(namespace, found);
    }
    return found;
  }
}

export class PolicyCache implements PolicySource {
  /** Moves on every change of any RBAC object. */
  generation = 0;
  /** Resolves once every kind has been listed. */
  readonly ready: Promise<void>;
  private readonly indexes = {
    roles: new Index<Role>(),
    clusterroles: new Index<ClusterRole>(),
    rolebindings: new Index<RoleBinding>(),
    clusterrolebindings: new Index<ClusterRoleBinding>(),
  };
  /** Per kind, the revision the index reflects (its last list or watch event): anything at or below it is in. */
  private readonly revision: Record<Plural, number> = { roles: 0, clusterroles: 0, rolebindings: 0, clusterrolebindings: 0 };
  private readonly watches = new Set<{ close(): void }>();
  private closed = false;
  /** The `sync` under way, and the one queued behind it. */
  private syncing: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  constructor(
    private readonly registry: Registry,
    private readonly log: (entry: Record<string, unknown>) => void = () => {},
  ) {
    this.ready = Promise.all(Kinds.map((plural) => this.follow(plural, registry.find(RbacGroup, 'v1', plural)))).then(() => undefined);
  }

  /**
   * Brings the cache up to the store: resolves once a live list of every kind, read after this call,
   * has been applied. Concurrent callers share one pass (a flood of denials costs one list of each
   * kind at a time, not one per request).
   */
  sync(): Promise<void> {
    if (!this.syncing) return this.startSync();
    return (this.queued ??= this.syncing.then(() => ((this.queued = undefined), this.startSync())));
  }

  private startSync(): Promise<void> {
    const pass: Promise<void> = Promise.all(Kinds.map((plural) => this.relist(plural)))
      .then(() => undefined)
      .finally(() => {
        if (this.syncing === pass) this.syncing = undefined;
      });
    return (this.syncing = pass);
  }

  private async relist(plural: Plural): Promise<void> {
    const store = this.registry.find(RbacGroup, 'v1', plural);
    if (!store || this.closed) return;
    const index = this.indexes[plural] as Index<KubeObject>;
    const list = await store.list({}, {});
    const revision = Number(list.metadata.resourceVersion);
    // The watch got there first (it delivers in order, so it holds everything up to that revision).
    if (!(revision > this.revision[plural])) return;
    this.revision[plural] = revision;
    if (!index.differs(list.items)) return;
    index.reset(list.items);
    this.generation++;
  }

  role = (namespace: string, name: string): Role | undefined => this.indexes.roles.byKey.get(`${namespace}/${name}`);
  clusterRole = (name: string): ClusterRole | undefined => this.indexes.clusterroles.byKey.get(`/${name}`);
  roleBindings = (namespace: string): readonly RoleBinding[] => this.indexes.rolebindings.inNamespace(namespace);
  clusterRoleBindings = (): readonly ClusterRoleBinding[] => this.indexes.clusterrolebindings.inNamespace('');
  clusterRoles = (): readonly ClusterRole[] => this.indexes.clusterroles.inNamespace('');
  /** The listers' wording, as the RBAC authorizer reports a binding to a missing role. */
  missing = (ref: RoleRef): string => `${ref.kind === 'Role' ? 'role' : 'clusterrole'}.${RbacGroup} ${JSON.stringify(ref.name ?? '')} not found`;

  /** List, then watch from the list's revision; after a watch error, list again (after 1 s, doubling to 30 s while it fails). */
  private async follow(plural: Plural, store: ResourceStore | undefined): Promise<void> {
    if (!store) return;
    const index = this.indexes[plural] as Index<KubeObject>;
    const list = await store.list({}, {});
    index.reset(list.items);
    this.revision[plural] = Number(list.metadata.resourceVersion);
    this.generation++;
    if (this.closed) return;
    const retry = (ms = 1000): void => {
      if (this.closed) return;
      const next = Math.min(ms * 2, 30_000);
      setTimeout(() => this.follow(plural, store).catch((err: unknown) => (this.report(plural, err), retry(next))), ms).unref();
    };
    let handle: { close(): void } | undefined;
    handle = await store.watch({}, { resourceVersion: list.metadata.resourceVersion }, {
      onEvent: (e) => {
        const revision = Number(e.object.metadata.resourceVersion);
        // Already in through a live list (sync) read at or after it.
        if (revision <= this.revision[plural]) return;
        this.revision[plural] = revision;
        if (e.type === 'ADDED' || e.type === 'MODIFIED') index.set(e.object);
        else if (e.type === 'DELETED') index.delete(e.object);
        else return;
        this.generation++;
      },
      onError: (err) => {
        if (handle) this.watches.delete(handle);
        this.report(plural, err);
        retry();
      },
    });
    if (this.closed) handle.close();
    else this.watches.add(handle);
  }

  private report(plural: Plural, err: unknown): void {
    this.log({ level: 'warn', msg: 'rbac cache: watch ended, listing again', resource: plural, err: String((err as Error)?.message ?? err) });
  }

  close(): void {
    this.closed = true;
    for (const w of this.watches) w.close();
    this.watches.clear();
  }
}
