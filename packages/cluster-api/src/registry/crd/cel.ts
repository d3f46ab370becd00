/**
 * `x-kubernetes-validations`: CEL rules, evaluated with @bufbuild/cel (run against the cel-spec
 * conformance suite; RE2 for `matches`) with its strings extension and Kubernetes' lists library
 * (cel-lists.ts), as kube-apiserver evaluates them:
 * `self` is the value at the rule's schema node, `oldSelf` the correlated old value on update (rules
 * that use it are transition rules, skipped when there is none), integers are CEL ints; a failed rule
 * is a field error of its `reason` at the node (or `fieldPath`), worded by `messageExpression`,
 * `message` or `failed rule: <rule>`. At CRD creation rules are parsed, checked for functions this
 * server lacks, and their cost estimated from the schema's maxItems / maxProperties (unbounded: what a
 * 3 MiB request can hold) against Kubernetes' budgets; see cel-cost.ts.
 */
import { celEnv, isCelError, parse, plan } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { forbiddenField, invalidValue, notSupported, required, type FieldError } from '../generic/validation.js';
import { isObject } from '../generic/meta.js';
import { estimate, type CostCheck } from './cel-cost.js';
import { listFunctions } from './cel-lists.js';
import { parse as parsePath } from './jsonpath.js';
import { itemSchema, propertySchema, type JSONSchemaProps, type ValidationRule } from './schema.js';

const env = celEnv({ funcs: [...strings, ...listFunctions] });
const Reasons = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];

type Parsed = ReturnType<typeof parse>;
type Program = ReturnType<typeof plan>;
/** What a rule sees: `self`, and `oldSelf` on update (CEL values: the planner's own input type). */
type Activation = Parameters<Program>[0];

interface Compiled {
  rule: ValidationRule;
  program: Program;
  message?: Program;
  transition: boolean;
}

/** Function names an expression calls (operators and macros are the planner's own). */
const calls = (node: unknown, out: Set<string> = new Set()): Set<string> => {
  if (Array.isArray(node)) node.forEach((n) => calls(n, out));
  else if (isObject(node)) {
    const kind = node.exprKind as { case?: string; value?: { function?: string } } | undefined;
    if (kind?.case === 'callExpr' && kind.value?.function) out.add(kind.value.function);
    for (const v of Object.values(node)) if (typeof v === 'object' && v !== null) calls(v, out);
  }
  return out;
};

const missing = (parsed: Parsed): string | undefined =>
  [...calls(parsed.expr)].find((f) => !/^[_@!]/.test(f) && !env.funcs.find(f));

/** An expression compiled, or Kubernetes' `compilation failed: …` text. */
const compile = (source: string): Program | string => {
  let parsed: Parsed;
  try {
    parsed = parse(source);
  } catch (err) {
    return `compilation failed: ERROR: ${(err as Error).message}`;
  }
  const unknown = missing(parsed);
  if (unknown) return `compilation failed: ERROR: undeclared reference to '${unknown}' (in container ''): this server does not implement it`;
  return plan(env, parsed);
};

const cache = new WeakMap<JSONSchemaProps, Compiled[]>();

/** The node's rules, compiled once per schema node (the CRD was checked: every rule compiles). */
const rulesOf = (s: JSONSchemaProps): Compiled[] => {
  let compiled = cache.get(s);
  if (!compiled) {
    compiled = (s['x-kubernetes-validations'] ?? []).flatMap((rule) => {
      const program = compile(rule.rule ?? '');
      const message = rule.messageExpression ? compile(rule.messageExpression) : undefined;
      if (typeof program === 'string') return [];
      return [{ rule, program, message: typeof message === 'string' ? undefined : message, transition: /\boldSelf\b/.test(rule.rule ?? '') }];
    });
    cache.set(s, compiled);
  }
  return compiled;
};

/* ---- checking rules at CRD creation ---- */

/** Every problem with `s`'s own rules (at `path`), the cost included. */
export const ruleErrors = (s: JSONSchemaProps, path: string, cost: CostCheck): FieldError[] => {
  const errs: FieldError[] = [];
  (s['x-kubernetes-validations'] ?? []).forEach((given: unknown, i) => {
    const at = `${path}.x-kubernetes-validations[${i}]`;
    const rule = (isObject(given) ? given : {}) as ValidationRule;
    if (typeof rule.rule !== 'string' || !rule.rule.trim()) return void errs.push(required(`${at}.rule`));
    const program = compile(rule.rule);
    if (typeof program === 'string') errs.push(invalidValue(`${at}.rule`, rule.rule, program));
    else errs.push(...estimate(parse(rule.rule), s, cost, `${at}.rule`));
    if (rule.messageExpression !== undefined) {
      const message = compile(rule.messageExpression);
      if (typeof message === 'string') errs.push(invalidValue(`${at}.messageExpression`, rule.messageExpression, message));
    }
    if (rule.reason !== undefined && !Reasons.includes(rule.reason)) errs.push(notSupported(`${at}.reason`, rule.reason, Reasons));
    if (rule.fieldPath !== undefined && !validFieldPath(rule.fieldPath, s)) {
      errs.push(invalidValue(`${at}.fieldPath`, rule.fieldPath, 'fieldPath must be a valid path'));
    }
    if (rule.optionalOldSelf !== undefined) errs.push(forbiddenField(`${at}.optionalOldSelf`, 'optionalOldSelf is not supported by this server'));
  });
  return errs;
};

