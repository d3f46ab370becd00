/**
 * The horizontal pod autoscaler controller (pkg/controller/podautoscaler/horizontal.go): every
 * HorizontalPodAutoscaler (autoscaling/v2, what v1 is stored as) is synced once per sync period
 * (--horizontal-pod-autoscaler-sync-period, 15 s) and when its spec changes, never because its own
 * status was written. A sync reads the target's scale subresource (Deployment, ReplicaSet,
 * StatefulSet, ReplicationController, or any kind serving /scale), the pods its selector selects,
 * their PodMetrics (metrics.k8s.io), proposes a count per metric (replicas.ts: Resource and
 * ContainerResource, Utilization and AverageValue), takes the highest, stabilizes and rate-limits
 * it (normalize.ts), writes the new count through /scale with a SuccessfulRescale Event, and writes
 * the status: currentReplicas, desiredReplicas, currentMetrics, lastScaleTime and the conditions
 * AbleToScale, ScalingActive, ScalingLimited, with the reasons and messages kube-controller-manager
 * gives. Object, Pods and External metrics need a custom or external metrics API, which is not
 * served here: such a metric is invalid (FailedGet…Metric), as upstream without those APIs.
 */
import type { KubeObject } from '../../api/meta.js';
import { isApiError } from '../../api/errors.js';
import { parseAmount, formatAmount } from '../../api/quantity.js';
import { timestamp } from '../../registry/generic/meta.js';
import { parseLabelSelector } from '../../registry/generic/selectors.js';
import { arr, num, obj, spec, status, str, type Obj } from '../../registry/kinds/common.js';
import type { ResourceClient } from '../../client/interface.js';
import type { EventRecorder } from '@func/kube-client';
import { errorText, objectKey, served, splitKey, writeStatus, type ControllerContext } from '../context.js';
import { startReconciler, type KeysOf } from '../reconciler.js';
import { inNamespace, type Controller } from '../shared.js';
import { newHistory, normalize, normalizeWithBehavior, recordScale, DefaultDownscaleStabilizationMs, type Condition, type History } from './normalize.js';
import { DefaultCalculatorSettings, rawResourceReplicas, resourceReplicas, type CalculatorSettings, type PodMetric, type Proposal } from './replicas.js';

export interface HpaSettings extends Partial<CalculatorSettings> {
  /** --horizontal-pod-autoscaler-sync-period (default 15 s). */
  syncPeriodMs?: number;
  /** --horizontal-pod-autoscaler-downscale-stabilization (default 5 min). */
  downscaleStabilizationMs?: number;
}

export const DefaultSyncPeriodMs = 15_000;

class MetricError extends Error {
  constructor(readonly condition: Condition, message: string) {
    super(message);
  }
}

/** A Go duration (`15s`, `1m0.5s`, `800ms`) in ms; 0 when it does not parse. */
export const durationMs = (text: unknown): number => {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 1e-3, µs: 1e-3, ns: 1e-6 };
  let total = 0;
  const s = String(text ?? '');
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/gy;
  let m: RegExpExecArray | null;
  let at = 0;
  while ((m = re.exec(s))) (total += Number(m[1]) * units[m[2]!]!), (at = re.lastIndex);
  return at === s.length ? total : 0;
};

/** setCondition: the condition replaced, its lastTransitionTime kept while its status does not change. */
const withCondition = (conditions: Obj[], type: string, c: Condition, now: string): Obj[] => {
  const old = conditions.find((x) => x.type === type);
  const next = { type, status: c.status, lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : now, reason: c.reason, message: c.message };
  return old ? conditions.map((x) => (x === old ? next : x)) : [...conditions, next];
};

const milliQuantity = (milli: number): string => formatAmount({ milli: BigInt(Math.trunc(milli)), binary: false });

/** The scale target's resource: the served kind of the reference's group with a scale subresource. */
const targetStore = (ctx: ControllerContext, ref: Obj): ResourceClient | undefined => {
  const apiVersion = str(ref.apiVersion);
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const def = ctx.client.definitions().find((d) => d.group === group && d.version === version && d.kind === ref.kind);
  return def && ctx.client.find(def.group, def.version, def.plural);
};

interface Sync {
  hpa: KubeObject;
  conditions: Obj[];
  now: number;
}

