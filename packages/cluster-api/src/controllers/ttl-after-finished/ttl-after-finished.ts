/**
 * The TTL-after-finished controller: a Job with `spec.ttlSecondsAfterFinished` is deleted (in the
 * foreground, its pods first) that many seconds after it finished — its completionTime, or when it
 * became Failed — as kube-controller-manager's ttlafterfinished controller does.
 */
import type { KubeObject } from '../../api/meta.js';
import { arr, num, obj, spec, status, str } from '../../registry/kinds/common.js';
import type { ApiClient } from '../../client/interface.js';
import { deleteWhenDue } from '../deadlines.js';
import { mentions, type Controller, type ControllerOptions } from '../shared.js';

const finishedAt = (job: KubeObject): number | undefined => {
  const done = arr(status(job).conditions).map(obj).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  if (!done) return undefined;
  const at = Date.parse(str(status(job).completionTime) || str(done.lastTransitionTime));
  return Number.isNaN(at) ? undefined : at;
};

export const startTtlAfterFinished = (registry: ApiClient, opts: ControllerOptions = {}): Controller => {
  const jobs = registry.find('batch', 'v1', 'jobs');
  if (!jobs) return { stop: async () => undefined };
  return deleteWhenDue(jobs, {
    name: 'ttl-after-finished-controller',
    dueAt: (job) => {
      const ttl = spec(job).ttlSecondsAfterFinished;
      const at = finishedAt(job);
      return typeof ttl === 'number' && at !== undefined && !job.metadata.deletionTimestamp ? at + num(ttl) * 1000 : undefined;
    },
    deleteOptions: { propagationPolicy: 'Foreground' },
    admitCreated: mentions('ttlSecondsAfterFinished'),
  }, opts);
};
