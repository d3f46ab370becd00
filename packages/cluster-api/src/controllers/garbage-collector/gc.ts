/**
 * The garbage collector (Kubernetes' garbagecollector, reduced to what a single API server needs):
 * - a dependent whose every owner is gone is deleted (Background); one that lost only some owners
 *   keeps the others and drops the dangling references;
 * - an owner deleted with the `orphan` finalizer: its dependents lose their reference to it, then
 *   the finalizer is removed (and with it the owner);
 * - an owner deleted with `foregroundDeletion`: its dependents are deleted, and the finalizer is
 *   removed once no dependent with `blockOwnerDeletion: true` is left.
 * State comes from watches of every kind: objects with ownerReferences, and owners being deleted
 * with a GC finalizer. Owners are looked up by apiVersion, kind, namespace and name, then uid.
 */
import type { KubeObject, OwnerReference } from '../../api/meta.js';
import { ForegroundFinalizer, OrphanFinalizer } from '../../registry/generic/deletion.js';
import { groupVersion } from '../../registry/definition.js';
import type { ApiClient, ResourceClient } from '../../client/interface.js';
import { followManaged, ignoreRaces, mentions, inNamespace, managedStores, type Controller, type ControllerOptions } from '../shared.js';
import { startSingleton } from '../reconciler.js';

interface Tracked {
  obj: KubeObject;
  store: ResourceClient;
}

const refsOf = (o: KubeObject): OwnerReference[] => o.metadata.ownerReferences ?? [];
const finalizing = (o: KubeObject): boolean =>
  Boolean(o.metadata.deletionTimestamp) && (o.metadata.finalizers ?? []).some((f) => f === OrphanFinalizer || f === ForegroundFinalizer);

/** A new object matters only if it has owners, or is already being deleted with finalizers. */
const admitCreated = mentions('ownerReferences', 'finalizers');

export const startGarbageCollector = (registry: ApiClient, opts: ControllerOptions = {}): Controller => {
  const dependents = new Map<string, Tracked>();
  const owners = new Map<string, Tracked>();
  // Owners are named by any version of their kind (an extensions/v1beta1 Deployment owns apps/v1 ReplicaSets).
  let stores = managedStores(registry, true);
  const storeOf = (ref: OwnerReference) => stores.find(({ def }) => groupVersion(def) === ref.apiVersion && def.kind === ref.kind);

  /** Whether the owner `ref` names still exists (true when its kind is unknown here: never delete on doubt). */
  const ownerExists = async (ref: OwnerReference, namespace: string | undefined, seen: Map<string, boolean>): Promise<boolean> => {
    const cached = seen.get(ref.uid);
    if (cached !== undefined) return cached;
    const found = storeOf(ref);
    let exists = true;
    if (found) {
      const ctx = inNamespace(found.def.namespaced ? namespace : undefined);
      exists = await found.store.get(ctx, ref.name).then((o) => o.metadata.uid === ref.uid, (err: unknown) => (ignoreRaces(err), false));
    }
    seen.set(ref.uid, exists);
    return exists;
  };

  const patchMeta = (t: Tracked, metadata: Record<string, unknown>) =>
    t.store
      .patch(inNamespace(t.obj.metadata.namespace), t.obj.metadata.name!, 'merge', { metadata: { ...metadata, resourceVersion: t.obj.metadata.resourceVersion } })
      .then(() => undefined, ignoreRaces);

  const dropRefs = (t: Tracked, uids: Set<string>) => {
    const kept = refsOf(t.obj).filter((r) => !uids.has(r.uid));
    return patchMeta(t, { ownerReferences: kept.length ? kept : null });
  };

  const dropFinalizer = (t: Tracked, finalizer: string) => {
    const kept = (t.obj.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    return patchMeta(t, { finalizers: kept.length ? kept : null });
  };

  const remove = (t: Tracked, policy: 'Background' | 'Foreground') =>
    t.store
      .delete(inNamespace(t.obj.metadata.namespace), t.obj.metadata.name!, { propagationPolicy: policy, preconditions: { uid: t.obj.metadata.uid } })
      .then(() => undefined, ignoreRaces);

  const settleOwner = async (owner: Tracked): Promise<void> => {
    const uid = owner.obj.metadata.uid!;
    const deps = [...dependents.values()].filter((d) => refsOf(d.obj).some((r) => r.uid === uid));
    const finalizers = owner.obj.metadata.finalizers ?? [];
    if (finalizers.includes(OrphanFinalizer)) {
      for (const d of deps) await dropRefs(d, new Set([uid]));
      return dropFinalizer(owner, OrphanFinalizer);
    }
    for (const d of deps) if (!d.obj.metadata.deletionTimestamp) await remove(d, 'Foreground');
    const blocking = deps.filter((d) => refsOf(d.obj).some((r) => r.uid === uid && r.blockOwnerDeletion === true));
    if (blocking.length === 0) await dropFinalizer(owner, ForegroundFinalizer);
  };

  const settleDependent = async (d: Tracked, seen: Map<string, boolean>): Promise<void> => {
    const refs = refsOf(d.obj);
    const gone = new Set<string>();
    for (const r of refs) if (!owners.has(r.uid) && !(await ownerExists(r, d.obj.metadata.namespace, seen))) gone.add(r.uid);
    if (gone.size === 0) return;
    if (gone.size === refs.length) return d.obj.metadata.deletionTimestamp ? undefined : remove(d, 'Background');
    return dropRefs(d, gone);
  };

  const pass = async (): Promise<void> => {
    watching.sync();
    stores = managedStores(registry, true);
    for (const owner of [...owners.values()]) await settleOwner(owner);
    const seen = new Map<string, boolean>();
    for (const d of [...dependents.values()]) await settleDependent(d, seen);
  };

  const loop = startSingleton('garbage-collector', pass, 5000, { log: opts.log });
  const watching = followManaged(registry, loop, (type, obj, store) => {
    const uid = obj.metadata.uid;
    if (!uid) return;
    const tracked = { obj, store };
    const set = (m: Map<string, Tracked>, keep: boolean) => (keep ? m.set(uid, tracked) : m.delete(uid));
    const owned = type !== 'DELETED' && refsOf(obj).length > 0;
    const deleting = type !== 'DELETED' && finalizing(obj);
    const relevant = owned || deleting || dependents.has(uid) || owners.has(uid) || type === 'DELETED';
    set(dependents, owned);
    set(owners, deleting);
    if (relevant && (dependents.size > 0 || owners.size > 0)) loop.kick();
  }, admitCreated);
  return {
    stop: async () => {
      watching.close();
      await loop.stop();
    },
  };
};
