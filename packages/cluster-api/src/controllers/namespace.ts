/**
 * The namespace controller (Kubernetes' namespace deleter): for each namespace being deleted, delete
 * every object in it across all namespaced kinds; once nothing is left, remove `kubernetes` from
 * spec.finalizers through /finalize, which removes the namespace (`kubectl delete ns` waits for that).
 */
import type { KubeObject } from '../api/meta.js';
import type { ApiClient } from '../client/interface.js';
import { follow, ignoreRaces, inNamespace, Loop, managedStores, SystemContext, type Controller, type ControllerOptions } from './loop.js';

export const NamespaceFinalizer = 'kubernetes';

export const startNamespaceController = (registry: ApiClient, opts: ControllerOptions = {}): Controller => {
  const namespaces = registry.find('', 'v1', 'namespaces');
  if (!namespaces) return { stop: async () => undefined };
  const terminating = new Map<string, KubeObject>();

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

  const pass = async (): Promise<void> => {
    let waiting = false;
    for (const ns of [...terminating.values()]) {
      const name = ns.metadata.name!;
      if ((await empty(name)) > 0) {
        waiting = true;
        continue;
      }
      const current = await namespaces.get(SystemContext, name).catch((err: unknown) => (ignoreRaces(err), undefined));
      if (current) await finalize(current);
      else terminating.delete(name);
    }
    // Objects inside a grace period or held by finalizers go later: look again soon.
    if (waiting) loop.kick(500);
  };

  const loop = new Loop('namespace', pass, { resyncMs: 5000, ...opts });
  const watch = follow(namespaces, loop, (type, ns) => {
    const name = ns.metadata.name!;
    if (type !== 'DELETED' && ns.metadata.deletionTimestamp) {
      terminating.set(name, ns);
      loop.kick();
    } else terminating.delete(name);
  });
  return {
    stop: async () => {
      watch.close();
      await loop.stop();
    },
  };
};
