/**
 * kube-controller-manager's replica calculator (pkg/controller/podautoscaler/replica_calculator.go)
 * for Resource metrics, as pure functions of the pods, their metrics and `now`: pods are grouped as
 * ready, unready (Pending; for CPU, not Ready yet or measured before their readiness settled),
 * missing (no metric) and ignored (being deleted, Failed); the usage ratio of the ready pods'
 * metrics decides; within the tolerance nothing changes; missing pods count as using 100 % of their
 * request (or the target) on a scale-down and nothing on a scale-up, unready pods as nothing on a
 * scale-up; a result that would reverse the direction, or fall within the tolerance once they are
 * counted, keeps the current count. Values are in thousandths (MilliValue), as upstream computes.
 */
import type { KubeObject } from '../../api/meta.js';
import { parseAmount } from '../../api/quantity.js';
import { arr, obj, spec, status, str } from '../../registry/kinds/common.js';

export const DefaultTolerance = 0.1;
/** --horizontal-pod-autoscaler-cpu-initialization-period. */
export const DefaultCpuInitializationPeriodMs = 5 * 60_000;
/** --horizontal-pod-autoscaler-initial-readiness-delay. */
export const DefaultInitialReadinessDelayMs = 30_000;

export interface PodMetric {
  /** Thousandths of the resource (millicores; memory bytes × 1000). */
  value: number;
  timestamp: number;
  windowMs: number;
}

export interface CalculatorSettings {
  tolerance: number;
  cpuInitializationPeriodMs: number;
  initialReadinessDelayMs: number;
}

export const DefaultCalculatorSettings: CalculatorSettings = {
  tolerance: DefaultTolerance,
  cpuInitializationPeriodMs: DefaultCpuInitializationPeriodMs,
  initialReadinessDelayMs: DefaultInitialReadinessDelayMs,
};

export class ReplicaCalculationError extends Error {
  override readonly name = 'ReplicaCalculationError';
}

interface Grouped {
  readyCount: number;
  unready: Set<string>;
  missing: Set<string>;
  ignored: Set<string>;
}

const time = (v: unknown): number | undefined => (typeof v === 'string' ? Date.parse(v) : undefined);

/** groupPods. */
export function groupPods(pods: readonly KubeObject[], metrics: ReadonlyMap<string, PodMetric>, resource: string, now: number, s: CalculatorSettings): Grouped {
  const g: Grouped = { readyCount: 0, unready: new Set(), missing: new Set(), ignored: new Set() };
  for (const pod of pods) {
    const name = pod.metadata.name ?? '';
    const phase = status(pod).phase;
    if (pod.metadata.deletionTimestamp || phase === 'Failed') {
      g.ignored.add(name);
      continue;
    }
    if (phase === 'Pending') {
      g.unready.add(name);
      continue;
    }
    const metric = metrics.get(name);
    if (!metric) {
      g.missing.add(name);
      continue;
    }
    if (resource === 'cpu') {
      const ready = arr(status(pod).conditions).map(obj).find((c) => c.type === 'Ready');
      const started = time(status(pod).startTime);
      let unready: boolean;
      if (!ready || started === undefined) unready = true;
      else {
        const transition = time(ready.lastTransitionTime) ?? 0;
        unready = started + s.cpuInitializationPeriodMs > now
          // Still starting: unready until Ready, and until a whole metric window lies after it became so.
          ? ready.status === 'False' || metric.timestamp < transition + metric.windowMs
          // Past it: unready only if it never became Ready after starting.
          : ready.status === 'False' && started + s.initialReadinessDelayMs > transition;
      }
      if (unready) {
        g.unready.add(name);
        continue;
      }
    }
    g.readyCount++;
  }
  return g;
}

/** calculatePodRequests: the sum of each pod's containers' requests of `resource`, in thousandths. */
export function podRequests(pods: readonly KubeObject[], resource: string, container?: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const pod of pods) {
    let sum = 0;
    for (const c of arr(spec(pod).containers).map(obj).filter((x) => container === undefined || x.name === container)) {
      const q = obj(obj(c.resources).requests)[resource];
      const amount = parseAmount(q);
      if (q === undefined || !amount) throw new ReplicaCalculationError(`missing request for ${resource} in container ${str(c.name)} of Pod ${pod.metadata.name ?? ''}`);
      sum += Number(amount.milli);
    }
    out.set(pod.metadata.name ?? '', sum);
  }
  return out;
}

const without = (metrics: ReadonlyMap<string, PodMetric>, ...names: Set<string>[]): Map<string, PodMetric> =>
  new Map([...metrics].filter(([n]) => !names.some((s) => s.has(n))));

