/**
 * The API client controllers act through (client-go's clientset and dynamic client, as one
 * interface): a resource's verbs, found by group, version and plural, and the resources served.
 * Two implementations: in-process (in-process.ts: the registry's stores, authorized as the caller's
 * own identity, no HTTP) and over HTTP (http.ts: `@func/kube-client`). The registry itself has this
 * shape too, for the API server's own loops.
 *
 * The verbs keep the registry's signatures (`RequestContext` names the namespace; its `user` is the
 * client's to set), so a controller reads the same whichever implementation it is given. Errors are
 * ApiErrors (api/errors.ts) from both.
 */
import type { ResourceType } from '@func/kube-client';
import type { ResourceStore } from '../registry/rest.js';

/** What a controller needs to know of a served resource (a discovery entry). */
export interface ResourceInfo extends ResourceType {
  verbs: readonly string[];
  /** Not stored (the review kinds). */
  ephemeral?: boolean;
  /** Set on the versions of a resource that are not its storage version. */
  storedAs?: unknown;
}

/** `post` (binding, eviction, token) where the resource has such subresources. */
export type ResourceClient = Pick<ResourceStore, 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete' | 'watch' | 'post'> & {
  readonly definition: ResourceInfo;
};

export interface ApiClient {
  definitions(): readonly ResourceInfo[];
  /** The resource's client; the same object for the same resource while it is served. */
  find(group: string, version: string, plural: string): ResourceClient | undefined;
  /** Moves whenever the set of resources changes. */
  readonly generation: number;
}
