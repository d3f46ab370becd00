/**
 * A custom resource checked against its structural schema, as kube-apiserver does with kube-openapi's
 * SchemaValidator: the same checks in the same order (type, junctors, string, format, number, list,
 * enum, object), each failure turned into the field error apiextensions makes of it
 * (kubeOpenAPIResultToFieldErrors), so clients read the messages and paths Kubernetes gives:
 * `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`.
 */
import { isDeepStrictEqual } from 'node:util';
import { isObject } from '../generic/meta.js';
import {
  invalidValue, notSupported, required, tooLongMaxLength, tooMany, typeInvalid, validateAnnotations, validateLabels, type FieldError,
} from '../generic/validation.js';
import { matchesFormat } from './formats.js';
import { matchesPattern } from './patterns.js';
import { child, goNumber, index, isEmbedded, isIntOrString, itemSchema, jsonType, key, propertySchema, type JSONSchemaProps } from './schema.js';

/** `spec.x in body …`: kube-openapi names the value by its path, `in body`. */
const inBody = (path: string, rest: string): string => `${path} in body ${rest}`;

const typesOf = (s: JSONSchemaProps): string[] => (isIntOrString(s) ? ['integer', 'string'] : s.type ? [s.type] : []);

/** typeValidator: integers are numbers, whole numbers are integers. */
const typeError = (s: JSONSchemaProps, v: unknown, path: string): FieldError | undefined => {
  const types = typesOf(s);
  if (types.length === 0) return undefined;
  if (v === null || v === undefined) {
    return s.nullable ? undefined : typeInvalid(path, '', inBody(path, `must be of type ${types.join(',')}`));
  }
  const actual = jsonType(v);
  if (types.includes(actual) || (actual === 'integer' && types.includes('number'))) return undefined;
  return typeInvalid(path, actual, inBody(path, `must be of type ${types.join(',')}: ${JSON.stringify(actual)}`));
};

const stringErrors = (s: JSONSchemaProps, v: string, path: string): FieldError[] => {
  const errs: FieldError[] = [];
  const length = [...v].length;
  if (s.maxLength !== undefined && length > s.maxLength) errs.push(tooLongMaxLength(path, s.maxLength));
  if (s.minLength !== undefined && length < s.minLength) errs.push(invalidValue(path, v, inBody(path, `should be at least ${s.minLength} chars long`)));
  if (s.pattern !== undefined && !matchesPattern(s.pattern, v)) errs.push(invalidValue(path, v, inBody(path, `should match '${s.pattern}'`)));
  if (s.format && !matchesFormat(s.format, v)) errs.push(typeInvalid(path, v, inBody(path, `must be of type ${s.format}: ${JSON.stringify(v)}`)));
  return errs;
};

const numberErrors = (s: JSONSchemaProps, v: number, path: string): FieldError[] => {
  const errs: FieldError[] = [];
  if (s.multipleOf !== undefined && s.multipleOf > 0 && !Number.isInteger(v / s.multipleOf)) {
    errs.push(invalidValue(path, v, inBody(path, `should be a multiple of ${goNumber(s.multipleOf)}`)));
  }
  if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum)) {
    errs.push(invalidValue(path, v, inBody(path, `should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${goNumber(s.maximum)}`)));
  }
  if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum)) {
    errs.push(invalidValue(path, v, inBody(path, `should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${goNumber(s.minimum)}`)));
  }
  return errs;
};

const listErrors = (s: JSONSchemaProps, v: unknown[], path: string): FieldError[] => {
  const errs: FieldError[] = [];
  if (s.maxItems !== undefined && v.length > s.maxItems) errs.push(tooMany(path, v.length, s.maxItems));
  if (s.minItems !== undefined && v.length < s.minItems) errs.push(invalidValue(path, v.length, inBody(path, `should have at least ${s.minItems} items`)));
  if (s.uniqueItems && v.some((x, i) => v.findIndex((y) => isDeepStrictEqual(x, y)) !== i)) {
    errs.push(invalidValue(path, '', inBody(path, "shouldn't contain duplicates")));
  }
  const items = itemSchema(s);
  if (items) v.forEach((x, i) => errs.push(...validateValue(items, x, index(path, i))));
  return errs;
};

