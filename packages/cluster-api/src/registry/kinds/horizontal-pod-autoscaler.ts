/**
 * HorizontalPodAutoscaler (autoscaling/v2, the storage version; also autoscaling/v1, the spec's).
 * SetDefaults (minReplicas 1; no metrics means 80% average CPU), ValidateHorizontalPodAutoscalerSpec
 * (a target with kind and name, 1 ≤ minReplicas ≤ maxReplicas). autoscaling/v1 knows only a CPU
 * target: the conversion maps it to and from the CPU Utilization metric and keeps every other metric
 * and the conditions in the annotations Kubernetes' conversion uses.
 */
import type { KubeObject } from '../../api/meta.js';
import type { Conversion } from '../definition.js';
import { invalidValue, notSupported, required, type FieldError } from '../generic/validation.js';
import { statusSubresource } from '../subresources/status.js';
import { servedAt } from '../versions.js';
import { AllVerbs, arr, child, column, inGroup, obj, setDefault, spec, status, str, type Obj } from './common.js';

const MetricTypes = ['Object', 'Pods', 'Resource', 'ContainerResource', 'External'] as const;
const MetricsAnnotation = 'autoscaling.alpha.kubernetes.io/metrics';
const CurrentMetricsAnnotation = 'autoscaling.alpha.kubernetes.io/current-metrics';
const ConditionsAnnotation = 'autoscaling.alpha.kubernetes.io/conditions';

const cpuUtilization = (target: number): Obj => ({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: target } } });

/** One direction's scaling rules (`spec.behavior.scaleUp` / `scaleDown`). */
export interface ScalingRules {
  stabilizationWindowSeconds?: number;
  selectPolicy: string;
  policies: { type: string; value: number; periodSeconds: number }[];
}

/** autoscaling/v2's defaults of a behavior's rules; scale-down names no window: the controller's own (5 min) applies. */
export const DefaultScaleUp: ScalingRules = { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] };
export const DefaultScaleDown: ScalingRules = { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] };

/** copyHPAScalingRules: what `given` sets over the defaults. */
export const rulesWithDefaults = (given: unknown, defaults: ScalingRules): ScalingRules => {
  const g = obj(given);
  const out: ScalingRules = { selectPolicy: typeof g.selectPolicy === 'string' ? g.selectPolicy : defaults.selectPolicy, policies: Array.isArray(g.policies) ? (g.policies as ScalingRules['policies']) : structuredClone(defaults.policies) };
  const window = typeof g.stabilizationWindowSeconds === 'number' ? g.stabilizationWindowSeconds : defaults.stabilizationWindowSeconds;
  return window === undefined ? out : { stabilizationWindowSeconds: window, ...out };
};

const defaults = (o: KubeObject): void => {
  const s = child(o, 'spec');
  setDefault(s, 'minReplicas', 1);
  if (arr(s.metrics).length === 0) s.metrics = [cpuUtilization(80)];
  // SetDefaults_HorizontalPodAutoscalerBehavior: only a behavior that is given is completed.
  if (s.behavior !== undefined && s.behavior !== null) {
    const b = child(s, 'behavior');
    b.scaleUp = rulesWithDefaults(b.scaleUp, DefaultScaleUp);
    b.scaleDown = rulesWithDefaults(b.scaleDown, DefaultScaleDown);
  }
};

const SelectPolicies = ['Max', 'Min', 'Disabled'] as const;
const PolicyTypes = ['Pods', 'Percent'] as const;

/** validateBehavior: each direction's window (0–3600 s), select policy and policies (value > 0, period 1–1800 s). */
const validateBehavior = (behavior: unknown): FieldError[] => {
  if (behavior === undefined || behavior === null) return [];
  const errs: FieldError[] = [];
  for (const dir of ['scaleUp', 'scaleDown']) {
    const r = obj(obj(behavior)[dir]);
    const at = `spec.behavior.${dir}`;
    const w = r.stabilizationWindowSeconds;
    if (w !== undefined && !(Number.isInteger(w) && (w as number) >= 0 && (w as number) <= 3600)) errs.push(invalidValue(`${at}.stabilizationWindowSeconds`, w, 'must be less than or equal to 3600 and greater than or equal to 0'));
    if (r.selectPolicy !== undefined && !SelectPolicies.includes(r.selectPolicy as never)) errs.push(notSupported(`${at}.selectPolicy`, r.selectPolicy, SelectPolicies));
    const policies = arr(r.policies).map(obj);
    if (r.policies !== undefined && policies.length === 0) errs.push(required(`${at}.policies`, 'must specify at least one Policy'));
    policies.forEach((p, i) => {
      if (!PolicyTypes.includes(p.type as never)) errs.push(notSupported(`${at}.policies[${i}].type`, p.type ?? '', PolicyTypes));
      if (!(Number.isInteger(p.value) && (p.value as number) > 0)) errs.push(invalidValue(`${at}.policies[${i}].value`, p.value ?? 0, 'must be greater than zero'));
      if (!(Number.isInteger(p.periodSeconds) && (p.periodSeconds as number) > 0 && (p.periodSeconds as number) <= 1800)) errs.push(invalidValue(`${at}.policies[${i}].periodSeconds`, p.periodSeconds ?? 0, 'must be greater than zero and less than or equal to 1800'));
    });
  }
  return errs;
};