/** GetResourceUtilizationRatio: the ratio to the target, the utilization (percent of requests) and the raw average. */
export function utilizationRatio(metrics: ReadonlyMap<string, PodMetric>, requests: ReadonlyMap<string, number>, target: number): { ratio: number; utilization: number; rawAverage: number } {
  let used = 0;
  let requested = 0;
  let counted = 0;
  for (const [name, m] of metrics) {
    const r = requests.get(name);
    if (r === undefined) continue;
    used += m.value;
    requested += r;
    counted++;
  }
  if (requested === 0) throw new ReplicaCalculationError('no metrics returned matched known pods');
  const utilization = Math.trunc((used * 100) / requested);
  return { ratio: utilization / target, utilization, rawAverage: Math.trunc(used / counted) };
}

/** GetMetricUsageRatio: the average against a target average (both in thousandths). */
const usageRatio = (metrics: ReadonlyMap<string, PodMetric>, target: number): { ratio: number; average: number } => {
  const total = [...metrics.values()].reduce((a, m) => a + m.value, 0);
  const average = Math.trunc(total / metrics.size);
  return { ratio: average / target, average };
};

export interface Proposal {
  replicas: number;
  /** Percent of requests (Utilization targets). */
  utilization?: number;
  /** The average per pod, in thousandths. */
  rawAverage: number;
  /** The time of the metrics used. */
  timestamp: number;
}

interface Input {
  currentReplicas: number;
  pods: readonly KubeObject[];
  metrics: ReadonlyMap<string, PodMetric>;
  resource: string;
  now: number;
  settings?: CalculatorSettings;
  /** A ContainerResource metric's container: only its requests count. */
  container?: string;
}

const latest = (metrics: ReadonlyMap<string, PodMetric>): number => Math.max(0, ...[...metrics.values()].map((m) => m.timestamp));

/**
 * The common decision of both target types: `ratioOf` gives the usage ratio of a set of metrics,
 * `fill` the metric a missing pod is taken to have on a scale-down.
 */
function decide(input: Input, ratioOf: (m: ReadonlyMap<string, PodMetric>) => number, missingOnScaleDown: (pod: string) => number): { replicas: number; used: Map<string, PodMetric> } {
  const { currentReplicas, pods, resource, now } = input;
  const s = input.settings ?? DefaultCalculatorSettings;
  if (pods.length === 0) throw new ReplicaCalculationError('no pods returned by selector while calculating replica count');
  const g = groupPods(pods, input.metrics, resource, now, s);
  const metrics = without(input.metrics, g.ignored, g.unready);
  if (metrics.size === 0) throw new ReplicaCalculationError('did not receive metrics for targeted pods (pods might be unready)');
  const ratio = ratioOf(metrics);
  const result = (replicas: number) => ({ replicas, used: metrics });
  const scaleUpWithUnready = g.unready.size > 0 && ratio > 1;
  if (!scaleUpWithUnready && g.missing.size === 0) {
    if (Math.abs(1 - ratio) <= s.tolerance) return result(currentReplicas);
    return result(Math.ceil(ratio * g.readyCount));
  }
  const filled = new Map(metrics);
  if (g.missing.size > 0) {
    for (const name of g.missing) filled.set(name, { value: ratio < 1 ? missingOnScaleDown(name) : 0, timestamp: 0, windowMs: 0 });
  }
  if (scaleUpWithUnready) for (const name of g.unready) filled.set(name, { value: 0, timestamp: 0, windowMs: 0 });
  const next = ratioOf(filled);
  if (Math.abs(1 - next) <= s.tolerance || (ratio < 1 && next > 1) || (ratio > 1 && next < 1)) return result(currentReplicas);
  const replicas = Math.ceil(next * filled.size);
  if ((next < 1 && replicas > currentReplicas) || (next > 1 && replicas < currentReplicas)) return result(currentReplicas);
  return result(replicas);
}

/** GetResourceReplicas: a Utilization target (percent of the pods' requests). */
export function resourceReplicas(input: Input & { targetUtilization: number }): Proposal {
  const requests = podRequests(input.pods, input.resource, input.container);
  // Missing pods are taken to use their request, or the target when it is above 100 %.
  const fallback = Math.max(100, input.targetUtilization);
  const { replicas, used } = decide(input, (m) => utilizationRatio(m, requests, input.targetUtilization).ratio, (pod) => ((requests.get(pod) ?? 0) * fallback) / 100);
  const { utilization, rawAverage } = utilizationRatio(used, requests, input.targetUtilization);
  return { replicas, utilization, rawAverage, timestamp: latest(used) };
}

/** GetRawResourceReplicas: an AverageValue target (thousandths per pod). */
export function rawResourceReplicas(input: Input & { targetAverage: number }): Proposal {
  const { replicas, used } = decide(input, (m) => usageRatio(m, input.targetAverage).ratio, () => input.targetAverage);
  return { replicas, rawAverage: usageRatio(used, input.targetAverage).average, timestamp: latest(used) };
}
