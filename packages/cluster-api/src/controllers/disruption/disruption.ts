/**
 * The disruption controller (pkg/controller/disruption): each PodDisruptionBudget's status from the
 * pods its selector matches in its namespace — `currentHealthy` (Ready pods neither being deleted
 * nor recently evicted), `desiredHealthy` (minAvailable, or the expected count less maxUnavailable),
 * `expectedPods` (the selected pods, or, for a percentage or maxUnavailable, the sum of their
 * controllers' scales: expected-scale.ts), `disruptionsAllowed`, the `disruptedPods` an eviction
 * noted and that are not gone yet (kept DeletionTimeout, then dropped with a NotDeleted Event),
 * `observedGeneration` and the `DisruptionAllowed` condition (SufficientPods / InsufficientPods).
 * A sync that fails (a pod whose controller is not found) writes the fail-safe status: no disruption
 * allowed, the condition False with reason SyncFailed and the error as its message.
 */
import type { KubeObject } from '../../api/meta.js';
import { isApiError } from '../../api/errors.js';
import { timestamp } from '../../registry/generic/meta.js';
import { arr, num, obj, spec, status, type Obj } from '../../registry/kinds/common.js';
import { selectorMatches } from '../../registry/kinds/label-selector.js';
import { allowedCondition, setAllowedCondition } from '../../registry/kinds/pod-disruption-budget.js';
import { scaledValue } from '../../registry/kinds/workload.js';
import { errorText, objectKey, served, splitKey, writeStatus, type ControllerContext, type Served } from '../context.js';
import type { EventRecorder } from '@func/kube-client';
import { isReady } from '../pods.js';
import { startReconciler, type KeysOf } from '../reconciler.js';
import type { Controller } from '../shared.js';
import { expectedScale, ScaleSources } from './expected-scale.js';

/** How long an evicted pod is expected to take to go before it counts again (DeletionTimeout). */
export const DeletionTimeoutMs = 2 * 60_000;

const labelsOf = (o: KubeObject): Record<string, string> => o.metadata.labels ?? {};

/** policy/v1: no selector selects nothing, an empty one every pod. */
export const budgetSelects = (pdb: KubeObject, pod: KubeObject): boolean =>
  spec(pdb).selector !== undefined && spec(pdb).selector !== null && pod.metadata.namespace === pdb.metadata.namespace && selectorMatches(spec(pdb).selector, labelsOf(pod));

interface Expected {
  expectedCount: number;
  desiredHealthy: number;
  unmanaged: string[];
}

/** getExpectedPodCount. */
const expectedPodCount = async (pdb: KubeObject, pods: KubeObject[], sources: ScaleSources): Promise<Expected> => {
  const { minAvailable, maxUnavailable } = spec(pdb);
  if (maxUnavailable !== undefined && maxUnavailable !== null) {
    const { expectedCount, unmanaged } = await expectedScale(pods, sources);
    return { expectedCount, unmanaged, desiredHealthy: Math.max(0, expectedCount - scaledValue(maxUnavailable, expectedCount, true)) };
  }
  if (typeof minAvailable === 'number') return { expectedCount: pods.length, desiredHealthy: minAvailable, unmanaged: [] };
  if (typeof minAvailable === 'string') {
    const { expectedCount, unmanaged } = await expectedScale(pods, sources);
    return { expectedCount, unmanaged, desiredHealthy: scaledValue(minAvailable, expectedCount, true) };
  }
  return { expectedCount: 0, desiredHealthy: 0, unmanaged: [] };
};

/** buildDisruptedPodMap: evictions not yet seen through, and when the earliest of them expires. */
const disruptedPodMap = (pdb: KubeObject, pods: KubeObject[], now: number, recorder: EventRecorder): { disrupted: Record<string, string>; recheckMs?: number } => {
  const noted = obj(status(pdb).disruptedPods);
  const disrupted: Record<string, string> = {};
  let recheck: number | undefined;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const at = noted[pod.metadata.name ?? ''];
    if (typeof at !== 'string') continue;
    const expires = Date.parse(at) + DeletionTimeoutMs;
    if (!(expires > now)) {
      recorder.event(pod, 'Warning', 'NotDeleted', `Pod was expected by PDB ${pdb.metadata.namespace}/${pdb.metadata.name} to be deleted but it wasn't`);
      continue;
    }
    disrupted[pod.metadata.name!] = at;
    recheck = Math.min(recheck ?? Infinity, expires - now);
  }
  return { disrupted, recheckMs: recheck };
};

/** countHealthyPods. */
const countHealthy = (pods: KubeObject[], disrupted: Record<string, string>): number =>
  pods.filter((p) => !p.metadata.deletionTimestamp && disrupted[p.metadata.name ?? ''] === undefined && isReady(p)).length;

