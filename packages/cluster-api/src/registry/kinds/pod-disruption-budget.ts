/**
 * PodDisruptionBudget (policy/v1, the storage version; also policy/v1beta1): how many of the selected
 * pods must stay, which pods/eviction honours. ValidatePodDisruptionBudgetSpec: minAvailable or
 * maxUnavailable (not both), each an int or a percentage ≤ 100%. policy/v1beta1 reads an empty
 * selector as "no pods" where v1 reads it as "every pod", so the conversion swaps in the marker
 * selectors Kubernetes uses to keep each meaning.
 */
import type { KubeObject } from '../../api/meta.js';
import { isDeepStrictEqual } from 'node:util';
import type { Conversion } from '../definition.js';
import { invalidValue, notSupported, type FieldError } from '../generic/validation.js';
import { statusSubresource } from '../subresources/status.js';
import { servedAt } from '../versions.js';
import { AllVerbs, arr, child, column, inGroup, num, obj, spec, status, type Obj } from './common.js';
import { count } from './columns.js';
import { validateLabelSelector } from './label-selector.js';
import { nonNegativeFields, validateIntOrPercent } from './workload.js';

const EvictionPolicies = ['IfHealthyBudget', 'AlwaysAllow'] as const;

const validate = (o: KubeObject): FieldError[] => {
  const s = spec(o);
  const errs = [...validateIntOrPercent(s.minAvailable, 'spec.minAvailable', true), ...validateIntOrPercent(s.maxUnavailable, 'spec.maxUnavailable', true)];
  if (s.minAvailable !== undefined && s.minAvailable !== null && s.maxUnavailable !== undefined && s.maxUnavailable !== null) {
    errs.push(invalidValue('spec', s, 'minAvailable and maxUnavailable cannot be both set'));
  }
  errs.push(...validateLabelSelector(s.selector, 'spec.selector'));
  if (s.unhealthyPodEvictionPolicy !== undefined && !EvictionPolicies.includes(s.unhealthyPodEvictionPolicy as never)) {
    errs.push(notSupported('spec.unhealthyPodEvictionPolicy', s.unhealthyPodEvictionPolicy, EvictionPolicies));
  }
  return errs;
};

const validateStatus = (o: KubeObject): FieldError[] =>
  nonNegativeFields(status(o), 'status', ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods', 'observedGeneration']);

/** apimeta.SetStatusCondition of the DisruptionAllowed condition: the transition time moves only when the status does. */
export const setAllowedCondition = (conditions: Obj[], next: { status: string; reason: string; message?: string; observedGeneration: number }, now: string): Obj[] => {
  const old = conditions.find((c) => c.type === 'DisruptionAllowed');
  const condition = {
    type: 'DisruptionAllowed',
    status: next.status,
    observedGeneration: next.observedGeneration,
    lastTransitionTime: old && old.status === next.status ? old.lastTransitionTime : now,
    reason: next.reason,
    message: next.message ?? '',
  };
  return old ? conditions.map((c) => (c === old ? condition : c)) : [...conditions, condition];
};

/** UpdateDisruptionAllowedCondition. */
export const allowedCondition = (st: Obj, now: string): Obj[] =>
  setAllowedCondition(arr(st.conditions).map(obj), num(st.disruptionsAllowed) > 0
    ? { status: 'True', reason: 'SufficientPods', observedGeneration: num(st.observedGeneration) }
    : { status: 'False', reason: 'InsufficientPods', observedGeneration: num(st.observedGeneration) }, now);

const orNA = (v: unknown): string => (v === undefined || v === null ? 'N/A' : String(v));

export const podDisruptionBudget = inGroup('policy', 'v1')({
  kind: 'PodDisruptionBudget',
  plural: 'poddisruptionbudgets',
  singular: 'poddisruptionbudget',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['pdb'],
  subresources: { status: statusSubresource({ validate: validateStatus }) },
  strategy: {
    prepareForCreate(o) {
      o.status = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
    },
    validate,
  },
  columns: [
    column('Min Available', (o) => orNA(spec(o).minAvailable), { description: 'The minimum number of pods that must be available.' }),
    column('Max Unavailable', (o) => orNA(spec(o).maxUnavailable), { description: 'The maximum number of pods that may be unavailable.' }),
    column('Allowed Disruptions', (o) => count(status(o).disruptionsAllowed), { type: 'integer', description: 'Calculated number of pods that may be disrupted at this time.' }),
  ],
});

const MarkerKey = 'pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match';
/** v1beta1's `{}` (no pods) as v1 stores it, and v1beta1's "every pod" marker as v1's `{}`. */
const MatchNone = { matchExpressions: [{ key: MarkerKey, operator: 'Exists' }] };
const MatchAll = { matchExpressions: [{ key: MarkerKey, operator: 'DoesNotExist' }] };

const swapSelector = (o: KubeObject, from: unknown, to: unknown): void => {
  const s = obj(o.spec);
  if (s.selector !== undefined && isDeepStrictEqual(s.selector, from)) child(o, 'spec').selector = structuredClone(to);
};

const v1beta1Conversion: Conversion = {
  toStorage(o) {
    if (isDeepStrictEqual(obj(o.spec).selector, {})) return swapSelector(o, {}, MatchNone);
    swapSelector(o, MatchAll, {});
  },
  fromStorage(o) {
    if (isDeepStrictEqual(obj(o.spec).selector, {})) return swapSelector(o, {}, MatchAll);
    swapSelector(o, MatchNone, {});
  },
};

export const podDisruptionBudgetV1beta1 = servedAt(podDisruptionBudget, { group: 'policy', version: 'v1beta1' }, { conversion: v1beta1Conversion });

export { MatchNone as V1beta1MatchNoneSelector };
