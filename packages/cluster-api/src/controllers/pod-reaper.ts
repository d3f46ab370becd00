/**
 * Ends gracefully deleted pods: with no kubelet to stop their containers, the grace period is the
 * whole termination, so when it is over the pod is deleted for good (as the kubelet's final
 * gracePeriodSeconds=0 delete does).
 */
import type { Registry } from '../registry/rest.js';
import { deleteWhenDue } from './deadlines.js';
import { mentions, type Controller, type ControllerOptions } from './loop.js';

export const startPodReaper = (registry: Registry, opts: ControllerOptions = {}): Controller => {
  const pods = registry.find('', 'v1', 'pods');
  if (!pods) return { stop: async () => undefined };
  return deleteWhenDue(pods, {
    name: 'pod-reaper',
    // deletionTimestamp has whole seconds, so its second is allowed to pass entirely.
    dueAt: ({ metadata: { deletionTimestamp, deletionGracePeriodSeconds } }) =>
      deletionTimestamp && deletionGracePeriodSeconds ? Date.parse(deletionTimestamp) + 1000 : undefined,
    deleteOptions: { gracePeriodSeconds: 0 },
    admitCreated: mentions('deletionTimestamp'),
    resyncMs: 10_000,
  }, opts);
};
