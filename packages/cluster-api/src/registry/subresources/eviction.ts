/**
 * pods/{name}/eviction: a policy/v1 Eviction deletes the pod unless a PodDisruptionBudget forbids it,
 * as kube-apiserver's EvictionREST decides: a pod that is not running (Pending, Succeeded, Failed)
 * or already being deleted goes at once; otherwise the one budget selecting it must have been
 * observed by its controller (status.observedGeneration ≥ generation) and allow a disruption, which
 * the eviction spends (disruptionsAllowed − 1, the pod noted in disruptedPods) before deleting.
 * A refusal is 429 TooManyRequests with a DisruptionBudget cause, which `kubectl drain` retries.
 */
import type { DeleteOptions, KubeObject } from '../../api/meta.js';
import { ApiError, badRequest, forbidden, isApiError } from '../../api/errors.js';
import type { Services } from '../definition.js';
import type { RequestContext } from '../rest.js';
import { isObject, timestamp } from '../generic/meta.js';
import { child, num, obj, spec, status, str } from '../kinds/common.js';
import { selectorMatches } from '../kinds/label-selector.js';
import type { SubresourceDef } from '../subresource.js';

const MaxDisruptedPodSize = 2000;
const Budgets = { group: 'policy', resource: 'poddisruptionbudgets' };

interface Checked {
  deleteOptions: DeleteOptions;
}

const check = (body: unknown, name: string): Checked => {
  if (!isObject(body)) throw badRequest('the body must be a policy/v1 Eviction');
  const bodyName = obj(body.metadata).name;
  if (bodyName !== undefined && bodyName !== name) throw badRequest('name in URL does not match name in Eviction object');
  const options = body.deleteOptions;
  if (options !== undefined && options !== null && !isObject(options)) throw badRequest('deleteOptions: expected an object');
  return { deleteOptions: (options ?? {}) as DeleteOptions };
};

const tooManyRequests = (message: string, retryAfterSeconds: number, cause: string): ApiError =>
  new ApiError(429, 'TooManyRequests', message, { retryAfterSeconds, causes: [{ reason: 'DisruptionBudget', message: cause }] });

const Refused = "Cannot evict pod as it would violate the pod's disruption budget.";

/** canIgnorePDB. */
const ignoresBudgets = (pod: KubeObject): boolean =>
  ['Succeeded', 'Failed', 'Pending'].includes(str(status(pod).phase)) || Boolean(pod.metadata.deletionTimestamp);

/** checkAndDecrement: the budget allows one more disruption, which this eviction takes (written through /status). */
const spend = async (pdb: KubeObject, podName: string, ctx: RequestContext, services: Services): Promise<void> => {
  const name = pdb.metadata.name ?? '';
  const st = status(pdb);
  if (num(st.observedGeneration) < num(pdb.metadata.generation)) throw tooManyRequests(Refused, 10, `The disruption budget ${name} is still being processed by the server.`);
  if (num(st.disruptionsAllowed) < 0) throw forbidden(Budgets, name, 'pdb disruptions allowed is negative');
  if (Object.keys(obj(st.disruptedPods)).length > MaxDisruptedPodSize) throw forbidden(Budgets, name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
  if (num(st.disruptionsAllowed) === 0) {
    throw tooManyRequests(Refused, 0, `The disruption budget ${name} needs ${num(st.desiredHealthy)} healthy pods and has ${num(st.currentHealthy)} currently`);
  }
  const next = structuredClone(pdb);
  const nextStatus = child(next, 'status');
  nextStatus.disruptionsAllowed = num(st.disruptionsAllowed) - 1;
  if (ctx.dryRun) return;
  child(nextStatus, 'disruptedPods')[podName] = timestamp();
  await services.find('policy', 'v1', 'poddisruptionbudgets')!.update({ ...ctx, namespace: pdb.metadata.namespace }, name, next, 'status');
};

export const eviction: SubresourceDef = {
  verbs: ['create'],
  kind: { group: 'policy', version: 'v1', kind: 'Eviction' },
  behaviour: {
    type: 'action',
    check,
    async act({ deleteOptions }: Checked, parent, ctx, services) {
      const pod = await parent.get();
      if (!ignoresBudgets(pod)) {
        const budgets = await services.find('policy', 'v1', 'poddisruptionbudgets')!.list({ ...ctx, namespace: pod.metadata.namespace }, {});
        const labels = pod.metadata.labels ?? {};
        // policy/v1: no selector selects nothing, an empty one every pod.
        const matching = budgets.items.filter((b) => spec(b).selector !== undefined && selectorMatches(spec(b).selector, labels));
        if (matching.length > 1) throw new ApiError(500, 'InternalError', 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
        if (matching.length === 1) {
          try {
            await spend(matching[0]!, pod.metadata.name ?? '', ctx, services);
          } catch (err) {
            if (isApiError(err) && err.code === 409) throw tooManyRequests(Refused, 10, `The disruption budget ${matching[0]!.metadata.name ?? ''} is still being processed by the server.`);
            throw err;
          }
        }
      }
      await parent.delete(deleteOptions);
      return { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Success' } as unknown as KubeObject;
    },
  },
};
