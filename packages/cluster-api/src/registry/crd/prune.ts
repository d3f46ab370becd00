/**
 * Pruning and defaulting of custom resources (apiextensions-apiserver's schema/pruning and
 * schema/defaulting), applied to every request body and, for defaults, to every object read: fields
 * the schema does not specify are dropped unless `x-kubernetes-preserve-unknown-fields` keeps them,
 * nulls of non-nullable fields without a default are dropped, and absent (or null non-nullable)
 * fields with a default get a copy of it.
 */
import { clone, isObject } from '../generic/meta.js';
import { isEmbedded, itemSchema, preservesUnknown, type JSONSchemaProps } from './schema.js';

/** ObjectMeta's fields: an embedded resource's metadata keeps these, as typed decoding would. */
const MetaFields = new Set([
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields',
]);
const TypeMeta = new Set(['apiVersion', 'kind', 'metadata']);

/** Drops what `s` does not specify from `v`, in place. `root`: the object itself (apiVersion, kind, metadata stay). */
export const prune = (v: unknown, s: JSONSchemaProps | undefined, root = false): void => {
  if (Array.isArray(v)) {
    const items = itemSchema(s);
    if (items || !preservesUnknown(s)) for (const x of v) prune(x, items);
    return;
  }
  if (!isObject(v)) return;
  const resource = root || isEmbedded(s);
  for (const k of Object.keys(v)) {
    if (resource && TypeMeta.has(k)) {
      if (k === 'metadata' && !root && isObject(v.metadata)) for (const m of Object.keys(v.metadata)) if (!MetaFields.has(m)) delete v.metadata[m];
      continue;
    }
    const known = s?.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : undefined;
    const extra = isObject(s?.additionalProperties) ? (s!.additionalProperties as JSONSchemaProps) : undefined;
    if (known || extra) prune(v[k], known ?? extra);
    else if (!preservesUnknown(s) && s?.additionalProperties !== true) delete v[k];
  }
};

const isNonNullableNull = (v: unknown, s: JSONSchemaProps | undefined): boolean => v === null && !!s && !s.nullable;

/** Sets the schema's defaults in `v`, in place (after pruning: defaults are pruned values themselves). */
export const applyDefaults = (v: unknown, s: JSONSchemaProps | undefined): void => {
  if (!s) return;
  if (Array.isArray(v)) {
    const items = itemSchema(s);
    v.forEach((x, i) => {
      if (isNonNullableNull(x, items) && items?.default !== undefined) v[i] = clone(items.default);
      applyDefaults(v[i], items);
    });
    return;
  }
  if (!isObject(v)) return;
  for (const [k, prop] of Object.entries(s.properties ?? {})) {
    if (prop.default === undefined) {
      if (isNonNullableNull(v[k], prop)) delete v[k];
      continue;
    }
    if (!Object.hasOwn(v, k) || isNonNullableNull(v[k], prop)) v[k] = clone(prop.default);
  }
  const extra = isObject(s.additionalProperties) ? (s.additionalProperties as JSONSchemaProps) : undefined;
  for (const k of Object.keys(v)) {
    const prop = s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : extra;
    if (prop === extra && isNonNullableNull(v[k], extra) && extra?.default !== undefined) v[k] = clone(extra.default);
    applyDefaults(v[k], prop);
  }
};

/** Whether any schema in `s` has a default (then reads are defaulted too). */
export const hasDefaults = (s: JSONSchemaProps | undefined): boolean => {
  if (!s) return false;
  if (s.default !== undefined) return true;
  const extra = isObject(s.additionalProperties) ? (s.additionalProperties as JSONSchemaProps) : undefined;
  return Object.values(s.properties ?? {}).some(hasDefaults) || hasDefaults(itemSchema(s)) || hasDefaults(extra);
};
