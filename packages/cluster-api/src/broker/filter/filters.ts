/**
 * A Trigger's filter compiled once into a predicate over event attributes.
 *
 * - `spec.filters` (the Subscriptions API dialects), when non-empty, replaces `spec.filter`, as the
 *   CRD documents; its items are ANDed. `exact`, `prefix` and `suffix` hold one attribute each and
 *   need it present; `all`/`any` need at least one nested filter; `cesql` passes only an expression
 *   that evaluates to Boolean true without error (CESQL §1.2).
 * - `spec.filter.attributes`: every listed attribute present, equal when the value is non-empty
 *   (an empty value matches any value) — Knative's TriggerFilter contract.
 *
 * Whatever Knative's webhook would refuse is returned as problems with field paths; such a Trigger
 * gets no predicate, so it receives nothing until it is fixed.
 */
import type { SubscriptionsAPIFilter, Trigger } from '../types.js';
import type { FieldProblem } from '../delivery/policy.js';
import { attributeString } from '../event/event.js';
import { evaluate, type Attributes } from './cesql/evaluate.js';
import { lookupFunction } from './cesql/functions.js';
import { CesqlParseError } from './cesql/lexer.js';
import { type Node, parseCesql } from './cesql/parser.js';

export type Predicate = (attributes: Attributes) => boolean;

const ATTRIBUTE_NAME = /^[a-z][a-z0-9]*$/;
const NAME_RULE = 'Attribute name must start with a letter and can only contain lowercase alphanumeric';
const DIALECTS = ['exact', 'prefix', 'suffix', 'all', 'any', 'not', 'cesql'] as const;

const always: Predicate = () => true;

/** Functions that do not exist make an expression that can never pass: refuse it up front. */
function unknownFunction(node: Node): string | undefined {
  switch (node.k) {
    case 'call':
      return lookupFunction(node.name, node.args.length) ? node.args.map(unknownFunction).find(Boolean) : `${node.name}/${node.args.length}`;
    case 'not':
    case 'neg':
    case 'like':
      return unknownFunction(node.x);
    case 'bin':
      return unknownFunction(node.l) ?? unknownFunction(node.r);
    case 'in':
      return unknownFunction(node.x) ?? node.set.map(unknownFunction).find(Boolean);
    default:
      return undefined;
  }
}

function compileCesql(expression: unknown, path: string, out: FieldProblem[]): Predicate {
  if (typeof expression !== 'string') return bad(out, path, 'must be a string');
  let tree: Node;
  try {
    tree = parseCesql(expression);
  } catch (err) {
    if (err instanceof CesqlParseError) return bad(out, path, `invalid CESQL expression: ${err.message}`);
    throw err;
  }
  const missing = unknownFunction(tree);
  if (missing) return bad(out, path, `invalid CESQL expression: unknown function ${missing}`);
  return (attrs) => {
    const r = evaluate(tree, attrs);
    return r.value === true && r.errors.length === 0;
  };
}

function bad(out: FieldProblem[], path: string, message: string): Predicate {
  out.push({ path, message });
  return always;
}

type Test = (actual: string, wanted: string) => boolean;
const TESTS: Record<'exact' | 'prefix' | 'suffix', Test> = {
  exact: (a, w) => a === w,
  prefix: (a, w) => a.startsWith(w),
  suffix: (a, w) => a.endsWith(w),
};

function compileSingle(dialect: 'exact' | 'prefix' | 'suffix', map: unknown, path: string, out: FieldProblem[]): Predicate {
  if (typeof map !== 'object' || map === null) return bad(out, path, 'must be an object');
  const entries = Object.entries(map);
  if (entries.length !== 1) return bad(out, path, 'Multiple items found, can have only one key-value');
  const [name, wanted] = entries[0]!;
  if (!ATTRIBUTE_NAME.test(name)) return bad(out, `${path}.${name}`, NAME_RULE);
  if (typeof wanted !== 'string' || wanted === '') return bad(out, `${path}.${name}`, 'must be a non-empty string');
  const test = TESTS[dialect];
  return (attrs) => {
    const v = attrs[name];
    return v !== undefined && test(attributeString(v), wanted);
  };
}

function compileList(list: unknown, path: string, out: FieldProblem[]): Predicate[] {
  if (!Array.isArray(list)) return [bad(out, path, 'must be a list')];
  return list.map((f, i) => compileDialect(f, `${path}[${i}]`, out));
}

function compileDialect(filter: unknown, path: string, out: FieldProblem[]): Predicate {
  if (typeof filter !== 'object' || filter === null) return bad(out, path, 'must be an object');
  const f = filter as SubscriptionsAPIFilter;
  const set = DIALECTS.filter((d) => f[d] !== undefined);
  if (set.length > 1) return bad(out, path, 'multiple dialects found, filters can have only one dialect set');
  const dialect = set[0];
  if (dialect === undefined) return always;
  const at = `${path}.${dialect}`;
  if (dialect === 'exact' || dialect === 'prefix' || dialect === 'suffix') return compileSingle(dialect, f[dialect], at, out);
  if (dialect === 'cesql') return compileCesql(f.cesql, at, out);
  if (dialect === 'not') {
    const inner = compileDialect(f.not, at, out);
    return (attrs) => !inner(attrs);
  }
  const parts = compileList(f[dialect], at, out);
  if (parts.length === 0) return bad(out, at, `${dialect === 'all' ? 'All' : 'Any'} must contain at least one nested filter`);
  return dialect === 'all' ? (attrs) => parts.every((p) => p(attrs)) : (attrs) => parts.some((p) => p(attrs));
}

function compileAttributes(attributes: unknown, out: FieldProblem[]): Predicate {
  if (attributes === undefined) return always;
  if (typeof attributes !== 'object' || attributes === null) return bad(out, 'spec.filter.attributes', 'must be an object');
  const entries = Object.entries(attributes);
  for (const [name, wanted] of entries) {
    if (!ATTRIBUTE_NAME.test(name)) bad(out, `spec.filter.attributes.${name}`, NAME_RULE);
    else if (typeof wanted !== 'string') bad(out, `spec.filter.attributes.${name}`, 'Only string values are supported');
  }
  return (attrs) =>
    entries.every(([name, wanted]) => {
      const v = attrs[name];
      return v !== undefined && (wanted === '' || attributeString(v) === wanted);
    });
}

/** The Trigger's predicate, or the problems that keep it from having one. */
export function compileFilter(spec: Trigger['spec']): { predicate: Predicate } | { problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  let predicate: Predicate;
  if (Array.isArray(spec.filters) && spec.filters.length > 0) {
    const parts = compileList(spec.filters, 'spec.filters', problems);
    predicate = (attrs) => parts.every((p) => p(attrs));
  } else if (spec.filters !== undefined && !Array.isArray(spec.filters)) {
    predicate = bad(problems, 'spec.filters', 'must be a list');
  } else {
    predicate = compileAttributes(spec.filter?.attributes, problems);
  }
  return problems.length > 0 ? { problems } : { predicate };
}