export function startHorizontalPodAutoscaler(ctx: ControllerContext, settings: HpaSettings = {}): Controller {
  const own = served(ctx, 'autoscaling', 'v2', 'horizontalpodautoscalers');
  const pods = served(ctx, '', 'v1', 'pods');
  if (!own || !pods) return { stop: async () => undefined };
  const syncPeriodMs = settings.syncPeriodMs ?? DefaultSyncPeriodMs;
  const downscaleMs = settings.downscaleStabilizationMs ?? DefaultDownscaleStabilizationMs;
  const calc: CalculatorSettings = { ...DefaultCalculatorSettings, ...Object.fromEntries(Object.entries(settings).filter(([k, v]) => k in DefaultCalculatorSettings && v !== undefined)) };
  const recorder: EventRecorder = ctx.events.recorder('horizontal-pod-autoscaler');
  const histories = new Map<string, History>();

  const setCondition = (s: Sync, type: string, c: Condition) => (s.conditions = withCondition(s.conditions, type, c, timestamp(new Date(s.now))));

  /** GetResourceMetric: each selected pod's usage of `resource` (one container's with `container`), in thousandths. */
  const podMetrics = async (namespace: string, selector: string, resource: string, container?: string): Promise<Map<string, PodMetric>> => {
    const store = ctx.client.find('metrics.k8s.io', 'v1beta1', 'pods');
    const list = store ? (await store.list(inNamespace(namespace), { labelSelector: selector })).items : [];
    if (list.length === 0) throw new Error(`unable to get metrics for resource ${resource}: no metrics returned from resource metrics API`);
    const out = new Map<string, PodMetric>();
    for (const m of list) {
      let value = 0;
      let missing = false;
      const containers = arr((m as Obj).containers).map(obj).filter((c) => container === undefined || c.name === container);
      if (containers.length === 0) missing = true;
      for (const c of containers) {
        const amount = parseAmount(obj(c.usage)[resource]);
        if (!amount) missing = true;
        else value += Number(amount.milli);
      }
      if (!missing) out.set(m.metadata.name ?? '', { value, timestamp: Date.parse(str((m as Obj).timestamp)), windowMs: durationMs((m as Obj).window) });
    }
    return out;
  };

  /** computeStatusForResourceMetric / ContainerResourceMetric: the proposal of one metric and its status. */
  const resourceMetric = async (s: Sync, m: Obj, current: number, selector: string, selected: KubeObject[]): Promise<{ proposal: Proposal; name: string; status: Obj }> => {
    const isContainer = m.type === 'ContainerResource';
    const source = obj(isContainer ? m.containerResource : m.resource);
    const resource = str(source.name);
    const container = isContainer ? str(source.container) : undefined;
    const target = obj(source.target);
    const failed = isContainer ? 'FailedGetContainerResourceMetric' : 'FailedGetResourceMetric';
    const what = isContainer ? 'container resource' : 'resource';
    try {
      const metrics = await podMetrics(s.hpa.metadata.namespace ?? '', selector, resource, container);
      const input = { currentReplicas: current, pods: selected, metrics, resource, now: s.now, settings: calc, container };
      if (typeof target.averageValue === 'string' || typeof target.averageValue === 'number') {
        const goal = parseAmount(target.averageValue);
        if (!goal) throw new Error(`invalid averageValue ${String(target.averageValue)}`);
        const proposal = rawResourceReplicas({ ...input, targetAverage: Number(goal.milli) });
        const cur = { averageValue: milliQuantity(proposal.rawAverage) };
        return { proposal, name: `${resource} ${what}`, status: { type: m.type, [isContainer ? 'containerResource' : 'resource']: { name: resource, ...(container && { container }), current: cur } } };
      }
      if (typeof target.averageUtilization !== 'number') throw new Error('invalid resource metric source: neither a utilization target nor a value target was set');
      const proposal = resourceReplicas({ ...input, targetUtilization: target.averageUtilization });
      const cur = { averageValue: milliQuantity(proposal.rawAverage), averageUtilization: proposal.utilization };
      return { proposal, name: `${resource} ${what} utilization (percentage of request)`, status: { type: m.type, [isContainer ? 'containerResource' : 'resource']: { name: resource, ...(container && { container }), current: cur } } };
    } catch (err) {
      const message = `failed to get ${resource} utilization: ${errorText(err)}`;
      recorder.event(s.hpa, 'Warning', failed, message);
      throw new MetricError({ status: 'False', reason: failed, message: `the HPA was unable to compute the replica count: ${message}` }, message);
    }
  };

  /** computeReplicasForMetrics: the highest proposal of the valid metrics, and every metric's status. */
  const replicasForMetrics = async (s: Sync, scale: KubeObject, current: number): Promise<{ replicas: number; metric: string; statuses: Obj[] } | { error: string; statuses: Obj[] }> => {
    const selector = str(status(scale).selector);
    if (!selector) {
      recorder.event(s.hpa, 'Warning', 'SelectorRequired', 'selector is required');
      setCondition(s, 'ScalingActive', { status: 'False', reason: 'InvalidSelector', message: "the HPA target's scale is missing a selector" });
      return { error: 'selector is required', statuses: [] };
    }
    let matches: (labels: Record<string, string>) => boolean;
    try {
      matches = parseLabelSelector(selector);
    } catch (err) {
      const message = `couldn't convert selector into a corresponding internal selector object: ${errorText(err)}`;
      recorder.event(s.hpa, 'Warning', 'InvalidSelector', message);
      setCondition(s, 'ScalingActive', { status: 'False', reason: 'InvalidSelector', message });
      return { error: message, statuses: [] };
    }
    const selected = pods.cache.list(s.hpa.metadata.namespace).filter((p) => matches(p.metadata.labels ?? {}));
    const specs = arr(spec(s.hpa).metrics).map(obj);
    const statuses: Obj[] = [];
    let replicas = 0;
    let metric = '';
    let invalid = 0;
    let first: MetricError | undefined;
    for (const m of specs) {
      try {
        if (m.type !== 'Resource' && m.type !== 'ContainerResource') {
          const reason = `FailedGet${str(m.type)}Metric`;
          const message = `unable to get ${str(m.type)} metric: no ${m.type === 'External' ? 'external' : 'custom'} metrics API is served`;
          recorder.event(s.hpa, 'Warning', reason, message);
          throw new MetricError({ status: 'False', reason, message: `the HPA was unable to compute the replica count: ${message}` }, message);
        }
        const r = await resourceMetric(s, m, current, selector, selected);
        statuses.push(r.status);
        if (replicas === 0 || r.proposal.replicas > replicas) (replicas = r.proposal.replicas), (metric = r.name);
      } catch (err) {
        // As upstream: an empty status keeps the others at their metric's index (kubectl's TARGETS column pairs them by index).
        statuses.push({ type: '' });
        if (!(err instanceof MetricError)) throw err;
        invalid++;
        first ??= err;
      }
    }
    if (first && (invalid >= specs.length || replicas < current)) {
      setCondition(s, 'ScalingActive', first.condition);
      return { error: `invalid metrics (${invalid} invalid out of ${specs.length}), first error is: ${first.message}`, statuses };
    }
    setCondition(s, 'ScalingActive', { status: 'True', reason: 'ValidMetricFound', message: `the HPA was able to successfully calculate a replica count from ${metric}` });
    return { replicas, metric, statuses };
  };

  const writeHpa = (s: Sync, fields: Obj) =>
    writeStatus(own, s.hpa, { ...fields, conditions: s.conditions });

  const sync = async (key: string, hpa: KubeObject): Promise<void> => {
    const s: Sync = { hpa, conditions: arr(status(hpa).conditions).map(obj), now: Date.now() };
    const ref = obj(spec(hpa).scaleTargetRef);
    const reference = `${str(ref.kind)}/${str(ref.name)}`;
    const kept = { ...(status(hpa).lastScaleTime !== undefined && { lastScaleTime: status(hpa).lastScaleTime }) };
    const ns = inNamespace(hpa.metadata.namespace);
    const store = targetStore(ctx, ref);
    let scale: KubeObject;
    try {
      if (!store) throw new Error(`no matches for kind "${str(ref.kind)}" in group version "${str(ref.apiVersion)}"`);
      scale = await store.get(ns, str(ref.name), 'scale');
    } catch (err) {
      const message = `the HPA controller was unable to get the target's current scale: ${errorText(err)}`;
      recorder.event(hpa, 'Warning', 'FailedGetScale', errorText(err));
      setCondition(s, 'AbleToScale', { status: 'False', reason: 'FailedGetScale', message });
      await writeHpa(s, { ...kept, currentReplicas: num(status(hpa).currentReplicas), desiredReplicas: num(status(hpa).desiredReplicas), ...(status(hpa).currentMetrics !== undefined && { currentMetrics: status(hpa).currentMetrics }) });
      return;
    }
    setCondition(s, 'AbleToScale', { status: 'True', reason: 'SucceededGetScale', message: "the HPA controller was able to get the target's current scale" });
    const current = num(spec(scale).replicas);
    let history = histories.get(key);
    if (!history) {
      histories.set(key, (history = newHistory()));
      history.recommendations.push({ at: s.now, value: current });
    }
    const min = typeof spec(hpa).minReplicas === 'number' ? (spec(hpa).minReplicas as number) : 1;
    const max = num(spec(hpa).maxReplicas);
    let desired = 0;
    let reason = '';
    let rescale = true;
    let statuses: Obj[] = arr(status(hpa).currentMetrics).map(obj);
    if (current === 0 && min !== 0) {
      rescale = false;
      setCondition(s, 'ScalingActive', { status: 'False', reason: 'ScalingDisabled', message: 'scaling is disabled since the replica count of the target is zero' });
    } else if (current > max) {
      reason = 'Current number of replicas above Spec.MaxReplicas';
      desired = max;
    } else if (current < min) {
      reason = 'Current number of replicas below Spec.MinReplicas';
      desired = min;
    } else {
      const computed = await replicasForMetrics(s, scale, current);
      statuses = computed.statuses;
      if ('error' in computed) {
        recorder.event(hpa, 'Warning', 'FailedComputeMetricsReplicas', computed.error);
        await writeHpa(s, { ...kept, currentReplicas: current, desiredReplicas: num(status(hpa).desiredReplicas), ...(statuses.length && { currentMetrics: statuses }) });
        return;
      }
      desired = computed.replicas;
      if (desired > current) reason = `${computed.metric} above target`;
      if (desired < current) reason = 'All metrics below target';
      const args = { current, desired, min, max, now: s.now };
      const behavior = spec(hpa).behavior;
      const n = behavior ? normalizeWithBehavior(history, args, obj(behavior), downscaleMs) : normalize(history, args, downscaleMs);
      setCondition(s, 'AbleToScale', n.ableToScale);
      setCondition(s, 'ScalingLimited', n.scalingLimited);
      desired = n.replicas;
      rescale = desired !== current;
    }
    if (rescale) {
      try {
        await store!.update(ns, str(ref.name), { ...scale, spec: { ...spec(scale), replicas: desired } }, 'scale');
      } catch (err) {
        recorder.event(hpa, 'Warning', 'FailedRescale', `New size: ${desired}; reason: ${reason}; error: ${errorText(err)}`);
        setCondition(s, 'AbleToScale', { status: 'False', reason: 'FailedUpdateScale', message: `the HPA controller was unable to update the target scale: ${errorText(err)}` });
        await writeHpa(s, { ...kept, currentReplicas: current, desiredReplicas: num(status(hpa).desiredReplicas), ...(statuses.length && { currentMetrics: statuses }) });
        if (isApiError(err) && err.code === 409) throw err;
        return;
      }
      setCondition(s, 'AbleToScale', { status: 'True', reason: 'SucceededRescale', message: `the HPA controller was able to update the target scale to ${desired}` });
      recorder.event(hpa, 'Normal', 'SuccessfulRescale', `New size: ${desired}; reason: ${reason}`);
      recordScale(history, spec(hpa).behavior ? obj(spec(hpa).behavior) : undefined, current, desired, s.now, downscaleMs);
      ctx.log?.({ level: 'info', msg: 'rescaled', hpa: key, target: reference, from: current, to: desired, reason });
    } else desired = current;
    await writeHpa(s, {
      ...(rescale ? { lastScaleTime: timestamp(new Date(s.now)) } : kept),
      currentReplicas: current,
      desiredReplicas: desired,
      ...(statuses.length && { currentMetrics: statuses }),
      ...(typeof hpa.metadata.generation === 'number' && { observedGeneration: hpa.metadata.generation }),
    });
  };

  // Its own status writes do not wake an autoscaler: it syncs on its period and when its spec changes.
  const specChanges: KeysOf = (o, old, type) => {
    if (type === 'DELETED') histories.delete(objectKey(o));
    return type === 'MODIFIED' && old && old.metadata.generation === o.metadata.generation ? [] : [objectKey(o)];
  };
  return startReconciler('horizontal-pod-autoscaler', async (key) => {
    const { namespace, name } = splitKey(key);
    const hpa = own.cache.get(namespace, name);
    if (!hpa) return;
    try {
      await sync(key, hpa);
    } catch (err) {
      ctx.log?.({ level: 'warn', msg: 'failed to sync HPA', hpa: key, error: errorText(err) });
    }
    return { requeueAfter: syncPeriodMs };
  }, [{ cache: own.cache, keys: specChanges }], { log: ctx.log });
}
