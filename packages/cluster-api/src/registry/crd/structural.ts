/**
 * Whether a CRD schema is structural (apiextensions-apiserver's schema.ValidateStructural): every
 * field has a type outside of the value validations (allOf, anyOf, oneOf, not), which only restrict;
 * metadata at the root restricts name and generateName only; embedded resources and int-or-string
 * follow their patterns. A non-structural schema is refused with these causes, sorted as Kubernetes
 * sorts them.
 */
import { forbiddenField, invalidValue, required, type FieldError } from '../generic/validation.js';
import { isObject } from '../generic/meta.js';
import { patternError } from './patterns.js';
import { isEmbedded, isIntOrString, itemSchema, preservesUnknown, type JSONSchemaProps } from './schema.js';

type Level = 'root' | 'item' | 'field';

const at = (path: string, name: string): string => `${path}.${name}`;
const prop = (path: string, name: string): string => `${path}.properties[${name}]`;

/** `anyOf: [{type: integer}, {type: string}]`, the shape int-or-string may take. */
const isIntOrStringAnyOf = (anyOf: JSONSchemaProps[] | undefined): boolean =>
  anyOf?.length === 2 && anyOf.every((s, i) => Object.keys(s).length === 1 && s.type === ['integer', 'string'][i]);

const Forbidden: readonly [keyof JSONSchemaProps, string][] = [
  ['type', 'must be empty to be structural'],
  ['additionalProperties', 'must be undefined to be structural'],
  ['default', 'must be undefined to be structural'],
  ['title', 'must be empty to be structural'],
  ['description', 'must be empty to be structural'],
  ['nullable', 'must be false to be structural'],
  ['x-kubernetes-preserve-unknown-fields', 'must be false to be structural'],
  ['x-kubernetes-embedded-resource', 'must be false to be structural'],
  ['x-kubernetes-int-or-string', 'must be false to be structural'],
  ['x-kubernetes-list-map-keys', 'must be empty to be structural'],
  ['x-kubernetes-list-type', 'must be undefined to be structural'],
  ['x-kubernetes-map-type', 'must be undefined to be structural'],
  ['x-kubernetes-validations', 'must be empty to be structural'],
];

const present = (v: unknown): boolean => v !== undefined && v !== false && v !== '' && !(Array.isArray(v) && v.length === 0);

/** A schema under allOf / anyOf / oneOf / not: value validation only. */
const nested = (v: JSONSchemaProps | undefined, path: string, skipAnyOf: boolean): FieldError[] => {
  if (!v) return [];
  const errs = valueValidation(v, path, skipAnyOf, false);
  errs.push(...nested(itemSchema(v), at(path, 'items'), false));
  for (const [k, p] of Object.entries(v.properties ?? {})) errs.push(...nested(p, prop(path, k), false));
  for (const [name, why] of Forbidden) if (present(v[name])) errs.push(forbiddenField(at(path, name), why));
  if (v.properties && Object.hasOwn(v.properties, 'metadata')) errs.push(forbiddenField(prop(path, 'metadata'), 'must not be specified in a nested context'));
  return errs;
};

const valueValidation = (s: JSONSchemaProps, path: string, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean): FieldError[] => {
  const errs: FieldError[] = [];
  if (!skipAnyOf) (s.anyOf ?? []).forEach((v, i) => errs.push(...nested(v, `${path}.anyOf[${i}]`, false)));
  (s.allOf ?? []).forEach((v, i) => errs.push(...nested(v, `${path}.allOf[${i}]`, skipFirstAllOfAnyOf && i === 0)));
  (s.oneOf ?? []).forEach((v, i) => errs.push(...nested(v, `${path}.oneOf[${i}]`, false)));
  errs.push(...nested(s.not, `${path}.not`, false));
  const bad = s.pattern ? patternError(s.pattern) : undefined;
  if (bad) errs.push(invalidValue(at(path, 'pattern'), s.pattern, `must be a valid regular expression, but isn't: ${bad}`));
  return errs;
};

const rootMetadata = (m: JSONSchemaProps, path: string): FieldError[] => {
  const { type: _t, default: _d, properties, ...rest } = m;
  const names = Object.keys(properties ?? {});
  const onlyNames = names.every((n) => n === 'name' || n === 'generateName');
  return Object.keys(rest).length === 0 && onlyNames
    ? []
    : [forbiddenField(path, 'must not specify anything other than name and generateName, but metadata is implicitly specified')];
};

const typeErrors = (s: JSONSchemaProps, level: Level, path: string): FieldError[] => {
  const errs: FieldError[] = [];
  const why = 'must be object if x-kubernetes-embedded-resource is true';
  if (isEmbedded(s) && s.type !== 'object') errs.push(s.type ? invalidValue(at(path, 'type'), s.type, why) : required(at(path, 'type'), why));
  else if (!s.type && !isIntOrString(s) && !preservesUnknown(s)) {
    const where = level === 'root' ? 'at the root' : level === 'item' ? 'for specified array items' : 'for specified object fields';
    errs.push(required(at(path, 'type'), `must not be empty ${where}`));
  }
  if (level === 'root' && s.type && s.type !== 'object') errs.push(invalidValue(at(path, 'type'), s.type, 'must be object at the root'));
  return errs;
};

