/**
 * The API client over HTTP: `@func/kube-client` behind the same interface as the in-process one, so
 * the controllers run unchanged in a process of their own (`cluster-api controller-manager`). What
 * is served comes from discovery (every group's versions; those other than the preferred one are
 * marked as not the storage version), read again by `refresh()`. KubeApiErrors become ApiErrors; a
 * watch the server ends at its timeout is opened again from the last resourceVersion seen.
 */
import { KubeApiError, type KubeClient, type ResourceType } from '@func/kube-client';
import { ApiError, StatusReasons, type StatusReason } from '../api/errors.js';
import type { KubeList, KubeObject, WatchEvent } from '../api/meta.js';
import type { Written } from '../registry/rest.js';
import type { ApiClient, ResourceClient, ResourceInfo } from './interface.js';

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
  verbs?: string[];
}

const toApiError = (err: unknown): unknown => {
  if (!(err instanceof KubeApiError)) return err;
  const reason = (StatusReasons as readonly string[]).includes(err.reason) ? (err.reason as StatusReason) : 'InternalError';
  return new ApiError(err.code, reason, err.status.message ?? err.reason, err.status.details as ApiError['details']);
};

const translated = <T>(p: Promise<T>): Promise<T> => p.catch((err: unknown) => Promise.reject(toApiError(err)));

function resourceClient(kube: KubeClient, info: ResourceInfo): ResourceClient {
  const type: ResourceType = { group: info.group, version: info.version, plural: info.plural, kind: info.kind, namespaced: info.namespaced };
  // '' is every namespace (kube-client's default namespace applies to undefined only).
  const ns = (namespace: string | undefined) => namespace ?? '';
  const written = (object: KubeObject): Written => ({ object });
  return {
    definition: info,
    get: (ctx, name, subresource) =>
      translated(subresource
        ? kube.raw({ method: 'GET', path: kube.path(type, { namespace: ns(ctx.namespace), name, subresource }), what: `get ${info.plural}/${name}/${subresource}` }).then((r) => JSON.parse(r.body) as KubeObject)
        : kube.get<KubeObject>(type, name, { namespace: ns(ctx.namespace) })),
    list: (ctx, query) => translated(kube.list<KubeObject>(type, { ...query, namespace: ns(ctx.namespace) }).then((l) => l as KubeList)),
    create: (ctx, body) => translated(kube.create(type, body as KubeObject, { namespace: ctx.namespace ?? (body as KubeObject).metadata?.namespace ?? '' }).then(written)),
    update: (ctx, name, body, subresource) =>
      translated(kube.update(type, { ...(body as KubeObject), metadata: { ...(body as KubeObject).metadata, name } }, { namespace: ns(ctx.namespace), subresource }).then(written)),
    patch: (ctx, name, patchType, patch, subresource) =>
      translated(kube.patch<KubeObject>(type, name, patch, { type: patchType, namespace: ns(ctx.namespace), subresource, force: ctx.force, fieldManager: ctx.fieldManager }).then(written)),
    post: (ctx, name, subresource, body) =>
      translated(kube.create(type, body as KubeObject, { namespace: ns(ctx.namespace), name, subresource }).then(written)),
    delete: (ctx, name, options) =>
      translated(kube.delete<KubeObject & { details?: { uid?: string } }>(type, name, { propagationPolicy: options.propagationPolicy, gracePeriodSeconds: options.gracePeriodSeconds, preconditions: options.preconditions, namespace: ns(ctx.namespace) }).then((o) =>
        // A Status: gone now. An object: finalizers or a grace period keep it.
        o.kind === 'Status'
          ? { object: { apiVersion: info.group ? `${info.group}/${info.version}` : info.version, kind: info.kind, metadata: { name, namespace: ctx.namespace, uid: o.details?.uid } }, deleted: true }
          : { object: o, deleted: false })),
    watch: async (ctx, query, sink) => {
      const abort = new AbortController();
      let resourceVersion = query.resourceVersion;
      const fieldSelector = query.name ? [`metadata.name=${query.name}`, query.fieldSelector].filter(Boolean).join(',') : query.fieldSelector;
      const opts = { namespace: ns(ctx.namespace), labelSelector: query.labelSelector, fieldSelector, allowWatchBookmarks: query.allowWatchBookmarks, signal: abort.signal };
      void (async () => {
        while (!abort.signal.aborted) {
          try {
            for await (const e of kube.watch<KubeObject>(type, { ...opts, resourceVersion })) {
              resourceVersion = e.object?.metadata?.resourceVersion ?? resourceVersion;
              sink.onEvent(e as WatchEvent<KubeObject>);
            }
          } catch (err) {
            if (!abort.signal.aborted) sink.onError(toApiError(err) as Error);
            return;
          }
        }
      })();
      return { close: () => abort.abort() };
    },
  };
}

export interface HttpApiClient extends ApiClient {
  /** Reads discovery again (a CustomResourceDefinition added or removed since). */
  refresh(): Promise<void>;
  /** The same resources, called with another client's credentials (a controller's own). */
  as(other: KubeClient): ApiClient;
}

/** An API client over `kube`, with discovery read once before it answers. */
export async function httpClient(kube: KubeClient): Promise<HttpApiClient> {
  let infos: ResourceInfo[] = [];
  let clients = new Map<string, ResourceClient>();
  let generation = 0;
  const key = (group: string, version: string, plural: string) => `${group}/${version}/${plural}`;
  const getJson = async <T>(path: string): Promise<T> => JSON.parse((await translated(kube.raw({ method: 'GET', path, what: `discovery ${path}` }))).body) as T;
  const resourcesOf = async (group: string, version: string, preferred: boolean): Promise<ResourceInfo[]> => {
    const path = group ? `/apis/${group}/${version}` : `/api/${version}`;
    const list = await getJson<{ resources: ApiResource[] }>(path);
    return list.resources
      .filter((r) => !r.name.includes('/'))
      .map((r) => ({ group, version, plural: r.name, kind: r.kind, namespaced: r.namespaced, verbs: r.verbs ?? [], ...(!preferred && { storedAs: true }) }));
  };
  const refresh = async (): Promise<void> => {
    const groups = await getJson<{ groups: { name: string; versions: { version: string }[]; preferredVersion?: { version: string } }[] }>('/apis');
    const found = await resourcesOf('', 'v1', true);
    for (const g of groups.groups)
      for (const v of g.versions) found.push(...(await resourcesOf(g.name, v.version, v.version === (g.preferredVersion?.version ?? g.versions[0]?.version))));
    const next = new Map<string, ResourceClient>();
    for (const info of found) {
      const k = key(info.group, info.version, info.plural);
      const had = clients.get(k);
      next.set(k, had && JSON.stringify(had.definition) === JSON.stringify(info) ? had : resourceClient(kube, info));
    }
    const changed = next.size !== clients.size || [...next].some(([k, c]) => clients.get(k) !== c);
    infos = found;
    clients = next;
    if (changed) generation++;
  };
  await refresh();
  return {
    definitions: () => infos,
    find: (group, version, plural) => clients.get(key(group, version, plural)),
    get generation() {
      return generation;
    },
    refresh,
    as(other) {
      const made = new Map<ResourceClient, ResourceClient>();
      return {
        definitions: () => infos,
        find(group, version, plural) {
          const mine = clients.get(key(group, version, plural));
          if (!mine) return undefined;
          if (!made.has(mine)) made.set(mine, resourceClient(other, mine.definition));
          return made.get(mine);
        },
        get generation() {
          return generation;
        },
      };
    },
  };
}