const validFieldPath = (fieldPath: string, s: JSONSchemaProps): boolean => {
  try {
    let node: JSONSchemaProps | undefined = s;
    for (const step of parsePath(fieldPath)) {
      if (step.type !== 'field') return false;
      node = propertySchema(node, step.name);
      if (!node) return false;
    }
    return true;
  } catch {
    return false;
  }
};

/* ---- evaluating rules on writes ---- */

/** JSON → CEL: integers are ints (bigint) unless the schema says number. */
const toCel = (v: unknown, s: JSONSchemaProps | undefined): unknown => {
  if (typeof v === 'number') return Number.isInteger(v) && s?.type !== 'number' ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map((x) => toCel(x, itemSchema(s)));
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toCel(x, propertySchema(s, k))]));
  return v;
};

const detailOf = (c: Compiled, activation: Activation): string => {
  const text = c.message?.(activation);
  if (typeof text === 'string' && text.trim()) return text;
  return c.rule.message ?? `failed rule: ${c.rule.rule}`;
};

const errorFor = (c: Compiled, path: string, type: string, detail: string): FieldError => {
  const at = c.rule.fieldPath ? `${path === '<nil>' ? '' : path}${c.rule.fieldPath}` : path;
  switch (c.rule.reason) {
    case 'FieldValueForbidden': return forbiddenField(at, detail);
    case 'FieldValueRequired': return required(at, detail);
    case 'FieldValueDuplicate': return { type: 'FieldValueDuplicate', field: at, message: `Duplicate value: ${JSON.stringify(type)}` };
    default: return invalidValue(at, type, detail);
  }
};

/** `plain` rules run on every write, `transition` rules (those that read oldSelf) on updates. */
type Which = 'plain' | 'transition';

const evaluateNode = (s: JSONSchemaProps, v: unknown, old: unknown, path: string, errs: FieldError[], which: Which): void => {
  const rules = rulesOf(s);
  if (rules.length === 0) return;
  const self = toCel(v, s);
  const oldSelf = old === undefined ? undefined : toCel(old, s);
  for (const c of rules) {
    if (c.transition !== (which === 'transition') || (c.transition && oldSelf === undefined)) continue;
    const activation = (oldSelf === undefined ? { self } : { self, oldSelf }) as Activation;
    const result = c.program(activation);
    if (result === true) continue;
    const detail = isCelError(result) ? `${c.rule.message ?? `failed rule: ${c.rule.rule}`}: ${result.message}` : detailOf(c, activation);
    errs.push(errorFor(c, path, s.type ?? '', detail));
  }
};

const child = (path: string, name: string): string => (path === '<nil>' ? name : `${path}.${name}`);

/** The old item a map list's item corresponds to (same key values); none for other lists. */
const oldItem = (s: JSONSchemaProps, item: unknown, old: unknown): unknown => {
  const keys = s['x-kubernetes-list-map-keys'] ?? [];
  if (s['x-kubernetes-list-type'] !== 'map' || !Array.isArray(old) || !isObject(item)) return undefined;
  return old.find((o) => isObject(o) && keys.every((k) => o[k] === item[k]));
};

const walk = (s: JSONSchemaProps | undefined, v: unknown, old: unknown, path: string, errs: FieldError[], which: Which): void => {
  if (!s || v === null || v === undefined) return;
  evaluateNode(s, v, old, path, errs, which);
  if (Array.isArray(v)) {
    const items = itemSchema(s);
    v.forEach((x, i) => walk(items, x, oldItem(s, x, old), `${path === '<nil>' ? '' : path}[${i}]`, errs, which));
  } else if (isObject(v)) {
    const was = isObject(old) ? old : undefined;
    for (const [k, x] of Object.entries(v)) {
      const named = s.properties && Object.hasOwn(s.properties, k);
      walk(propertySchema(s, k), x, was?.[k], named ? child(path, k) : `${path === '<nil>' ? '' : path}[${k}]`, errs, which);
    }
  }
};

/** The failed rules of `obj`: `plain` ones, or the `transition` ones against `old` (an update). */
export const celErrors = (s: JSONSchemaProps, obj: unknown, which: Which, old?: unknown): FieldError[] => {
  const errs: FieldError[] = [];
  walk(s, obj, old, '<nil>', errs, which);
  return errs;
};

/** Type errors and missing required fields keep the rules from running, as in kube-apiserver. */
export const blocksRules = (errs: readonly FieldError[]): FieldError[] =>
  errs.some((e) => e.type === 'FieldValueTypeInvalid' || e.type === 'FieldValueRequired')
    ? [invalidValue('<nil>', 'null', 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation')]
    : [];

/** Whether any node of `s` has rules (only then is a write walked for them). */
export const hasRules = (s: JSONSchemaProps | undefined): boolean => {
  if (!s) return false;
  if ((s['x-kubernetes-validations'] ?? []).length > 0) return true;
  const extra = isObject(s.additionalProperties) ? (s.additionalProperties as JSONSchemaProps) : undefined;
  return Object.values(s.properties ?? {}).some(hasRules) || hasRules(itemSchema(s)) || hasRules(extra);
};
