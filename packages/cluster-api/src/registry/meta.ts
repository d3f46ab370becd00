/**
 * Where an object lives and how it is addressed: storage keys, selfLinks, the group-resource used in
 * messages, and the byte encoding. `metadata.resourceVersion` is never stored: it is the key's
 * modRevision, set on every read (as Kubernetes' etcd3 store does), so unchanged objects re-encode to
 * identical bytes and a no-op update can be detected by comparing bytes.
 */
import type { KubeObject } from '../api/meta.js';
import type { KeyValue } from '../storage/interface.js';
import * as keys from '../storage/keys.js';
import type { GroupResource } from './errors.js';
import type { ResourceDefinition } from './definition.js';

export const groupResource = (def: ResourceDefinition): GroupResource => ({ group: def.group, resource: def.plural });

/** The key segment of a resource: `pods`, `deployments.apps` (one segment, so groups never collide). */
const resourceSegment = (def: ResourceDefinition): string => (def.group ? `${def.plural}.${def.group}` : def.plural);

/** Throws StorageError InvalidArgument for a namespace that cannot be a key segment. */
export const listPrefix = (def: ResourceDefinition, namespace?: string): string =>
  def.namespaced && namespace ? keys.namespacePrefix(resourceSegment(def), namespace) : keys.resourcePrefix(resourceSegment(def));

/** Throws StorageError InvalidArgument for a name that cannot be a key segment (`a/b`, `..`). */
export const objectKey = (def: ResourceDefinition, namespace: string | undefined, name: string): string =>
  keys.objectKey(resourceSegment(def), def.namespaced ? namespace : undefined, name);

const apiRoot = (def: ResourceDefinition): string =>
  def.group ? `/apis/${def.group}/${def.version}` : `/api/${def.version}`;

export const collectionLink = (def: ResourceDefinition, namespace?: string): string =>
  def.namespaced && namespace ? `${apiRoot(def)}/namespaces/${namespace}/${def.plural}` : `${apiRoot(def)}/${def.plural}`;

export const selfLink = (def: ResourceDefinition, namespace: string | undefined, name: string): string =>
  `${collectionLink(def, namespace)}/${name}`;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const encode = (obj: KubeObject): Uint8Array => {
  const { resourceVersion: _rv, ...metadata } = obj.metadata;
  return encoder.encode(JSON.stringify({ ...obj, metadata }));
};

export const decode = (kv: KeyValue, revision = kv.modRevision): KubeObject => {
  const obj = JSON.parse(decoder.decode(kv.value)) as KubeObject;
  obj.metadata.resourceVersion = String(revision);
  return obj;
};

export const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;

export const clone = <T>(v: T): T => structuredClone(v);

/** RFC 3339 with seconds, as metav1.Time marshals. */
export const timestamp = (d: Date = new Date()): string => `${d.toISOString().slice(0, 19)}Z`;

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
