/**
 * Where an object lives and how it is addressed: storage keys, selfLinks, the group-resource used in
 * messages, and the byte encoding. `metadata.resourceVersion` is never stored: it is the key's
 * modRevision, set on every read (as Kubernetes' etcd3 store does), so unchanged objects re-encode to
 * identical bytes and a no-op update can be detected by comparing bytes.
 */
import type { KubeObject } from '../../api/meta.js';
import type { KeyValue } from '../../storage/interface.js';
import * as keys from '../../storage/keys.js';
import { badRequest, type GroupResource } from '../../api/errors.js';
import { isStorageError } from '../../storage/errors.js';
import { type ResourceDefinition } from '../definition.js';

export const groupResource = (def: ResourceDefinition): GroupResource => ({ group: def.group, resource: def.plural });

/**
 * The key segment of a resource: `pods`, `deployments.apps` (one segment, so groups never collide).
 * Every group version of one object set has its storage version's.
 */
const resourceSegment = (def: ResourceDefinition): string => {
  const { group, plural } = def.storedAs ?? def;
  return group ? `${plural}.${group}` : plural;
};

/** A path segment that cannot be a key segment (`a/b`, `..`, `%`) is a 400, never a 500. */
const segmentsChecked = <T>(build: () => T): T => {
  try {
    return build();
  } catch (err) {
    throw isStorageError(err, 'InvalidArgument') ? badRequest(err.message) : err;
  }
};

export const listPrefix = (def: ResourceDefinition, namespace?: string): string =>
  segmentsChecked(() =>
    def.namespaced && namespace ? keys.namespacePrefix(resourceSegment(def), namespace) : keys.resourcePrefix(resourceSegment(def)));

export const objectKey = (def: ResourceDefinition, namespace: string | undefined, name: string): string =>
  segmentsChecked(() => keys.objectKey(resourceSegment(def), def.namespaced ? namespace : undefined, name));

const apiRoot = (def: ResourceDefinition): string =>
  def.group ? `/apis/${def.group}/${def.version}` : `/api/${def.version}`;

export const collectionLink = (def: ResourceDefinition, namespace?: string): string =>
  def.namespaced && namespace ? `${apiRoot(def)}/namespaces/${namespace}/${def.plural}` : `${apiRoot(def)}/${def.plural}`;

export const selfLink = (def: ResourceDefinition, namespace: string | undefined, name: string): string =>
  `${collectionLink(def, namespace)}/${name}`;

// Buffer.from / toString rather than TextEncoder / TextDecoder: 2-3x faster for a 2 KiB object on Node 20.

/**
 * apiVersion, kind and metadata always come first, so every stored value of a kind starts with the
 * same bytes (see Codec.spliced); `apiVersion`: the storage version's, when the object is another's.
 */
export const encode = (obj: KubeObject, apiVersion = obj.apiVersion): Uint8Array => {
  const { apiVersion: _v, kind, metadata: { resourceVersion: _rv, ...metadata }, ...rest } = obj;
  return Buffer.from(JSON.stringify({ apiVersion, kind, metadata, ...rest }));
};

export const decode = (kv: KeyValue, revision = kv.modRevision): KubeObject => {
  const obj = JSON.parse(Buffer.from(kv.value.buffer, kv.value.byteOffset, kv.value.byteLength).toString('utf8')) as KubeObject;
  obj.metadata.resourceVersion = String(revision);
  return obj;
};

export const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;

export const clone = <T>(v: T): T => structuredClone(v);

let stampSecond = Number.NaN;
let stamp = '';
/** RFC 3339 with seconds, as metav1.Time marshals. Every create asks for "now": one format per second. */
export const timestamp = (d?: Date): string => {
  const second = Math.floor((d ? d.getTime() : Date.now()) / 1000);
  if (second !== stampSecond) {
    stamp = `${new Date(second * 1000).toISOString().slice(0, 19)}Z`;
    stampSecond = second;
  }
  return stamp;
};

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** k8s.io/apimachinery/pkg/util/duration.HumanDuration: the AGE kubectl users read. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

/** How old a creationTimestamp is, as kubectl's AGE column shows it. */
export const humanAge = (timestamp: string | undefined): string => {
  if (!timestamp) return '<unknown>';
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(Date.now() - t);
};
