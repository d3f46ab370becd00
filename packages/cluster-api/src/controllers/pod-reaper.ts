/**
 * Ends gracefully deleted pods: with no kubelet to stop their containers, the grace period is the
 * whole termination, so when it is over the pod is deleted for good (as the kubelet's final
 * gracePeriodSeconds=0 delete does). One timer, set for the earliest deadline.
 */
import type { Registry } from '../registry/rest.js';
import { follow, ignoreRaces, mentions, inNamespace, Loop, type Controller, type ControllerOptions } from './loop.js';

interface Due {
  namespace: string;
  name: string;
  uid: string;
  /** ms since the epoch; deletionTimestamp has whole seconds, so its second is allowed to pass entirely. */
  at: number;
}

export const startPodReaper = (registry: Registry, opts: ControllerOptions = {}): Controller => {
  const pods = registry.find('', 'v1', 'pods');
  if (!pods) return { stop: async () => undefined };
  const due = new Map<string, Due>();

  const pass = async (): Promise<void> => {
    const now = Date.now();
    for (const [key, d] of [...due]) {
      if (d.at > now) continue;
      due.delete(key);
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
    due.set(key, { namespace, name, uid, at: Date.parse(deletionTimestamp) + 1000 });
    loop.kick(0);
  }, mentions('deletionTimestamp'));
  return {
    stop: async () => {
      watch.close();
      await loop.stop();
    },
  };
};
