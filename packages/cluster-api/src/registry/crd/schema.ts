/**
 * A CustomResourceDefinition's OpenAPI v3 schema (apiextensions.k8s.io/v1 JSONSchemaProps) and the
 * walk every schema algorithm here shares: the schema that applies to a property, an item, an entry.
 * Field paths are written as Kubernetes' field.Path prints them (`spec.ports[0].name`, `spec.labels[app]`).
 */
import { isObject } from '../generic/meta.js';

/** One `x-kubernetes-validations` rule (CEL). */
export interface ValidationRule {
  rule?: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export interface JSONSchemaProps {
  type?: string;
  format?: string;
  description?: string;
  title?: string;
  properties?: Record<string, JSONSchemaProps>;
  items?: JSONSchemaProps | JSONSchemaProps[];
  additionalProperties?: JSONSchemaProps | boolean;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  maximum?: number;
  minimum?: number;
  exclusiveMaximum?: boolean;
  exclusiveMinimum?: boolean;
  multipleOf?: number;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  maxProperties?: number;
  minProperties?: number;
  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  $ref?: string;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: ValidationRule[];
}

export const preservesUnknown = (s: JSONSchemaProps | undefined): boolean => s?.['x-kubernetes-preserve-unknown-fields'] === true;
export const isEmbedded = (s: JSONSchemaProps | undefined): boolean => s?.['x-kubernetes-embedded-resource'] === true;
export const isIntOrString = (s: JSONSchemaProps | undefined): boolean => s?.['x-kubernetes-int-or-string'] === true;

/** The schema of `key` in an object described by `s`: its property, else additionalProperties. */
export const propertySchema = (s: JSONSchemaProps | undefined, key: string): JSONSchemaProps | undefined => {
  if (!s) return undefined;
  if (s.properties && Object.hasOwn(s.properties, key)) return s.properties[key];
  return isObject(s.additionalProperties) ? (s.additionalProperties as JSONSchemaProps) : undefined;
};

/** The schema of a list's items (a tuple form `items: [...]` is not structural and never reaches here). */
export const itemSchema = (s: JSONSchemaProps | undefined): JSONSchemaProps | undefined =>
  s && isObject(s.items) ? (s.items as JSONSchemaProps) : undefined;

/** field.Path: `.name` for a field, `[i]` for an index, `[key]` for a map key. */
export const child = (path: string, name: string): string => (path ? `${path}.${name}` : name);
export const index = (path: string, i: number): string => `${path}[${i}]`;
export const key = (path: string, k: string): string => `${path}[${k}]`;

/** The JSON type of a value, as kube-openapi names it in its messages. */
export const jsonType = (v: unknown): string => {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v === 'object' ? 'object' : typeof v;
};

/**
 * A number as Go's `%v` prints a float64 (strconv 'g', shortest): `1e+06`, `0.5`, `1e-05`. Whole
 * numbers that fit an int64 print as integers, as kube-openapi passes them (its *Int messages).
 */
export const goNumber = (n: number): string => {
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 63) return String(n);
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
  const exp = Math.floor(Math.log10(Math.abs(n)));
  if (exp < -4 || exp >= 6) {
    const [mantissa, e] = n.toExponential().split('e') as [string, string];
    const sign = e.startsWith('-') ? '-' : '+';
    const digits = e.replace(/^[-+]/, '').padStart(2, '0');
    return `${mantissa}e${sign}${digits}`;
  }
  return String(n);
};
