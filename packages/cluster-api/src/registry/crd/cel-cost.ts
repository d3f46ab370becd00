/**
 * A CEL rule's cost, estimated as kube-apiserver bounds it before accepting a CRD: the work a rule
 * may do grows with the sizes of the lists and maps it iterates, which the schema bounds with
 * maxItems / maxProperties (an unbounded one holds as many entries as a 3 MiB request can), and a
 * rule on list items runs once per item. Here the estimate is the product of those bounds over the
 * rule's nesting of comprehensions (all, exists, map, filter…) and over the lists above the rule;
 * Kubernetes' budgets: 10^7 per call, 10^8 for all rules of a schema.
 */
import { forbiddenField, type FieldError } from '../generic/validation.js';
import { isObject } from '../generic/meta.js';
import { itemSchema, type JSONSchemaProps } from './schema.js';

export const PerCallLimit = 10_000_000;
export const SchemaLimit = 100_000_000;
/** Entries an unbounded list or map can hold in a 3 MiB request (at least `{},` each). */
const Unbounded = Math.floor((3 * 1024 * 1024) / 3);

export interface CostCheck {
  /** How many times a rule at this node runs per object (lists and maps above it). */
  cardinality: number;
  /** The running total over the schema's rules. */
  total: { cost: number };
}

/** How many entries the list or map `s` may hold; 1 for anything else. */
export const bound = (s: JSONSchemaProps | undefined): number => {
  if (!s) return 1;
  if (s.type === 'array') return s.maxItems ?? Unbounded;
  if (s.type === 'object' && isObject(s.additionalProperties)) return s.maxProperties ?? Unbounded;
  return 1;
};

/** The largest list or map at or under `s`. */
const largest = (s: JSONSchemaProps | undefined): number => {
  if (!s) return 1;
  const extra = isObject(s.additionalProperties) ? (s.additionalProperties as JSONSchemaProps) : undefined;
  return Math.max(bound(s), largest(itemSchema(s)), largest(extra), ...Object.values(s.properties ?? {}).map(largest));
};

/** The deepest nesting of comprehensions in a parsed expression. */
const nesting = (node: unknown): number => {
  if (Array.isArray(node)) return Math.max(0, ...node.map(nesting));
  if (!isObject(node)) return 0;
  const kind = node.exprKind as { case?: string } | undefined;
  const inner = Math.max(0, ...Object.values(node).filter((v) => typeof v === 'object' && v !== null).map(nesting));
  return kind?.case === 'comprehensionExpr' ? inner + 1 : inner;
};

const factor = (cost: number, limit: number): string => {
  const f = cost / limit;
  return f > 100 ? 'more than 100x' : `${f.toFixed(1)}x`;
};

const Advice = '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';

/** The errors of one parsed rule at schema node `s` (`field`: where its cost error goes), adding to the schema's total. */
export const estimate = (parsed: { expr?: unknown }, s: JSONSchemaProps, check: CostCheck, field: string): FieldError[] => {
  const depth = nesting(parsed.expr);
  const perCall = depth === 0 ? 1 : largest(s) ** depth;
  if (perCall > PerCallLimit) return [forbiddenField(field, `estimated rule cost exceeds budget by factor of ${factor(perCall, PerCallLimit)} ${Advice}`)];
  // A rule refused on its own is not counted again in the schema's total.
  check.total.cost += perCall * check.cardinality;
  return [];
};

/** The error when all rules of a schema together exceed the budget. */
export const totalError = (check: CostCheck, field: string): FieldError[] =>
  check.total.cost > SchemaLimit
    ? [forbiddenField(field, `x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of ${factor(check.total.cost, SchemaLimit)} ${Advice}`)]
    : [];
