/**
 * What a CRD's schema may say beyond being structural (apiextensions-apiserver's
 * ValidateCustomResourceDefinitionOpenAPISchema and specStandardValidatorV3): OpenAPI v3 types only,
 * no `$ref` or other unsupported keywords, list types and map keys that make sense, no nullable root.
 * `x-kubernetes-validations` (CEL rules) must compile and stay within the cost budget (cel.ts).
 */
import { forbiddenField, invalidValue, notSupported, required, type FieldError } from '../generic/validation.js';
import { isObject } from '../generic/meta.js';
import { ruleErrors } from './cel.js';
import { bound, totalError, type CostCheck } from './cel-cost.js';
import { itemSchema, type JSONSchemaProps } from './schema.js';

const OpenApiTypes = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const Unsupported = ['$ref', 'id', '$schema', 'definitions', 'dependencies', 'patternProperties', 'additionalItems'] as const;

const at = (path: string, name: string): string => `${path}.${name}`;
const prop = (path: string, name: string): string => `${path}.properties[${name}]`;

const listTypeErrors = (s: JSONSchemaProps, path: string): FieldError[] => {
  const errs: FieldError[] = [];
  const type = s['x-kubernetes-list-type'];
  const keys = s['x-kubernetes-list-map-keys'] ?? [];
  if (type !== undefined && !['atomic', 'set', 'map'].includes(type)) errs.push(notSupported(at(path, 'x-kubernetes-list-type'), type, ['atomic', 'set', 'map']));
  if (type !== undefined && s.type !== 'array') errs.push(invalidValue(at(path, 'type'), s.type ?? '', 'must be array if x-kubernetes-list-type is specified'));
  if (keys.length > 0 && type === undefined) errs.push(required(at(path, 'x-kubernetes-list-type'), 'must be map if x-kubernetes-list-map-keys is non-empty'));
  else if (keys.length > 0 && type !== 'map') errs.push(invalidValue(at(path, 'x-kubernetes-list-type'), type, 'must be map if x-kubernetes-list-map-keys is non-empty'));
  if (type !== 'map') return errs;
  const items = itemSchema(s);
  if (keys.length === 0) errs.push(required(at(path, 'x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'));
  if (!items) return [...errs, required(at(path, 'items'), 'must have a schema if x-kubernetes-list-type is map')];
  if (items.type !== 'object') return [...errs, invalidValue(at(path, 'items.type'), items.type ?? '', "must be object if parent array's x-kubernetes-list-type is map")];
  keys.forEach((k, i) => {
    const key = items.properties?.[k];
    if (!key) errs.push(invalidValue(at(path, 'x-kubernetes-list-map-keys'), keys, 'entries must all be names of item properties'));
    else if (key.type === 'array' || key.type === 'object') errs.push(invalidValue(at(prop(at(path, 'items'), k), 'type'), key.type, "must be a scalar type if parent array's x-kubernetes-list-type is map"));
    else if (key.default === undefined && !(items.required ?? []).includes(k)) {
      errs.push(required(at(prop(at(path, 'items'), k), 'default'), 'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property'));
    }
    if (keys.indexOf(k) !== i) errs.push(invalidValue(at(path, 'x-kubernetes-list-map-keys'), keys, 'must not contain duplicate entries'));
  });
  return errs;
};

const nodeErrors = (s: JSONSchemaProps, path: string, cost: CostCheck): FieldError[] => {
  const errs: FieldError[] = [];
  for (const k of Unsupported) if (s[k as keyof JSONSchemaProps] !== undefined) errs.push(forbiddenField(at(path, k), `${k} is not supported`));
  if (s.type !== undefined && !OpenApiTypes.includes(s.type)) errs.push(notSupported(at(path, 'type'), s.type, OpenApiTypes));
  if (Array.isArray(s.items)) errs.push(forbiddenField(at(path, 'items'), 'items must be a schema object and not an array'));
  if (s.uniqueItems === true) errs.push(forbiddenField(at(path, 'uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  if (isObject(s.additionalProperties) || s.additionalProperties === false) {
    if (Object.keys(s.properties ?? {}).length > 0) errs.push(forbiddenField(at(path, 'additionalProperties'), 'additionalProperties and properties are mutual exclusive'));
  }
  return [...errs, ...listTypeErrors(s, path), ...ruleErrors(s, path, cost)];
};

const walk = (s: JSONSchemaProps, path: string, cost: CostCheck): FieldError[] => {
  if (!isObject(s)) return [invalidValue(path, s, 'must be an object')];
  const errs = nodeErrors(s, path, cost);
  const below = { ...cost, cardinality: cost.cardinality * bound(s) };
  for (const [k, p] of Object.entries(s.properties ?? {})) errs.push(...walk(p, prop(path, k), cost));
  const items = itemSchema(s);
  if (items) errs.push(...walk(items, at(path, 'items'), below));
  if (isObject(s.additionalProperties)) errs.push(...walk(s.additionalProperties as JSONSchemaProps, at(path, 'additionalProperties'), below));
  for (const j of ['allOf', 'anyOf', 'oneOf'] as const) ((s[j] as JSONSchemaProps[] | undefined) ?? []).forEach((x, i) => errs.push(...walk(x, `${path}.${j}[${i}]`, cost)));
  if (s.not) errs.push(...walk(s.not, at(path, 'not'), cost));
  return errs;
};

/** Every rule violated anywhere in the schema `s` (at `path`), CEL rules' cost over the whole schema included. */
export const validateSchemaRules = (s: JSONSchemaProps, path: string): FieldError[] => {
  const cost: CostCheck = { cardinality: 1, total: { cost: 0 } };
  const errs = walk(s, path, cost);
  if (isObject(s) && s.nullable) errs.push(forbiddenField(at(path, 'nullable'), 'nullable cannot be true at the root'));
  return [...errs, ...totalError(cost, path)];
};