const metaErrors = (s: JSONSchemaProps, level: Level, path: string): FieldError[] => {
  const errs: FieldError[] = [];
  const checkMetadata = level === 'root' || isEmbedded(s);
  for (const name of ['kind', 'apiVersion'] as const) {
    const p = s.properties?.[name];
    if (p && checkMetadata && p.type !== 'string') errs.push(invalidValue(at(prop(path, name), 'type'), p.type ?? '', 'must be string'));
  }
  const metadata = s.properties?.metadata;
  if (metadata) {
    if (checkMetadata && metadata.type !== 'object') errs.push(invalidValue(at(prop(path, 'metadata'), 'type'), metadata.type ?? '', 'must be object'));
    if (level === 'root') errs.push(...rootMetadata(metadata, prop(path, 'metadata')));
  }
  return errs;
};

const invariants = (s: JSONSchemaProps | undefined, level: Level, path: string): FieldError[] => {
  if (!s) return [];
  const errs: FieldError[] = [];
  if (s.type === 'array' && !isObject(s.items)) errs.push(required(at(path, 'items'), 'must be specified'));
  errs.push(...invariants(itemSchema(s), 'item', at(path, 'items')));
  for (const [k, p] of Object.entries(s.properties ?? {})) errs.push(...invariants(p, 'field', prop(path, k)));
  if (s.additionalProperties !== undefined && s.additionalProperties !== true) {
    if (level === 'root') errs.push(forbiddenField(at(path, 'additionalProperties'), 'must not be used at the root'));
    if (isObject(s.additionalProperties)) errs.push(...invariants(s.additionalProperties as JSONSchemaProps, 'field', at(path, 'additionalProperties')));
  }
  if (isIntOrString(s) && preservesUnknown(s)) errs.push(invalidValue(at(path, 'x-kubernetes-preserve-unknown-fields'), true, 'must be false if x-kubernetes-int-or-string is true'));
  if (isIntOrString(s) && isEmbedded(s)) errs.push(invalidValue(at(path, 'x-kubernetes-embedded-resource'), true, 'must be false if x-kubernetes-int-or-string is true'));
  errs.push(...valueValidation(s, path, isIntOrStringAnyOf(s.anyOf), isIntOrStringAnyOf(s.allOf?.[0]?.anyOf)));
  errs.push(...typeErrors(s, level, path), ...metaErrors(s, level, path));
  if (isEmbedded(s) && s.additionalProperties !== undefined) errs.push(forbiddenField(at(path, 'additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'));
  if (isEmbedded(s) && !preservesUnknown(s) && Object.keys(s.properties ?? {}).length === 0) {
    errs.push(required(at(path, 'properties'), 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
  }
  return errs;
};

/** Every field a value validation names must exist in the structural part too. */
const completeness = (v: JSONSchemaProps | undefined, s: JSONSchemaProps | undefined, sPath: string, vPath: string): FieldError[] => {
  if (!v) return [];
  if (!s) return [required(sPath, `because it is defined in ${vPath}`)];
  const errs: FieldError[] = [];
  errs.push(...completeness(v.not, s, sPath, `${vPath}.not`));
  for (const j of ['allOf', 'anyOf', 'oneOf'] as const) (v[j] ?? []).forEach((x, i) => errs.push(...nestedCompleteness(x, s, sPath, `${vPath}.${j}[${i}]`)));
  return errs;
};

const nestedCompleteness = (v: JSONSchemaProps, s: JSONSchemaProps, sPath: string, vPath: string): FieldError[] => {
  const errs = completeness(v, s, sPath, vPath);
  if (isObject(v.items)) errs.push(...completeness(v.items as JSONSchemaProps, itemSchema(s), at(sPath, 'items'), at(vPath, 'items')));
  for (const [k, p] of Object.entries(v.properties ?? {})) {
    const sp = s.properties?.[k];
    if (!sp) errs.push(required(prop(sPath, k), `because it is defined in ${prop(vPath, k)}`));
    else errs.push(...nestedCompleteness(p, sp, prop(sPath, k), prop(vPath, k)));
  }
  return errs;
};

const render = (e: FieldError): string => `${e.field}: ${e.message}`;

/** ValidateStructural: the causes that make `schema` (at `path`) non-structural, sorted; [] when it is structural. */
export const validateStructural = (schema: JSONSchemaProps, path: string): FieldError[] =>
  [...invariants(schema, 'root', path), ...completeness(schema, schema, path, path)].sort((a, b) => (render(a) < render(b) ? -1 : render(a) > render(b) ? 1 : 0));
