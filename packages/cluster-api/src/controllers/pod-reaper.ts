/**
 * Ends gracefully deleted pods no kubelet will end: a pod bound to a node that exists is that node's
 * agent's to finish (it stops the containers, then deletes the pod for good), but a pod bound to no
 * node, or to a node that does not exist (PodGC's orphans), has nobody to do it, so when its grace
 * period is over it is deleted for good here (as the kubelet's final gracePeriodSeconds=0 delete
 * would). One timer, set for the earliest deadline.
 */
import type { Registry } from '../registry/rest.js';
import { follow, ignoreRaces, mentions, inNamespace, Loop, SystemContext, type Controller, type ControllerOptions } from './loop.js';

interface Due {
  namespace: string;
  name: string;
  uid: string;
  node: string;
  /** ms since the epoch; deletionTimestamp has whole seconds, so its second is allowed to pass entirely. */
  at: number;
}

export const startPodReaper = (registry: Registry, opts: ControllerOptions = {}): Controller => {
  const pods = registry.find('', 'v1', 'pods');
  if (!pods) return { stop: async () => undefined };
  const hasAgent = async (node: string): Promise<boolean> => {
    const nodes = registry.find('', 'v1', 'nodes');
    return Boolean(node && nodes && (await nodes.get(SystemContext, node).then(() => true, () => false)));
  };
  const due = new Map<string, Due>();

  const pass = async (): Promise<void> => {
    const now = Date.now();
    for (const [key, d] of [...due]) {
      if (d.at > now) continue;
      due.delete(key);
      if (await hasAgent(d.node)) continue;
      await pods.delete(inNamespace(d.namespace), d.name, { gracePeriodSeconds: 0, preconditions: { uid: d.uid } }).catch(ignoreRaces);
    }
    const next = Math.min(...[...due.values()].map((d) => d.at));
    if (Number.isFinite(next)) loop.kick(Math.max(0, next - Date.now()));
  };

  const loop = new Loop('pod-reaper', pass, { resyncMs: 10_000, ...opts });
  const watch = follow(pods, loop, (type, pod) => {
    const { namespace = '', name = '', uid = '', deletionTimestamp, deletionGracePeriodSeconds } = pod.metadata;
    const key = `${namespace}/${name}`;
    if (type === 'DELETED' || !deletionTimestamp || !deletionGracePeriodSeconds) return void due.delete(key);
    const node = String((pod.spec as { nodeName?: string } | undefined)?.nodeName ?? '');
    due.set(key, { namespace, name, uid, node, at: Date.parse(deletionTimestamp) + 1000 });
    loop.kick(0);
  }, mentions('deletionTimestamp'));
  return {
    stop: async () => {
      watch.close();
      await loop.stop();
    },
  };
};
