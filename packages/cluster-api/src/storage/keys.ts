/**
 * Storage keys: `/registry/<resource>/<namespace>/<name>` for namespaced objects and
 * `/registry/<resource>/<name>` for cluster-scoped ones (Kubernetes' etcd layout).
 *
 * Every segment is printable ASCII without `/` or `%`, and never `.` or `..`: a name can then never
 * reach outside its prefix (`a/b` would list under another namespace), and byte order equals
 * JavaScript string order, so every backend (memory, SQLite BINARY collation, etcd) sorts keys alike
 * and continue positions mean the same thing everywhere.
 */
import { StorageError } from './errors.js';

export const REGISTRY_ROOT = '/registry/';

/** Longest accepted segment: DNS-1123 subdomains are ≤ 253; the rest is headroom for resource names. */
const MAX_SEGMENT = 512;
const SEGMENT = /^[\x21-\x7e]+$/;
const KEY = /^\/[\x21-\x7e]*[\x21-\x2e\x30-\x7e]$/;
const PREFIX = /^\/([\x21-\x7e]*\/)?$/;

function invalid(key: string, why: string): StorageError {
  return new StorageError('InvalidArgument', key, `invalid storage key ${JSON.stringify(key)}: ${why}`);
}

/** Throws InvalidArgument unless `segment` can be one path segment of a key. */
export function checkSegment(segment: string, what = 'segment'): void {
  if (typeof segment !== 'string' || segment.length === 0) throw invalid(String(segment), `empty ${what}`);
  if (segment.length > MAX_SEGMENT) throw invalid(segment, `${what} longer than ${MAX_SEGMENT}`);
  if (!SEGMENT.test(segment)) throw invalid(segment, `${what} must be printable ASCII without spaces`);
  if (segment.includes('/') || segment.includes('%')) throw invalid(segment, `${what} contains '/' or '%'`);
  if (segment === '.' || segment === '..') throw invalid(segment, `${what} may not be '.' or '..'`);
}

/** A full object key. */
export function objectKey(resource: string, namespace: string | undefined, name: string): string {
  checkSegment(resource, 'resource');
  checkSegment(name, 'name');
  if (namespace === undefined || namespace === '') return `${REGISTRY_ROOT}${resource}/${name}`;
  checkSegment(namespace, 'namespace');
  return `${REGISTRY_ROOT}${resource}/${namespace}/${name}`;
}

/** Prefix of every object of a resource (all namespaces, or the whole cluster-scoped resource). */
export function resourcePrefix(resource: string): string {
  checkSegment(resource, 'resource');
  return `${REGISTRY_ROOT}${resource}/`;
}

/** Prefix of the objects of a namespaced resource in one namespace. */
export function namespacePrefix(resource: string, namespace: string): string {
  checkSegment(namespace, 'namespace');
  return `${resourcePrefix(resource)}${namespace}/`;
}

export interface ParsedKey {
  readonly resource: string;
  /** Absent for cluster-scoped keys. */
  readonly namespace?: string;
  readonly name: string;
}

/** Inverse of objectKey; throws InvalidArgument for anything objectKey would not have produced. */
export function parseKey(key: string): ParsedKey {
  if (typeof key !== 'string' || !key.startsWith(REGISTRY_ROOT)) throw invalid(String(key), `not under ${REGISTRY_ROOT}`);
  const parts = key.slice(REGISTRY_ROOT.length).split('/');
  if (parts.length !== 2 && parts.length !== 3) throw invalid(key, 'expected resource[/namespace]/name');
  parts.forEach((p) => checkSegment(p));
  const [resource, a, b] = parts as [string, string, string | undefined];
  return b === undefined ? { resource, name: a } : { resource, namespace: a, name: b };
}

/** Backends accept any key of this shape: absolute, printable ASCII, not ending in `/`. */
export function checkKey(key: string): void {
  if (typeof key !== 'string' || !KEY.test(key)) {
    throw invalid(String(key), 'must start with "/", not end with "/", and be printable ASCII');
  }
}

/** Backends accept a prefix of this shape: absolute, printable ASCII, ending in `/`. */
export function checkPrefix(prefix: string): void {
  if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
    throw invalid(String(prefix), 'a prefix must start and end with "/" and be printable ASCII');
  }
}

/**
 * The smallest string greater than every key under `prefix`: the exclusive end of its range.
 * Prefixes end in `/` (0x2f), so the bump is `0` (0x30) and never overflows.
 */
export function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}
