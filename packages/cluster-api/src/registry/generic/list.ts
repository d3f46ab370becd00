/**
 * List with selectors, limit and continue (Kubernetes' etcd3 store GetList): pages are read at one
 * snapshot revision carried in the continue token, so a paged list is consistent; a token whose
 * revision was compacted away is 410 Expired and the client starts over.
 */
import type { KubeList, KubeObject, ListMeta } from '../../api/meta.js';
import type { KeyValue, Storage } from '../../storage/interface.js';
import { isStorageError } from '../../storage/errors.js';
import { groupVersion, type ResourceDefinition } from '../definition.js';
import { type ListQuery, type RequestContext } from '../rest.js';
import { ApiError, ContinueExpiredMessage, badRequest, fromStorageError, gone, tooLargeResourceVersion, tooOldResourceVersion } from '../../api/errors.js';
import type { Codec } from './codec.js';
import { collectionLink, groupResource, listPrefix } from './meta.js';
import { fieldsOf, parseFieldSelector, parseLabelSelector } from './selectors.js';

const ContinueVersion = 'meta.k8s.io/v1';

export const encodeContinue = (relativeKey: string, revision: number): string =>
  Buffer.from(JSON.stringify({ v: ContinueVersion, rv: revision, start: relativeKey })).toString('base64url');

