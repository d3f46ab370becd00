/**
 * metav1.LabelSelector (`matchLabels` + `matchExpressions`) as the apps, batch, policy and
 * networking kinds hold it: Kubernetes' validation messages (ValidateLabelSelector), its string form
 * (FormatLabelSelector: what `kubectl get -o wide` and Scale's status.selector show) and matching.
 */
import { check, forbiddenField, invalidValue, isQualifiedName, required, validateLabels, type FieldError } from '../generic/validation.js';
import { arr, obj, str } from './common.js';

const Operators = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

interface Requirement {
  key: string;
  operator: string;
  values: string[];
}

/** matchLabels then matchExpressions, as LabelSelectorAsSelector builds them, sorted by key. */
const requirements = (selector: unknown): Requirement[] => {
  const s = obj(selector);
  const labels = Object.entries(obj(s.matchLabels)).map(([key, v]) => ({ key, operator: '=', values: [String(v)] }));
  const exprs = arr(s.matchExpressions).map(obj).map((e) => ({ key: str(e.key), operator: str(e.operator), values: arr(e.values).map(String).sort() }));
  return [...labels, ...exprs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
};

const requirementString = ({ key, operator, values }: Requirement): string => {
  switch (operator) {
    case '=': return `${key}=${values[0]}`;
    case 'In': return `${key} in (${values.join(',')})`;
    case 'NotIn': return `${key} notin (${values.join(',')})`;
    case 'Exists': return key;
    case 'DoesNotExist': return `!${key}`;
    default: return '';
  }
};

/** selector.String(): '' for an empty selector. */
export const selectorString = (selector: unknown): string => requirements(selector).map(requirementString).join(',');

/** metav1.FormatLabelSelector: `<none>` for an absent or empty selector. */
export const formatLabelSelector = (selector: unknown): string => selectorString(selector) || '<none>';

/** Whether `labels` satisfy the selector; an empty selector matches everything (nil: `none` decides). */
export const selectorMatches = (selector: unknown, labels: Readonly<Record<string, string>>): boolean =>
  requirements(selector).every(({ key, operator, values }) => {
    const has = Object.hasOwn(labels, key);
    switch (operator) {
      case '=': return labels[key] === values[0];
      case 'In': return has && values.includes(labels[key]!);
      case 'NotIn': return !has || !values.includes(labels[key]!);
      case 'Exists': return has;
      case 'DoesNotExist': return !has;
      default: return false;
    }
  });

export const isEmptySelector = (selector: unknown): boolean =>
  Object.keys(obj(obj(selector).matchLabels)).length === 0 && arr(obj(selector).matchExpressions).length === 0;

/** ValidateLabelSelector (apimachinery metav1 validation). */
export const validateLabelSelector = (selector: unknown, at: string): FieldError[] => {
  if (selector === undefined || selector === null) return [];
  const s = obj(selector);
  const errs: FieldError[] = [];
  arr(s.matchExpressions).forEach((raw, i) => {
    const e = obj(raw);
    const f = `${at}.matchExpressions[${i}]`;
    const values = arr(e.values);
    if (e.operator === 'In' || e.operator === 'NotIn') {
      if (values.length === 0) errs.push(required(`${f}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (e.operator === 'Exists' || e.operator === 'DoesNotExist') {
      if (values.length > 0) errs.push(forbiddenField(`${f}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else {
      errs.push(invalidValue(`${f}.operator`, e.operator ?? '', 'not a valid selector operator'));
    }
    errs.push(...check(`${f}.key`, str(e.key), isQualifiedName));
  });
  errs.push(...validateLabels(obj(s.matchLabels) as Record<string, string>, `${at}.matchLabels`));
  return errs;
};

export { Operators as SelectorOperators };