const objectErrors = (s: JSONSchemaProps, v: Record<string, unknown>, path: string): FieldError[] => {
  const errs: FieldError[] = [];
  const keys = Object.keys(v);
  if (s.maxProperties !== undefined && keys.length > s.maxProperties) errs.push(tooMany(path, keys.length, s.maxProperties));
  if (s.minProperties !== undefined && keys.length < s.minProperties) {
    errs.push(invalidValue(path, keys.length, inBody(path, `should have at least ${s.minProperties} properties`)));
  }
  for (const name of s.required ?? []) if (!Object.hasOwn(v, name)) errs.push(required(child(path, name)));
  for (const name of keys) {
    const sub = propertySchema(s, name);
    if (sub) errs.push(...validateValue(sub, v[name], s.properties && Object.hasOwn(s.properties, name) ? child(path, name) : key(path, name)));
    else if (s.additionalProperties === false) errs.push(invalidValue(path, name, `${path}.${name} in body is a forbidden property`));
  }
  if (isEmbedded(s)) errs.push(...embeddedErrors(v, path));
  return errs;
};

/** objectmeta's rules for an x-kubernetes-embedded-resource: apiVersion and kind, and its metadata. */
const embeddedErrors = (v: Record<string, unknown>, path: string): FieldError[] => {
  const errs: FieldError[] = [];
  for (const name of ['apiVersion', 'kind'] as const) {
    if (v[name] === undefined) errs.push(required(child(path, name), 'must not be empty'));
    else if (typeof v[name] !== 'string') errs.push(invalidValue(child(path, name), v[name], 'must be a string'));
    else if (v[name] === '') errs.push(invalidValue(child(path, name), '', 'must not be empty'));
  }
  const meta = isObject(v.metadata) ? v.metadata : {};
  errs.push(...validateLabels(isObject(meta.labels) ? (meta.labels as Record<string, string>) : undefined, child(path, 'metadata.labels')));
  errs.push(...validateAnnotations(isObject(meta.annotations) ? (meta.annotations as Record<string, string>) : undefined, child(path, 'metadata.annotations')));
  return errs;
};

/** allOf / anyOf / oneOf / not: whether `v` satisfies each nested value validation. */
const junctorErrors = (s: JSONSchemaProps, v: unknown, path: string): FieldError[] => {
  const errs: FieldError[] = [];
  const valid = (sub: JSONSchemaProps) => validateValue(sub, v, path).length === 0;
  for (const sub of s.allOf ?? []) errs.push(...validateValue(sub, v, path));
  if (s.anyOf && !s.anyOf.some(valid) && !isIntOrString(s)) errs.push(invalidValue(path, '', inBody(path, 'must validate at least one schema (anyOf)')));
  if (s.oneOf && s.oneOf.filter(valid).length !== 1) errs.push(invalidValue(path, '', inBody(path, 'must validate one and only one schema (oneOf)')));
  if (s.not && valid(s.not)) errs.push(invalidValue(path, '', inBody(path, 'must not validate the schema (not)')));
  return errs;
};

/** Every error of `v` against `s` at `path` (`''` for the object itself). */
export const validateValue = (s: JSONSchemaProps, v: unknown, path: string): FieldError[] => {
  if ((v === null || v === undefined) && (s.nullable || typesOf(s).length === 0)) return [];
  const wrongType = typeError(s, v, path);
  if (wrongType) return [wrongType];
  const errs = junctorErrors(s, v, path);
  if (typeof v === 'string') errs.push(...stringErrors(s, v, path));
  else if (typeof v === 'number') errs.push(...numberErrors(s, v, path));
  else if (Array.isArray(v)) errs.push(...listErrors(s, v, path));
  if (s.enum && !s.enum.some((e) => isDeepStrictEqual(e, v))) {
    errs.push(notSupported(path, v, s.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)))));
  }
  if (isObject(v)) errs.push(...objectErrors(s, v, path));
  return errs;
};