/** → {relative key, revision}; the key stays below the list prefix (no `..`, no leading `/`). */
export const decodeContinue = (token: string): { start: string; revision: number } => {
  const bad = (why: string) => badRequest(`invalid continue token: continue key is not valid: ${why}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw bad('illegal base64 data or JSON');
  }
  const c = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (typeof c !== 'object' || c === null || c.v !== ContinueVersion) throw bad('server does not recognize this encoded version');
  if (typeof c.rv !== 'number' || !Number.isInteger(c.rv) || c.rv <= 0) {
    throw bad(`incorrect encoded start resourceVersion (version ${ContinueVersion})`);
  }
  if (typeof c.start !== 'string' || c.start === '' || c.start.startsWith('/') || c.start.split('/').includes('..')) {
    throw bad('the start key is outside the list');
  }
  return { start: c.start, revision: c.rv };
};

/** `resourceVersion` as a revision: unset / "0" → latest (0); invalid → 400. */
export const parseResourceVersion = (rv: string | undefined): number => {
  if (rv === undefined || rv === '' || rv === '0') return 0;
  if (!/^\d+$/.test(rv)) throw badRequest(`invalid resource version: ${rv}`);
  return Number(rv);
};

export type ObjectFilter = (obj: KubeObject) => boolean;

const everything: ObjectFilter = () => true;

export const objectFilter = (def: ResourceDefinition, labelSelector?: string, fieldSelector?: string): ObjectFilter => {
  const labels = parseLabelSelector(labelSelector);
  const fields = parseFieldSelector(def, fieldSelector);
  if (!labelSelector && !fieldSelector) return everything;
  if (!fieldSelector) return (obj) => labels(obj.metadata.labels ?? {});
  return (obj) => labels(obj.metadata.labels ?? {}) && fields(fieldsOf(def, obj));
};

/** The snapshot to read: unset/"0" latest; N at least N (504 when N is in the future); Exact reads at N. */
const snapshotRevision = async (storage: Storage, query: ListQuery): Promise<number> => {
  const rv = parseResourceVersion(query.resourceVersion);
  if (rv === 0) return 0;
  const current = await storage.currentRevision();
  if (rv > current) throw tooLargeResourceVersion(rv, current);
  return query.resourceVersionMatch === 'Exact' ? rv : 0;
};

const PageSize = 500;

type Convert<T> = (kv: KeyValue) => T | undefined;

interface Collected<T> {
  items: T[];
  metadata: ListMeta;
}

/**
 * Page through storage at one snapshot, converting (and filtering) each value, until `limit` items
 * are collected; the continue token records the last key examined.
 */
const collect = async <T>(storage: Storage, def: ResourceDefinition, ctx: RequestContext, query: ListQuery, convert: Convert<T>): Promise<Collected<T>> => {
  const prefix = listPrefix(def, ctx.namespace);
  const limit = query.limit && query.limit > 0 ? Math.floor(query.limit) : 0;
  if (query.continue && query.resourceVersion && query.resourceVersion !== '0') {
    throw badRequest('specifying resource version is not allowed when using continue');
  }
  const from = query.continue ? decodeContinue(query.continue) : undefined;
  let revision = from ? from.revision : await snapshotRevision(storage, query);
  let startAfter = from ? prefix + from.start : undefined;
  const items: T[] = [];
  let next: string | undefined;
  let remaining: number | undefined;
  for (;;) {
    const want = limit ? Math.max(limit - items.length, Math.min(limit * 2, PageSize)) : 0;
    const page = await readPage(storage, def, { prefix, revision, limit: want, startAfter }, from !== undefined);
    revision = page.revision;
    for (let i = 0; i < page.items.length; i++) {
      const item = convert(page.items[i]!);
      if (item !== undefined) items.push(item);
      const left = page.items.length - 1 - i;
      if (limit && items.length === limit && (left > 0 || page.more)) {
        next = page.items[i]!.key.slice(prefix.length);
        remaining = page.remaining === undefined ? undefined : page.remaining + left;
        break;
      }
    }
    if (next || !page.more || page.items.length === 0) break;
    startAfter = page.items[page.items.length - 1]!.key;
  }
  const filtered = Boolean(query.labelSelector || query.fieldSelector);
  const metadata: ListMeta = {
    selfLink: collectionLink(def, ctx.namespace),
    resourceVersion: String(revision),
    ...(next ? { continue: encodeContinue(next, revision) } : {}),
    ...(next && !filtered && remaining !== undefined ? { remainingItemCount: remaining } : {}),
  };
  return { items, metadata };
};

export const listObjects = async (storage: Storage, codec: Codec, def: ResourceDefinition, ctx: RequestContext, query: ListQuery): Promise<KubeList> => {
  const filter = objectFilter(def, query.labelSelector, query.fieldSelector);
  const { items, metadata } = await collect(storage, def, ctx, query, (kv) => {
    const obj = codec.decode(kv);
    return filter(obj) ? obj : undefined;
  });
  return { kind: def.listKind, apiVersion: groupVersion(def), metadata, items };
};

/**
 * The same list as listObjects, already serialized as compact JSON. Stored bytes are spliced into
 * the body with their resourceVersion added, so an unfiltered list never parses or re-serializes an
 * object: the cost of a large list is then the storage read.
 */
export const listEncoded = async (storage: Storage, codec: Codec, def: ResourceDefinition, ctx: RequestContext, query: ListQuery): Promise<Uint8Array> => {
  const filter = objectFilter(def, query.labelSelector, query.fieldSelector);
  const unfiltered = !query.labelSelector && !query.fieldSelector;
  const { items, metadata } = await collect(storage, def, ctx, query, (kv) =>
    unfiltered || filter(codec.decode(kv)) ? codec.spliced(kv) : undefined);
  const head = JSON.stringify({ kind: def.listKind, apiVersion: groupVersion(def), metadata });
  const parts: Uint8Array[] = [Buffer.from(`${head.slice(0, -1)},"items":[`)];
  items.forEach((item, i) => {
    if (i > 0) parts.push(Comma);
    parts.push(...item);
  });
  parts.push(Close);
  return Buffer.concat(parts);
};

const Comma = Buffer.from(',');
const Close = Buffer.from(']}');

const readPage = async (
  storage: Storage,
  def: ResourceDefinition,
  opts: { prefix: string; revision: number; limit: number; startAfter?: string },
  continuing: boolean,
) => {
  try {
    return await storage.list(opts);
  } catch (err) {
    if (isStorageError(err, 'Compacted')) {
      if (continuing) throw gone(ContinueExpiredMessage);
      throw tooOldResourceVersion(opts.revision, err.revision ?? 0);
    }
    throw err instanceof ApiError ? err : fromStorageError(err, groupResource(def), '');
  }
};
