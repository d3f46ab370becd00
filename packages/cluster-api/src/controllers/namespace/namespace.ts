/**
 * The namespace controller (Kubernetes' namespace deleter): for each namespace being deleted, delete
 * every object in it across all namespaced kinds; once nothing is left, remove `kubernetes` from
 * spec.finalizers through /finalize, which removes the namespace (`kubectl delete ns` waits for that).
 */
import type { KubeObject } from '../../api/meta.js';
import type { ApiClient } from '../../client/interface.js';
import { objectKey, splitKey } from '../context.js';
import { ignoreRaces, inNamespace, managedStores, SystemContext, type Controller, type ControllerOptions } from '../shared.js';
import { startReconciler } from '../reconciler.js';

export const NamespaceFinalizer = 'kubernetes';

export const startNamespaceController = (registry: ApiClient, opts: ControllerOptions = {}): Controller => {
  const namespaces = registry.find('', 'v1', 'namespaces');
  if (!namespaces) return { stop: async () => undefined };

  /** Delete what is left in `ns`; the number of objects still there (deleting ones included). */
  const empty = async (ns: string): Promise<number> => {
    let left = 0;
    // Read every pass: kinds added while the server runs are emptied too.
    for (const { store } of managedStores(registry).filter(({ def }) => def.namespaced)) {
      const { items } = await store.list(inNamespace(ns), {});
      left += items.length;
      for (const o of items) {
        if (o.metadata.deletionTimestamp) continue;
        await store.delete(inNamespace(ns), o.metadata.name!, { propagationPolicy: 'Background', preconditions: { uid: o.metadata.uid } }).catch(ignoreRaces);
      }
    }
    return left;
  };

  const finalize = async (ns: KubeObject): Promise<void> => {
    const spec = (ns.spec ?? {}) as { finalizers?: string[] };
    const kept = (spec.finalizers ?? []).filter((f) => f !== NamespaceFinalizer);
    const body = { ...ns, spec: { ...spec, finalizers: kept } };
    await namespaces.update(SystemContext, ns.metadata.name!, body, 'finalize').catch(ignoreRaces);
  };

  /** One namespace being deleted: empty it, then finalize it; look again soon while objects are left. */
  const reconcile = async (key: string) => {
    const { name } = splitKey(key);
    const ns = await namespaces.get(SystemContext, name).catch((err: unknown) => (ignoreRaces(err), undefined));
    if (!ns?.metadata.deletionTimestamp) return;
    // Objects inside a grace period or held by finalizers go later.
    if ((await empty(name)) > 0) return { requeueAfter: 500 };
    await finalize(ns);
  };

  const terminating = (ns: KubeObject, _old: unknown, type: string) => (type !== 'DELETED' && ns.metadata.deletionTimestamp ? [objectKey(ns)] : []);
  return startReconciler('namespace-controller', reconcile, [{ watch: namespaces, keys: terminating }], { log: opts.log });
};
