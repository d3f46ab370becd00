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
import { arr, child, num, obj, spec, status, str } from '../kinds/common.js';
import { selectorMatches } from '../kinds/label-selector.js';
import type { SubresourceDef } from '../subresource.js';
import { allowedCondition } from '../kinds/pod-disruption-budget.js';

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

const processing = (pdb: KubeObject | undefined): string => `The disruption budget ${pdb?.metadata.name ?? ''} is still being processed by the server.`;

const Refused = "Cannot evict pod as it would violate the pod's disruption budget.";

/** canIgnorePDB. */
const ignoresBudgets = (pod: KubeObject): boolean =>
  ['Succeeded', 'Failed', 'Pending'].includes(str(status(pod).phase)) || Boolean(pod.metadata.deletionTimestamp);

/** checkAndDecrement: the budget allows one more disruption, which this eviction takes (written through /status). */
const spend = async (pdb: KubeObject, podName: string, ctx: RequestContext, services: Services): Promise<void> => {
  const name = pdb.metadata.name ?? '';
  const st = status(pdb);
  if (num(st.observedGeneration) < num(pdb.metadata.generation)) throw tooManyRequests(Refused, 10, processing(pdb));
  if (num(st.disruptionsAllowed) < 0) throw forbidden(Budgets, name, 'pdb disruptions allowed is negative');
  if (Object.keys(obj(st.disruptedPods)).length > MaxDisruptedPodSize) throw forbidden(Budgets, name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
  if (num(st.disruptionsAllowed) === 0) {
    throw tooManyRequests(Refused, 0, `The disruption budget ${name} needs ${num(st.desiredHealthy)} healthy pods and has ${num(st.currentHealthy)} currently`);
  }
  const next = structuredClone(pdb);
  const nextStatus = child(next, 'status');
  nextStatus.disruptionsAllowed = num(st.disruptionsAllowed) - 1;
  if (nextStatus.disruptionsAllowed === 0) nextStatus.conditions = allowedCondition(nextStatus, timestamp());
  if (ctx.dryRun) return;
  child(nextStatus, 'disruptedPods')[podName] = timestamp();
  await services.find('policy', 'v1', 'poddisruptionbudgets')!.update({ ...ctx, namespace: pdb.metadata.namespace }, name, next, 'status');
};

/** EvictionsRetry: how many times a write that lost a race is tried again over fresh reads. */
const EvictionsRetry = 20;

const isConflict = (err: unknown): boolean => isApiError(err) && err.code === 409;

/** The Ready condition (podutil.IsPodReady), which is what "healthy" means to a budget. */
const isReady = (pod: KubeObject): boolean => arr(status(pod).conditions).map(obj).some((c) => c.type === 'Ready' && c.status === 'True');

/**
 * An unhealthy (not Ready) pod goes without spending the budget when its policy says AlwaysAllow,
 * or (IfHealthyBudget, the default) while the budget has the healthy pods it wants.
 */
const unhealthyMayGo = (pod: KubeObject, pdb: KubeObject): boolean => {
  if (isReady(pod)) return false;
  if (spec(pdb).unhealthyPodEvictionPolicy === 'AlwaysAllow') return true;
  const st = status(pdb);
  return num(st.desiredHealthy) > 0 && num(st.currentHealthy) >= num(st.desiredHealthy);
};

/** The one budget selecting the pod, or undefined; more than one is refused as kube-apiserver does. */
const budgetOf = async (pod: KubeObject, ctx: RequestContext, services: Services): Promise<KubeObject | undefined> => {
  const budgets = await services.find('policy', 'v1', 'poddisruptionbudgets')!.list({ ...ctx, namespace: pod.metadata.namespace }, {});
  const labels = pod.metadata.labels ?? {};
  // policy/v1: no selector selects nothing, an empty one every pod.
  const matching = budgets.items.filter((b) => spec(b).selector !== undefined && spec(b).selector !== null && selectorMatches(spec(b).selector, labels));
  if (matching.length > 1) throw new ApiError(500, 'InternalError', 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
  return matching[0];
};

/**
 * Decides whether the pod may go: resolves to the delete options to delete it with (a pod that
 * goes without spending the budget is deleted only if unchanged since it was judged) and the budget
 * that judged it.
 */
const decide = async (pod: KubeObject, options: DeleteOptions, ctx: RequestContext, services: Services): Promise<{ options: DeleteOptions; pdb?: KubeObject; pinned: boolean }> => {
  const pinned = options.preconditions?.resourceVersion === undefined;
  const unchanged = { ...options, preconditions: { ...options.preconditions, resourceVersion: options.preconditions?.resourceVersion ?? pod.metadata.resourceVersion } };
  if (ignoresBudgets(pod)) return { options: unchanged, pinned };
  const pdb = await budgetOf(pod, ctx, services);
  if (!pdb) return { options, pinned: false };
  if (unhealthyMayGo(pod, pdb)) return { options: unchanged, pdb, pinned };
  await spend(pdb, pod.metadata.name ?? '', ctx, services);
  return { options, pdb, pinned: false };
};

export const eviction: SubresourceDef = {
  verbs: ['create'],
  kind: { group: 'policy', version: 'v1', kind: 'Eviction' },
  behaviour: {
    type: 'action',
    check,
    async act({ deleteOptions }: Checked, parent, ctx, services) {
      // The budget's write is tried again over fresh reads when it loses a race (EvictionsRetry).
      let decided: Awaited<ReturnType<typeof decide>> | undefined;
      for (let attempt = 1; !decided; attempt++) {
        try {
          decided = await decide(await parent.get(), deleteOptions, ctx, services);
        } catch (err) {
          if (!isConflict(err)) throw err;
          if (attempt >= EvictionsRetry) throw new ApiError(504, 'Timeout', "couldn't update PodDisruptionBudget due to conflicts", { retryAfterSeconds: 10 });
        }
      }
      try {
        await parent.delete(decided.options);
      } catch (err) {
        // The pod changed after it was judged: the client tries again.
        if (isConflict(err) && decided.pinned) throw tooManyRequests(Refused, 10, processing(decided.pdb));
        throw err;
      }
      return { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Success' } as unknown as KubeObject;
    },
  },
};
