/**
 * What the workload kinds (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job) share, as Kubernetes'
 * apps and batch validation has it: a label selector that must select the pod template's labels, the
 * template's pod spec (defaults and validation), restartPolicy Always for long-running pods, an
 * immutable selector, integer-or-percent fields, and the status counters no status may make negative.
 */
import type { KubeObject } from '../../api/meta.js';
import { forbiddenField, immutable, invalidValue, notSupported, required, validateLabels, type FieldError } from '../generic/validation.js';
import { child, nonNegative, obj, spec, type Obj } from './common.js';
import { isEmptySelector, selectorMatches, validateLabelSelector } from './label-selector.js';
import { defaultPodSpec, validatePodSpec } from './pod-spec.js';

export const templateOf = (o: KubeObject): Obj => obj(spec(o).template);
export const templateLabels = (template: Obj): Record<string, string> => obj(obj(template.metadata).labels) as Record<string, string>;

/**
 * The template's pod spec defaults (SetDefaults_PodSpec and friends), under `spec.template`. The
 * service account is the ServiceAccount admission's business, for pods only: a template keeps none.
 */
export const defaultTemplate = (s: Obj): void => {
  if (s.template === undefined) return;
  const pod = child(child(s, 'template'), 'spec');
  const asked = [pod.serviceAccountName, pod.serviceAccount];
  defaultPodSpec(pod);
  if (asked[0] === undefined && asked[1] === undefined) {
    delete pod.serviceAccountName;
    delete pod.serviceAccount;
  }
};

/** v1beta1 defaulting: no selector means the template's labels, and so do the object's own labels when it has none. */
export const selectorFromTemplate = (o: KubeObject): void => {
  const s = child(o, 'spec');
  const labels = templateLabels(obj(s.template));
  if (Object.keys(labels).length === 0) return;
  if (s.selector === undefined || s.selector === null) s.selector = { matchLabels: { ...labels } };
  if (Object.keys(o.metadata.labels ?? {}).length === 0) o.metadata.labels = { ...labels };
};

/** Under `at`: nonnegative integers (ValidateNonnegativeField). */
export const nonNegativeFields = (o: Obj, at: string, fields: readonly string[]): FieldError[] =>
  fields.filter((f) => !nonNegative(o[f])).map((f) => invalidValue(`${at}.${f}`, o[f], 'must be greater than or equal to 0'));

export interface TemplateRules {
  /** The kind as messages name it: `empty selector is invalid for deployment`. */
  noun: string;
  /** Long-running pods (apps kinds): restartPolicy must be Always. Jobs: OnFailure or Never. */
  restartPolicies: readonly string[];
}

/**
 * ValidateDeploymentSpec / ValidateReplicaSetSpec / … for the selector and the template: a required,
 * non-empty, valid selector that selects the template's labels; the template's pod spec.
 */
export const validateSelectedTemplate = (s: Obj, at: string, rules: TemplateRules): FieldError[] => {
  const errs: FieldError[] = [];
  const selector = s.selector;
  if (selector === undefined || selector === null) errs.push(required(`${at}.selector`));
  else {
    const selectorErrors = validateLabelSelector(selector, `${at}.selector`);
    errs.push(...selectorErrors);
    if (isEmptySelector(selector)) errs.push(invalidValue(`${at}.selector`, selector, `empty selector is invalid for ${rules.noun}`));
    // LabelSelectorAsSelector fails: Kubernetes then checks no template against it.
    if (selectorErrors.some((e) => e.field.includes('.matchExpressions['))) return [...errs, invalidValue(`${at}.selector`, selector, 'invalid label selector')];
  }
  if (s.template === undefined || s.template === null) return [...errs, required(`${at}.template`)];
  const template = obj(s.template);
  const labels = templateLabels(template);
  if (selector && !isEmptySelector(selector) && !selectorMatches(selector, labels)) {
    errs.push(invalidValue(`${at}.template.metadata.labels`, labels, '`selector` does not match template `labels`'));
  }
  errs.push(...validateLabels(labels, `${at}.template.metadata.labels`));
  const pod = obj(template.spec);
  errs.push(...validatePodSpec(pod, `${at}.template.spec`));
  if (pod.restartPolicy !== undefined && !rules.restartPolicies.includes(pod.restartPolicy as string)) {
    errs.push(notSupported(`${at}.template.spec.restartPolicy`, pod.restartPolicy, rules.restartPolicies));
  }
  if (pod.activeDeadlineSeconds !== undefined && rules.restartPolicies.includes('Always')) {
    errs.push(forbiddenField(`${at}.template.spec.activeDeadlineSeconds`, `activeDeadlineSeconds in ${rules.noun} is not Supported`));
  }
  return errs;
};

/** apps/v1: the selector may not change once set (apps/v1beta1 and extensions/v1beta1 allow it, as Kubernetes does). */
export const immutableSelector = (o: KubeObject, old: KubeObject): FieldError[] =>
  JSON.stringify(spec(o).selector ?? null) === JSON.stringify(spec(old).selector ?? null) ? [] : [immutable('spec.selector', spec(o).selector)];

const Percent = /^[0-9]+%$/;

/** ValidatePositiveIntOrPercent, and at most 100% where `capped`. */
export const validateIntOrPercent = (v: unknown, at: string, capped = false): FieldError[] => {
  if (v === undefined || v === null) return [];
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 ? [] : [invalidValue(at, v, 'must be greater than or equal to 0')];
  if (typeof v !== 'string' || !Percent.test(v)) return [invalidValue(at, v, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")];
  return capped && Number(v.slice(0, -1)) > 100 ? [invalidValue(at, v, 'must not be greater than 100%')] : [];
};

/** An int-or-percent as a number of `total` (intstr.GetScaledValueFromIntOrPercent, rounding up or down). */
export const scaledValue = (v: unknown, total: number, roundUp: boolean): number => {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string' || !Percent.test(v)) return 0;
  const exact = (Number(v.slice(0, -1)) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
};

/** A status counter may not exceed another (`status.readyReplicas` ≤ `status.replicas`). */
export const notAbove = (st: Obj, field: string, other: string, at = 'status'): FieldError[] =>
  typeof st[field] === 'number' && typeof st[other] === 'number' && (st[field] as number) > (st[other] as number)
    ? [invalidValue(`${at}.${field}`, st[field], `cannot be greater than ${at}.${other}`)]
    : [];
