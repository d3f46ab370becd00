/**
 * The registry's surface, as http/, the controllers and the hooks call it (Kubernetes'
 * registry/rest): one ResourceStore per served resource, found in the Registry, whose definitions may
 * come and go while the server runs. Writes answer what they wrote (`Written`).
 */
import type { DeleteOptions, KubeList, KubeObject, WatchEvent } from '../api/meta.js';
import type { ResourceDefinition } from './definition.js';
import type { ConnectHandler, ConnectRequest } from './subresource.js';

/** Who is asking, from the bearer token (auth/authenticator.ts). */
export interface UserInfo {
  name: string;
  uid: string;
  groups: string[];
  /** Further attributes (an impersonated user's `Impersonate-Extra-*`), as user.Info's extra. */
  extra?: Record<string, string[]>;
}

/** What the store needs to know about a request, besides its body. */
export interface RequestContext {
  /** The namespace from the path; undefined for cluster-scoped kinds and cross-namespace list/watch. */
  namespace?: string;
  user?: UserInfo;
  /** dryRun=All: validate and answer, write nothing. */
  dryRun?: boolean;
  /** Who a write is recorded for in managedFields: `fieldManager`, else the User-Agent's product. */
  fieldManager?: string;
  /** An apply takes over fields other managers own instead of failing with a conflict. */
  force?: boolean;
  /** Warnings for the answer's `Warning` headers (admission/plugin.ts `warn`). */
  warnings?: string[];
}

export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  /** Unset: latest (consistent read). "0": any. N: at least as fresh as N. */
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
}

export interface WatchQuery {
  labelSelector?: string;
  fieldSelector?: string;
  /** Unset or "0": synthetic ADDED events for the current state, then changes. N: every change after N. */
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  /** Watch a single object (`/watch/.../{name}` or fieldSelector metadata.name=…). */
  name?: string;
}

export const PatchTypes = ['json', 'merge', 'strategic', 'apply'] as const;
export type PatchType = (typeof PatchTypes)[number];

/**
 * A watch event as a sink receives it. `frames`, when present, belongs to this very event object,
 * which every watcher of the same change receives: an encoding made for one watcher (a JSON line, a
 * protobuf frame, keyed by format) is kept there and reused by the others, so fan-out costs one
 * serialisation per event and format. Events only one watcher gets (the initial state, bookmarks)
 * carry none. Everything here is shared: read-only.
 */
export interface DeliveredEvent extends WatchEvent<KubeObject> {
  readonly frames?: Map<string, Uint8Array>;
}

export interface WatchSink {
  onEvent(event: DeliveredEvent): void;
  /**
   * Optional: the stored bytes of a newly created object, before they are decoded; false drops its
   * ADDED event unseen. For sinks that care about few objects (the built-in controllers): a creation
   * then costs a byte search instead of a JSON parse. Not asked during the initial replay.
   */
  admitCreated?(stored: Uint8Array): boolean;
  /** Terminal; e.g. a 410 Expired ApiError when the revision was compacted. */
  onError(err: Error): void;
  /** Terminal: the server ended the watch without an error (its resource is no longer served); the stream ends as at its timeout. */
  onEnd?(): void;
}

/** What a write stored and answers. */
export interface Written {
  /** The answer: the object as stored (with its new resourceVersion), or a subresource's view of it. */
  object: KubeObject;
  /**
   * `object` as compact JSON, spliced from the bytes just stored rather than serialised again; absent
   * when `object` is not what was stored (a view, a dry run, a Status).
   */
  encoded?(): Uint8Array;
  /** Server-side apply: the object did not exist and was created. */
  created?: boolean;
  /** Delete: false while finalizers or a grace period keep the object (it is answered with deletionTimestamp). */
  deleted?: boolean;
}

export interface ResourceStore {
  readonly definition: ResourceDefinition;
  /** The object, or a view subresource's view of it (Scale). */
  get(ctx: RequestContext, name: string, subresource?: string): Promise<KubeObject>;
  /**
   * The same object as `get`, as compact JSON spliced from the stored bytes (optional fast path);
   * without a promise when the storage answers at once (Storage.getNow).
   */
  getEncoded?(ctx: RequestContext, name: string): Uint8Array | Promise<Uint8Array>;
  list(ctx: RequestContext, query: ListQuery): Promise<KubeList>;
  /**
   * The same list as `list`, serialized as compact JSON (kind, apiVersion, metadata, items), built
   * from the stored bytes without parsing unfiltered items: the fast path for large JSON lists.
   * Optional: stores without it are served through `list`.
   */
  listEncoded?(ctx: RequestContext, query: ListQuery): Promise<Uint8Array>;
  /** Takes ownership of `body` (create, update and patch may modify the object they are given). */
  create(ctx: RequestContext, body: unknown): Promise<Written>;
  /** PUT of the object, or of a view subresource (on `status` only status changes; on the object status changes are ignored). */
  update(ctx: RequestContext, name: string, body: unknown, subresource?: string): Promise<Written>;
  patch(ctx: RequestContext, name: string, type: PatchType, patch: unknown, subresource?: string): Promise<Written>;
  /** Server-side apply of a configuration as `ctx.fieldManager`; `created` when the object did not exist. */
  apply?(ctx: RequestContext, name: string, config: unknown, subresource?: string): Promise<Written>;
  /** `deleted` false when finalizers or a grace period keep the object (it is returned with deletionTimestamp). */
  delete(ctx: RequestContext, name: string, options: DeleteOptions): Promise<Written>;
  deleteCollection(ctx: RequestContext, query: ListQuery, options: DeleteOptions): Promise<KubeList>;
  /** Writes this server stored through this store, counted as they commit (the generic store's; absent: not counted). */
  readonly writes?: number;
  watch(ctx: RequestContext, query: WatchQuery, sink: WatchSink): Promise<{ close(): void }>;
  /** POST on an object's action or create subresource (binding, token). */
  post?(ctx: RequestContext, name: string, subresource: string, body: unknown): Promise<Written>;
  /** A connect subresource: the request checked against the object, then what takes the exchange over. */
  connect?(ctx: RequestContext, name: string, request: ConnectRequest): Promise<ConnectHandler>;
  /** Ends every open watch (`onEnd`): the registry no longer serves this store's definition. */
  endWatches?(): void;
}

/**
 * Every served resource, found the way the router finds them. Definitions may be added and removed
 * while the server runs (a CustomResourceDefinition is one made at run time): whatever is derived
 * from the list (discovery, OpenAPI) is rebuilt when `generation` moves.
 */
export interface Registry {
  definitions(): readonly ResourceDefinition[];
  find(group: string, version: string, plural: string): ResourceStore | undefined;
  /** Changes whenever a definition is added or removed. */
  readonly generation: number;
  /** Serves `def` from now on, over the same storage and watch cache as every other kind; 409-style error if its resource is taken. */
  add(def: ResourceDefinition): ResourceStore;
  /** Stops serving a resource (its stored objects stay) and ends its open watches; false if it was not served. */
  remove(group: string, version: string, plural: string): boolean;
}
