/**
 * metav1.LabelSelector (matchLabels + matchExpressions) as a field of an object, not a query string:
 * its validation (apimachinery's ValidateLabelSelector wording) and its matching
 * (LabelSelectorAsSelector). Used by ClusterRole aggregation rules.
 */
import type { LabelSelector } from '@func/kube-client';
import type { Labels, Matcher } from './selectors.js';
import { check, forbiddenField, invalidValue, isQualifiedName, required, validateLabels, type FieldError } from './validation.js';

const Operators = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

export const validateLabelSelector = (selector: LabelSelector | null | undefined, field: string): FieldError[] => {
  if (!selector) return [];
  const errs: FieldError[] = [];
  (selector.matchExpressions ?? []).forEach((e, i) => {
    const at = `${field}.matchExpressions[${i}]`;
    const values = e.values ?? [];
    if (e.operator === 'In' || e.operator === 'NotIn') {
      if (values.length === 0) errs.push(required(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (e.operator === 'Exists' || e.operator === 'DoesNotExist') {
      if (values.length > 0) errs.push(forbiddenField(`${at}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else errs.push(invalidValue(`${at}.operator`, e.operator ?? '', 'not a valid selector operator'));
    errs.push(...check(`${at}.key`, e.key ?? '', isQualifiedName));
  });
  errs.push(...validateLabels(selector.matchLabels, `${field}.matchLabels`));
  return errs;
};

/**
 * The objects a selector selects. An empty selector selects everything (an aggregation rule's `{}`
 * gathers every ClusterRole, as in Kubernetes); an unknown operator selects nothing.
 */
export const labelSelectorMatcher = (selector: LabelSelector): Matcher => {
  const tests: Matcher[] = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => (l: Labels) => l[k] === v);
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    if (!(Operators as readonly string[]).includes(operator)) return () => false;
    if (operator === 'In') tests.push((l) => key in l && values.includes(l[key]!));
    else if (operator === 'NotIn') tests.push((l) => !(key in l) || !values.includes(l[key]!));
    else if (operator === 'Exists') tests.push((l) => key in l);
    else tests.push((l) => !(key in l));
  }
  return (labels) => tests.every((t) => t(labels));
};