const validate = (o: KubeObject): FieldError[] => {
  const s = spec(o);
  const errs: FieldError[] = [];
  const ref = obj(s.scaleTargetRef);
  if (!str(ref.kind)) errs.push(required('spec.scaleTargetRef.kind'));
  if (!str(ref.name)) errs.push(required('spec.scaleTargetRef.name'));
  else if (/[/%]/.test(str(ref.name)) || ['.', '..'].includes(str(ref.name))) errs.push(invalidValue('spec.scaleTargetRef.name', ref.name, 'may not contain \'/\' or \'%\''));
  const min = s.minReplicas;
  if (min !== undefined && !(Number.isInteger(min) && (min as number) >= 1)) errs.push(invalidValue('spec.minReplicas', min, 'must be greater than or equal to 1'));
  if (!(Number.isInteger(s.maxReplicas) && (s.maxReplicas as number) >= 1)) errs.push(invalidValue('spec.maxReplicas', s.maxReplicas ?? 0, 'must be greater than or equal to 1'));
  else if (typeof min === 'number' && (s.maxReplicas as number) < min) errs.push(invalidValue('spec.maxReplicas', s.maxReplicas, 'must be greater than or equal to `minReplicas`'));
  arr(s.metrics).map(obj).forEach((m, i) => {
    if (!MetricTypes.includes(m.type as never)) errs.push(notSupported(`spec.metrics[${i}].type`, m.type ?? '', MetricTypes));
  });
  errs.push(...validateBehavior(s.behavior));
  return errs;
};

/** formatHPAMetrics, for the Resource metrics autoscalers mostly use; others print as Kubernetes' do for their type. */
const targets = (o: KubeObject): string => {
  const metrics = arr(spec(o).metrics).map(obj);
  if (metrics.length === 0) return '<none>';
  const current = arr(status(o).currentMetrics).map(obj);
  const list = metrics.map((m, i) => {
    const cur = obj(current[i]);
    if (m.type === 'Resource') {
      const r = obj(m.resource);
      const t = obj(r.target);
      if (t.averageValue !== undefined) return `${str(r.name)}: ${str(obj(obj(cur.resource).current).averageValue) || '<unknown>'}/${String(t.averageValue)}`;
      const now = obj(obj(cur.resource).current).averageUtilization;
      return `${str(r.name)}: ${typeof now === 'number' ? `${now}%` : '<unknown>'}/${typeof t.averageUtilization === 'number' ? `${t.averageUtilization}%` : '<auto>'}`;
    }
    const source = obj(m[String(m.type).charAt(0).toLowerCase() + String(m.type).slice(1)]);
    return `<unknown>/${String(obj(source.target).averageValue ?? obj(source.target).value ?? '')}`;
  });
  return list.length > 2 ? `${list.slice(0, 2).join(', ')} + ${list.length - 2} more...` : list.join(', ');
};

export const horizontalPodAutoscaler = inGroup('autoscaling', 'v2')({
  kind: 'HorizontalPodAutoscaler',
  plural: 'horizontalpodautoscalers',
  singular: 'horizontalpodautoscaler',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['hpa'],
  categories: ['all'],
  subresources: { status: statusSubresource() },
  strategy: {
    prepareForCreate(o) {
      defaults(o);
      o.status = { currentReplicas: 0, desiredReplicas: 0 };
    },
    prepareForUpdate: defaults,
    validate,
  },
  columns: [
    column('Reference', (o) => `${str(obj(spec(o).scaleTargetRef).kind)}/${str(obj(spec(o).scaleTargetRef).name)}`, { description: 'scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.' }),
    column('Targets', targets, { description: 'metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).' }),
    column('MinPods', (o) => (typeof spec(o).minReplicas === 'number' ? String(spec(o).minReplicas) : '<unset>'), { description: 'minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.' }),
    column('MaxPods', (o) => (typeof spec(o).maxReplicas === 'number' ? spec(o).maxReplicas : 0), { description: 'maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up.' }),
    column('Replicas', (o) => (typeof status(o).currentReplicas === 'number' ? status(o).currentReplicas : 0), { description: 'currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.' }),
  ],
});

