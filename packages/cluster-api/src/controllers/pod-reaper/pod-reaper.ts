/**
 * Ends gracefully deleted pods no kubelet will end: a pod bound to a node that exists is that node's
 * agent's to finish (it stops the containers, then deletes the pod for good), but a pod bound to no
 * node, or to a node that does not exist (PodGC's orphans), has nobody to do it, so when its grace
 * period is over it is deleted for good here (as the kubelet's final gracePeriodSeconds=0 delete
 * would).
 */
import type { ApiClient } from '../../client/interface.js';
import { deleteWhenDue } from '../deadlines.js';
import { mentions, SystemContext, type Controller, type ControllerOptions } from '../shared.js';

export const startPodReaper = (registry: ApiClient, opts: ControllerOptions = {}): Controller => {
  const pods = registry.find('', 'v1', 'pods');
  if (!pods) return { stop: async () => undefined };
  const nodeExists = async (node: string) => Boolean(node) && (await registry.find('', 'v1', 'nodes')?.get(SystemContext, node).then(() => true, () => false)) === true;
  return deleteWhenDue(pods, {
    name: 'pod-reaper',
    // deletionTimestamp has whole seconds, so its second is allowed to pass entirely.
    dueAt: ({ metadata: { deletionTimestamp, deletionGracePeriodSeconds } }) =>
      deletionTimestamp && deletionGracePeriodSeconds ? Date.parse(deletionTimestamp) + 1000 : undefined,
    deleteOptions: { gracePeriodSeconds: 0 },
    keep: (pod) => nodeExists(String((pod.spec as { nodeName?: string } | undefined)?.nodeName ?? '')),
    admitCreated: mentions('deletionTimestamp'),
  }, opts);
};
