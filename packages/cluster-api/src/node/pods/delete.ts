/**
 * The delete for good of a pod this node is done with (grace period 0, uid precondition), as the
 * kubelet's status manager sends it. A pod already gone (404), or replaced by another of the same
 * name (the uid precondition fails), needs nothing more: that is success. Any other answer (a 403,
 * the server unavailable) is the caller's to log and retry: it is never dropped.
 */
import { KubeApiError, type KubeClient, Resources } from '@func/kube-client';
import type { Pod } from '../types.js';

/** Whether an error of the final delete means the pod is gone (or is another pod now). */
export const goneAlready = (err: unknown): boolean =>
  err instanceof KubeApiError && (err.code === 404 || err.message.includes('Precondition failed'));

export async function deletedForGood(kube: KubeClient, pod: Pod): Promise<void> {
  const { name = '', namespace, uid } = pod.metadata;
  await kube.delete(Resources.pods, name, { namespace, gracePeriodSeconds: 0, preconditions: { uid } }).catch((err: unknown) => {
    if (!goneAlready(err)) throw err;
  });
}