/** The status a sync computes (updatePdbStatus), its conditions kept up to date. */
export const budgetStatus = (pdb: KubeObject, counts: { currentHealthy: number; desiredHealthy: number; expectedCount: number; disrupted: Record<string, string> }, now: string): Obj => {
  const { currentHealthy, desiredHealthy, expectedCount, disrupted } = counts;
  // No disruption while nothing is expected: a budget whose first pods appear before it is synced is safe.
  const allowed = expectedCount <= 0 || currentHealthy - desiredHealthy <= 0 ? 0 : currentHealthy - desiredHealthy;
  const st: Obj = {
    ...(Object.keys(disrupted).length > 0 && { disruptedPods: disrupted }),
    disruptionsAllowed: allowed,
    currentHealthy,
    desiredHealthy,
    expectedPods: expectedCount,
    observedGeneration: num(pdb.metadata.generation),
  };
  const current = status(pdb);
  st.conditions = allowedCondition({ ...st, conditions: current.conditions }, now);
  return st;
};

const syncBudget = async (pdb: KubeObject, own: Served, pods: Served, sources: ScaleSources, recorder: EventRecorder): Promise<number | undefined> => {
  const selected = pods.cache.list(pdb.metadata.namespace).filter((p) => budgetSelects(pdb, p));
  if (selected.length === 0) recorder.event(pdb, 'Normal', 'NoPods', 'No matching pods found');
  let expected: Expected;
  try {
    expected = await expectedPodCount(pdb, selected, sources);
  } catch (err) {
    recorder.event(pdb, 'Warning', 'CalculateExpectedPodCountFailed', `Failed to calculate the number of expected pods: ${errorText(err)}`);
    throw err;
  }
  if (expected.unmanaged.length > 0) {
    recorder.event(pdb, 'Warning', 'UnmanagedPods', `Pods selected by this PodDisruptionBudget (selector: ${JSON.stringify(spec(pdb).selector)}) were found to be unmanaged. `
      + 'As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.');
  }
  const now = Date.now();
  const { disrupted, recheckMs } = disruptedPodMap(pdb, selected, now, recorder);
  const next = budgetStatus(pdb, { currentHealthy: countHealthy(selected, disrupted), desiredHealthy: expected.desiredHealthy, expectedCount: expected.expectedCount, disrupted }, timestamp(new Date(now)));
  await writeStatus(own, pdb, next);
  return recheckMs;
};

/** failSafe: nothing may be disrupted while the budget cannot be computed. */
const failSafe = async (pdb: KubeObject, own: Served, err: unknown): Promise<void> => {
  const st: Obj = { ...status(pdb), disruptionsAllowed: 0 };
  st.conditions = setAllowedCondition(arr(st.conditions).map(obj), { status: 'False', reason: 'SyncFailed', message: errorText(err), observedGeneration: num(st.observedGeneration) }, timestamp());
  await writeStatus(own, pdb, st);
};

export const startDisruptionController = (ctx: ControllerContext): Controller => {
  const own = served(ctx, 'policy', 'v1', 'poddisruptionbudgets');
  const pods = served(ctx, '', 'v1', 'pods');
  if (!own || !pods) return { stop: async () => undefined };
  const recorder = ctx.events.recorder('controllermanager');
  const sources = new ScaleSources(ctx);
  const budgetsOf: KeysOf = (pod, old) => {
    const keys = new Set<string>();
    for (const p of old ? [pod, old] : [pod]) for (const b of own.cache.list(p.metadata.namespace)) if (budgetSelects(b, p)) keys.add(objectKey(b));
    return [...keys];
  };
  // A controller's scale moves its budgets' expected count (a percentage, maxUnavailable).
  const everyBudgetOf: KeysOf = (o) => own.cache.list(o.metadata.namespace).map(objectKey);
  const reconcile = async (key: string) => {
    const { namespace, name } = splitKey(key);
    const pdb = own.cache.get(namespace, name);
    if (!pdb) return;
    try {
      const recheckMs = await syncBudget(pdb, own, pods, sources, recorder);
      return recheckMs === undefined ? undefined : { requeueAfter: recheckMs + 1 };
    } catch (err) {
      // A conflict is retried as it is; any other failure leaves the budget safe first.
      if (isApiError(err) && err.code === 409) throw err;
      ctx.log?.({ level: 'warn', msg: 'failed to sync PDB', pdb: key, error: errorText(err) });
      await failSafe(pdb, own, err);
      throw err;
    }
  };
  return startReconciler('disruption-controller', reconcile, [
    { cache: own.cache },
    { cache: pods.cache, keys: budgetsOf },
    ...sources.caches().map((cache) => ({ cache, keys: everyBudgetOf })),
  ], { log: ctx.log });
};
