/**
 * What a controller is given (kube-controller-manager's ControllerContext): its own API client (its
 * identity) to write through, the shared caches to read from, its event recorders, the log; and the
 * helpers their reconciles share (keys, status writes, slow-start batches).
 */
import { semanticEqual } from './hash.js';
import type { KubeObject } from '../api/meta.js';
import { isApiError } from '../api/errors.js';
import type { ApiClient, ResourceClient } from '../client/interface.js';
import type { Registry } from '../registry/rest.js';
import type { Caches, ObjectCache } from './cache.js';
import type { EventRecorder } from '@func/kube-client';
import { inNamespace } from './shared.js';

export interface ControllerContext {
  client: ApiClient;
  /** The manager's own client, for reads a controller makes through shared informers in Kubernetes. */
  informers: ApiClient;
  caches: Caches;
  events: { recorder(component: string): EventRecorder };
  /** The API server's registry, given to its own loops only (the CRD controller serves what it establishes). */
  registry?: Registry;
  log?: (entry: Record<string, unknown>) => void;
  /**
   * A client acting as a ServiceAccount of a user's namespace (authorized as its requests would be),
   * for controllers that act on a user's behalf (an ApiServerSource watches as the one it names);
   * absent where the manager cannot act as others.
   */
  clientAs?(namespace: string, serviceAccount: string): ApiClient;
  /** The API server's URL, as a client in the cluster reaches it (an ApiServerSource's event source). */
  apiServerUrl?: string;
  /** The serving gateway's URL while it runs in this process (`serve`): sources send to cluster-local sinks through it. */
  gatewayUrl?: () => string | undefined;
}

export interface Served {
  store: ResourceClient;
  cache: ObjectCache;
}

/** The store and cache of a resource, or undefined when it is not served. */
export const served = (ctx: ControllerContext, group: string, version: string, plural: string): Served | undefined => {
  const store = ctx.client.find(group, version, plural);
  return store && { store, cache: ctx.caches.of(store) };
};

export const objectKey = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

export const splitKey = (key: string): { namespace: string; name: string } => {
  const at = key.indexOf('/');
  return { namespace: key.slice(0, at), name: key.slice(at + 1) };
};

/** Go's omitempty for a status written by a controller: zero counters and empty lists are left out. */
export const omitEmpty = <T extends Record<string, unknown>>(status: T, always: readonly string[] = []): T =>
  Object.fromEntries(Object.entries(status).filter(([k, v]) =>
    always.includes(k) ? v !== undefined : v !== undefined && v !== null && v !== 0 && v !== '' && !(Array.isArray(v) && v.length === 0))) as T;

/**
 * Writes `status` through the /status subresource when it differs from what `o` holds, with `o`'s
 * resourceVersion; on a conflict once more over a fresh read (kube-controller-manager's
 * updateStatus retry). `meta` changes metadata the status strategy lets through (a Deployment's
 * revision annotation), applied to whichever version is written. The cache sees the answer at once.
 */
export const writeStatus = async (s: Served, o: KubeObject, status: Record<string, unknown>, meta?: (m: KubeObject['metadata']) => KubeObject['metadata']): Promise<KubeObject> => {
  // Semantic equality (hash.ts): a key set to undefined, or an empty list where none is stored, is no change to write.
  const sameMeta = !meta || semanticEqual(meta(structuredClone(o.metadata)), o.metadata);
  if (semanticEqual(o.status ?? {}, status) && sameMeta) return o;
  const ctx = inNamespace(o.metadata.namespace);
  const write = (base: KubeObject) => s.store.update(ctx, base.metadata.name!, { ...base, metadata: meta ? meta(structuredClone(base.metadata)) : base.metadata, status }, 'status');
  const written = await write(o).catch(async (err: unknown) => {
    if (!isApiError(err) || err.code !== 409) throw err;
    return write(await s.store.get(ctx, o.metadata.name!));
  });
  s.cache.observe(written.object);
  return written.object;
};

/** A create refused because the namespace is going away: nothing to report, the namespace controller is cleaning up. */
export const namespaceTerminating = (err: unknown): boolean =>
  isApiError(err) && (err.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating');

/** The message of an error as an Event quotes it. */
export const errorText = (err: unknown): string => String((err as Error)?.message ?? err);

/**
 * kube-controller-manager's slowStartBatch: `count` calls of `fn` in batches of 1, 2, 4…, stopping
 * after the first batch with a failure, so a controller whose every create fails makes one call, not
 * hundreds. Answers how many succeeded and the first failure.
 */
export const slowStartBatch = async (count: number, fn: () => Promise<unknown>): Promise<{ done: number; error?: unknown }> => {
  let done = 0;
  for (let batch = Math.min(count, 1); done < count; batch = Math.min(2 * batch, count - done)) {
    const results = await Promise.allSettled(Array.from({ length: batch }, () => fn()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    done += results.filter((r) => r.status === 'fulfilled').length;
    if (failed) return { done, error: failed.reason };
  }
  return { done };
};
