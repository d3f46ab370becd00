/**
 * Cross-kind rules applied once around every kind's Strategy (Kubernetes' rest.BeforeCreate /
 * rest.BeforeUpdate): body shape, kind/apiVersion, namespace match, system fields, generateName,
 * generation, fields owned by subresources, and ObjectMeta validation.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject, ObjectMeta } from '../../api/meta.js';
import { groupVersion, type ResourceDefinition, type Strategy } from '../definition.js';
import type { RequestContext } from '../rest.js';
import { clearedOnCreate } from './fields.js';
import { badRequest, invalid } from '../../api/errors.js';
import { isObject, selfLink, timestamp } from './meta.js';
import {
  check, forbiddenField, immutable, isDNS1123Label, isDNS1123Subdomain, required, validateAnnotations,
  validateLabels, type FieldError,
} from './validation.js';

/** Kubernetes' names.SimpleNameGenerator: no vowels, no confusable digits. */
const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
const MaxGeneratedNameLength = 63 - 5;
export const generateName = (base: string): string => {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += alphabet[randomInt(alphabet.length)];
  return `${base.slice(0, MaxGeneratedNameLength)}${suffix}`;
};

/** Body → KubeObject (in place) with kind/apiVersion checked (defaulted when absent, as the decoder does). */
export const decodeBody = (def: ResourceDefinition, body: unknown): KubeObject => {
  if (!isObject(body)) throw badRequest(`the object provided is unrecognized (must be of type ${def.kind})`);
  const obj = body as KubeObject;
  const gv = groupVersion(def);
  obj.apiVersion ??= gv;
  obj.kind ??= def.kind;
  if (obj.apiVersion !== gv) {
    throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${gv})`);
  }
  if (obj.kind !== def.kind) {
    throw badRequest(`the object provided is unrecognized (must be of type ${def.kind}): kind "${String(obj.kind)}"`);
  }
  obj.metadata ??= {};
  checkMetaShape(obj.metadata);
  prune(def, obj);
  return obj;
};

/** ObjectMeta's fields (k8s.io/apimachinery/pkg/apis/meta/v1): anything else is not part of an object. */
const MetaFields = new Set([
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers',
  'clusterName', 'managedFields', 'initializers',
]);
const DefaultFields = ['spec', 'status'] as const;

/** Unknown fields are dropped, as typed decoding (and CRD pruning of metadata) does. */
const prune = (def: ResourceDefinition, obj: KubeObject): void => {
  for (const k of Object.keys(obj.metadata)) if (!MetaFields.has(k)) delete obj.metadata[k];
  if (def.schemaless) return;
  const known = def.fields ?? DefaultFields;
  for (const k of Object.keys(obj)) if (k !== 'apiVersion' && k !== 'kind' && k !== 'metadata' && !known.includes(k)) delete obj[k];
};

/** Wrong JSON types in metadata are decoding errors (400) in Kubernetes, not validation errors. */
const checkMetaShape = (meta: unknown): void => {
  if (!isObject(meta)) throw badRequest('metadata: expected an object');
  for (const f of ['labels', 'annotations'] as const) {
    const m = meta[f];
    if (m === undefined || m === null) continue;
    if (!isObject(m) || Object.values(m).some((v) => typeof v !== 'string')) {
      throw badRequest(`metadata.${f}: expected a map of string to string`);
    }
  }
  for (const f of ['name', 'generateName', 'namespace', 'resourceVersion', 'uid'] as const) {
    if (meta[f] !== undefined && meta[f] !== null && typeof meta[f] !== 'string') throw badRequest(`metadata.${f}: expected a string`);
  }
  const fin = meta.finalizers;
  if (fin !== undefined && fin !== null && (!Array.isArray(fin) || fin.some((f) => typeof f !== 'string'))) {
    throw badRequest('metadata.finalizers: expected a list of strings');
  }
};

/** rest.EnsureObjectNamespaceMatchesRequestNamespace. */
export const matchNamespace = (def: ResourceDefinition, ctx: RequestContext, meta: ObjectMeta): void => {
  if (!def.namespaced) {
    delete meta.namespace;
    return;
  }
  const want = ctx.namespace;
  if (!want || meta.namespace === want) return;
  if (!meta.namespace) meta.namespace = want;
  else throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
};

export const prepareCreate = (def: ResourceDefinition, ctx: RequestContext, body: unknown): KubeObject => {
  const obj = decodeBody(def, body);
  const meta = obj.metadata;
  matchNamespace(def, ctx, meta);
  if (meta.resourceVersion) throw badRequest('resourceVersion should not be set on objects to be created');
  for (const f of ['deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink'] as const) delete meta[f];
  for (const field of clearedOnCreate(def)) delete obj[field];
  // System fields first, as Kubernetes fills them before PrepareForCreate (a Job's selector names its uid).
  meta.uid = randomUUID();
  meta.creationTimestamp = timestamp();
  if (meta.generateName && !meta.name) meta.name = generateName(meta.generateName);
  def.strategy.prepareForCreate?.(obj, ctx);
  meta.generation = 1;
  if (meta.name) meta.selfLink = selfLink(def, meta.namespace, meta.name);
  throwIfInvalid(def, obj, [...validateObjectMeta(def, meta), ...(def.strategy.validate?.(obj) ?? []), ...(def.strategy.validateCreate?.(obj) ?? [])]);
  def.strategy.canonicalize?.(obj);
  return obj;
};

/**
 * rest.BeforeUpdate, on `obj` (modified in place): the object a view asks for, merged into the stored
 * one, under `strategy` (the kind's, or a view subresource's update rules).
 */
export const prepareUpdate = (def: ResourceDefinition, obj: KubeObject, old: KubeObject, strategy: Strategy): KubeObject => {
  const meta = obj.metadata;
  const was = old.metadata;
  const errs: FieldError[] = [];
  meta.uid ||= was.uid;
  if (meta.uid !== was.uid) errs.push(immutable('metadata.uid', meta.uid));
  if (meta.name !== was.name) errs.push(immutable('metadata.name', meta.name));
  if (meta.namespace !== was.namespace) errs.push(immutable('metadata.namespace', meta.namespace));
  meta.creationTimestamp = was.creationTimestamp;
  if (was.deletionTimestamp) meta.deletionTimestamp = was.deletionTimestamp;
  else delete meta.deletionTimestamp;
  if (was.deletionGracePeriodSeconds !== undefined) meta.deletionGracePeriodSeconds = was.deletionGracePeriodSeconds;
  meta.generation = was.generation;
  meta.selfLink = was.selfLink;
  strategy.prepareForUpdate?.(obj, old);
  const changed = strategy.generationChanged ?? specChanged;
  if (changed(obj, old)) meta.generation = (was.generation ?? 0) + 1;
  errs.push(...validateObjectMeta(def, meta), ...finalizerRule(meta, was));
  errs.push(...(strategy.validate?.(obj) ?? []), ...(strategy.validateUpdate?.(obj, old) ?? []));
  throwIfInvalid(def, obj, errs);
  strategy.canonicalize?.(obj);
  return obj;
};

/** The kind's validation again, after a mutating admission step changed the object (`old` on an update). */
export const revalidate = (def: ResourceDefinition, obj: KubeObject, old?: KubeObject, strategy: Strategy = def.strategy): void => {
  const rules = old ? (strategy.validateUpdate?.(obj, old) ?? []) : (strategy.validateCreate?.(obj) ?? []);
  throwIfInvalid(def, obj, [...validateObjectMeta(def, obj.metadata), ...(strategy.validate?.(obj) ?? []), ...rules]);
  strategy.canonicalize?.(obj);
};

/** Anything but metadata and status changed. */
export const specChanged = (obj: KubeObject, old: KubeObject): boolean => {
  const strip = ({ metadata: _m, status: _s, ...rest }: KubeObject) => rest;
  return !isDeepStrictEqual(strip(obj), strip(old));
};

const finalizerRule = (meta: ObjectMeta, was: ObjectMeta): FieldError[] => {
  if (!was.deletionTimestamp) return [];
  const added = (meta.finalizers ?? []).filter((f) => !(was.finalizers ?? []).includes(f));
  return added.length === 0 ? [] : [forbiddenField('metadata.finalizers',
    `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`)];
};

/** apimachinery's ValidateObjectMeta: names, namespace, labels, annotations. */
export const validateObjectMeta = (def: ResourceDefinition, meta: ObjectMeta): FieldError[] => {
  const errs: FieldError[] = [];
  const nameRule = def.nameRule ?? isDNS1123Subdomain;
  if (!meta.name) {
    if (!def.ephemeral) errs.push(required('metadata.name', 'name or generateName is required'));
  } else errs.push(...check('metadata.name', meta.name, nameRule));
  if (def.namespaced) {
    if (!meta.namespace) errs.push(required('metadata.namespace'));
    else errs.push(...check('metadata.namespace', meta.namespace, isDNS1123Label));
  }
  errs.push(...validateLabels(meta.labels, 'metadata.labels'));
  errs.push(...validateAnnotations(meta.annotations, 'metadata.annotations'));
  return errs;
};

export const throwIfInvalid = (def: ResourceDefinition, obj: KubeObject, errs: FieldError[]): void => {
  if (errs.length === 0) return;
  const causes = errs.map((e) => ({ reason: e.type, message: e.message, field: e.field }));
  throw invalid(def.kind, def.group, obj.metadata.name ?? obj.metadata.generateName ?? '', causes);
};