const isCpuUtilization = (m: Obj): boolean =>
  m.type === 'Resource' && obj(m.resource).name === 'cpu' && obj(obj(m.resource).target).type === 'Utilization';

const takeAnnotation = (o: KubeObject, key: string): unknown[] => {
  const raw = o.metadata.annotations?.[key];
  if (raw === undefined) return [];
  delete o.metadata.annotations![key];
  if (Object.keys(o.metadata.annotations!).length === 0) delete o.metadata.annotations;
  try {
    return arr(JSON.parse(raw));
  } catch {
    return [];
  }
};

const putAnnotation = (o: KubeObject, key: string, list: unknown[]): void => {
  if (list.length) o.metadata.annotations = { ...o.metadata.annotations, [key]: JSON.stringify(list) };
};

/** Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler and back, for what v1 can say. */
const v1Conversion: Conversion = {
  toStorage(o) {
    const s = child(o, 'spec');
    const extra = takeAnnotation(o, MetricsAnnotation);
    const cpu = s.targetCPUUtilizationPercentage;
    delete s.targetCPUUtilizationPercentage;
    s.metrics = [...(typeof cpu === 'number' ? [cpuUtilization(cpu)] : []), ...extra];
    if (arr(s.metrics).length === 0) delete s.metrics;
    const st = child(o, 'status');
    const current = st.currentCPUUtilizationPercentage;
    delete st.currentCPUUtilizationPercentage;
    const currentExtra = takeAnnotation(o, CurrentMetricsAnnotation);
    const currentCpu = typeof current === 'number' ? [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: current } } }] : [];
    if (currentCpu.length || currentExtra.length) st.currentMetrics = [...currentCpu, ...currentExtra];
    const conditions = takeAnnotation(o, ConditionsAnnotation);
    if (conditions.length) st.conditions = conditions;
  },
  fromStorage(o) {
    const s = child(o, 'spec');
    const metrics = arr(s.metrics).map(obj);
    delete s.metrics;
    const cpu = metrics.find(isCpuUtilization);
    if (cpu) s.targetCPUUtilizationPercentage = obj(obj(cpu.resource).target).averageUtilization;
    putAnnotation(o, MetricsAnnotation, metrics.filter((m) => m !== cpu));
    const st = child(o, 'status');
    const current = arr(st.currentMetrics).map(obj);
    delete st.currentMetrics;
    const currentCpu = current.find((m) => m.type === 'Resource' && obj(m.resource).name === 'cpu');
    if (currentCpu && typeof obj(obj(currentCpu.resource).current).averageUtilization === 'number') {
      st.currentCPUUtilizationPercentage = obj(obj(currentCpu.resource).current).averageUtilization;
    }
    putAnnotation(o, CurrentMetricsAnnotation, current.filter((m) => m !== currentCpu));
    putAnnotation(o, ConditionsAnnotation, arr(st.conditions));
    delete st.conditions;
  },
};

/** v1 defaults; v2's fields are not v1's (typed decoding would drop them). */
const defaultV1 = (o: KubeObject): void => {
  const s = child(o, 'spec');
  for (const f of ['metrics', 'behavior']) delete s[f];
  setDefault(s, 'minReplicas', 1);
};

export const horizontalPodAutoscalerV1 = servedAt(horizontalPodAutoscaler, { group: 'autoscaling', version: 'v1' }, {
  conversion: v1Conversion,
  strategy: {
    prepareForCreate(o) {
      defaultV1(o);
      o.status = { currentReplicas: 0, desiredReplicas: 0 };
    },
    prepareForUpdate: defaultV1,
    validate: (o) => {
      const v2 = structuredClone(o);
      v1Conversion.toStorage(v2);
      defaults(v2);
      const errs = validate(v2);
      const cpu = spec(o).targetCPUUtilizationPercentage;
      if (cpu !== undefined && !(Number.isInteger(cpu) && (cpu as number) >= 1)) errs.push(invalidValue('spec.targetCPUUtilizationPercentage', cpu, 'must be greater than or equal to 1'));
      return errs;
    },
  },
  columns: horizontalPodAutoscaler.columns!.map((c) => ({ ...c, cell: (o: KubeObject) => { const v2 = structuredClone(o); v1Conversion.toStorage(v2); return c.cell(v2); } })),
});
