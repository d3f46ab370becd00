/**
 * A kind is data: a ResourceDefinition (names, scope, verbs, strategy). Routes, discovery and the
 * generic store all derive from it — there is never an HTTP handler per kind.
 * (Modelled on Kubernetes' registry/generic/registry.Store + one strategy per kind.)
 */
import type { DeleteOptions, KubeList, KubeObject, WatchEvent } from '../api/meta.js';
import type { Storage } from '../storage/interface.js';
import type { FieldError } from './generic/validation.js';

/** Verbs as discovery lists them (APIResource.verbs). */
export const Verbs = ['create', 'get', 'list', 'watch', 'update', 'patch', 'delete', 'deletecollection'] as const;
export type Verb = (typeof Verbs)[number];

export const Subresources = ['status', 'finalize', 'scale', 'token', 'binding', 'log', 'exec', 'attach', 'portforward'] as const;
export type Subresource = (typeof Subresources)[number];

/** Subresources that answer another kind than their object's (discovery names it; negotiation needs it). */
export const SubresourceKinds: Readonly<Partial<Record<Subresource, { group: string; version: string; kind: string }>>> = {
  scale: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
  token: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' },
  binding: { group: '', version: 'v1', kind: 'Binding' },
  exec: { group: '', version: 'v1', kind: 'PodExecOptions' },
  attach: { group: '', version: 'v1', kind: 'PodAttachOptions' },
  portforward: { group: '', version: 'v1', kind: 'PodPortForwardOptions' },
};

/** Subresources that reach a pod's node (kubelet) rather than the store. */
export const ConnectSubresources: ReadonlySet<Subresource> = new Set(['log', 'exec', 'attach', 'portforward']);

/** What a connect subresource answers when it does not fail with a Status: here only "nothing to stream". */
export interface ConnectAnswer {
  code: 204;
}

/** Who is asking, from the bearer token (http/auth.ts). */
export interface UserInfo {
  name: string;
  uid: string;
  groups: string[];
}

/** What review answers may consult besides the object: the server's own authenticator. */
export interface ReviewServices {
  /** TokenReview: the token's user for `audiences` (default: this API server's); absent when the server authenticates nobody. */
  reviewToken?(token: string, audiences?: readonly string[]): Promise<{ user: UserInfo; audiences: string[] } | undefined>;
}

/** The status a review kind answers (may throw an ApiError for a question it refuses). */
export type ReviewAnswer = (
  obj: KubeObject,
  services: ReviewServices,
  ctx: RequestContext,
) => Record<string, unknown> | Promise<Record<string, unknown>>;

/** The object a service account token is bound to: it is valid only while that object exists. */
export interface BoundObject {
  kind: 'Pod' | 'Secret';
  name: string;
  uid: string;
}

export interface IssuedToken {
  token: string;
  expiresAt: Date;
  /** The audiences it names: those asked, or this API server's when none were. */
  audiences: string[];
}

export interface SubresourceAction {
  check(body: unknown, name: string): unknown;
  apply(old: KubeObject, checked: unknown): KubeObject;
  answer(updated: KubeObject): KubeObject;
}

/** Signs service account tokens (http/service-account-tokens.ts); the registry's TokenRequest uses it. */
export interface TokenIssuer {
  issue(account: { namespace: string; name: string; uid: string }, audiences: readonly string[], seconds: number, bound?: BoundObject): IssuedToken;
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
}

/** One printer column of `kubectl get` (meta.k8s.io/v1 Table). */
export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description?: string;
  priority?: number;
  /** The cell value of one object. */
  cell(obj: KubeObject): unknown;
}

/**
 * Per-kind behaviour. Cross-kind rules (system fields, generateName, namespace match, uid,
 * timestamps, resourceVersion) are applied once in strategy.ts around these hooks.
 */
export interface Strategy {
  /** Defaults and clearing of fields the client may not set (e.g. status on create). */
  prepareForCreate?(obj: KubeObject): void;
  /** Called with the incoming object and the stored one; e.g. copy status from old on a main-resource PUT. */
  prepareForUpdate?(obj: KubeObject, old: KubeObject): void;
  validate?(obj: KubeObject): FieldError[];
  validateUpdate?(obj: KubeObject, old: KubeObject): FieldError[];
  /** Normalise stored form (e.g. Secret stringData → data). */
  canonicalize?(obj: KubeObject): void;
  /**
   * Extra field-selector fields beyond metadata.name / metadata.namespace (e.g. status.phase).
   * Returns every supported key for any object ('' when absent): the keys of `fieldsOf(blank)` are
   * the kind's supported field labels.
   */
  fieldsOf?(obj: KubeObject): Record<string, string>;
  /** Whether a change to this object bumps metadata.generation (default: anything but metadata/status changed). */
  generationChanged?(obj: KubeObject, old: KubeObject): boolean;
}

export interface ResourceDefinition {
  /** API group; '' for the core group. */
  group: string;
  version: string;
  kind: string;
  listKind: string;
  /** Plural resource name as it appears in paths: `pods`. */
  plural: string;
  singular: string;
  namespaced: boolean;
  verbs: readonly Verb[];
  shortNames?: readonly string[];
  categories?: readonly string[];
  subresources?: readonly Subresource[];
  strategy: Strategy;
  /** Strategy for the /status subresource (copies spec from old, keeps only status). */
  statusStrategy?: Strategy;
  /** Extra `kubectl get` columns after NAME (and before AGE, which is always last). */
  columns?: readonly TableColumn[];
  /** Schemaless kinds (the extra discovery groups) keep any fields, like a CRD without a schema. */
  schemaless?: boolean;
  /**
   * The kind's top-level fields besides apiVersion, kind and metadata; others are dropped on decode,
   * as Kubernetes' typed decoding drops unknown fields. Default `['spec', 'status']`; ignored when schemaless.
   */
  fields?: readonly string[];
  /**
   * Create answers the prepared object without storing it and without needing a name: the review
   * kinds (tokenreviews, subjectaccessreviews) are questions, not objects.
   */
  ephemeral?: boolean;
  /**
   * POST on a subresource that changes the object past its update rules (a Pod's `binding` sets the
   * immutable spec.nodeName): `check` reads the body (throwing 4xx), `apply` makes the next object from
   * the stored one, `answer` is the response. The generic store runs it as a compare-and-swap update.
   */
  actions?: Partial<Record<Subresource, SubresourceAction>>;
  /**
   * log / exec / attach / portforward: what the API server answers before it would reach the node
   * (no kubelet here). Throws the ApiError kube-apiserver gives, or answers 204 when there is nothing to stream.
   */
  connect?(obj: KubeObject, subresource: Subresource, query: URLSearchParams): ConnectAnswer;
  /** With a `scale` subresource: the label selector string of the pods the replica count counts. */
  scaleSelector?(obj: KubeObject): string;
  /** An ephemeral kind's answer to the question its object asks, set as the object's status. */
  answer?: ReviewAnswer;
  /** Cluster-unique values the kind holds (Service clusterIP), reserved in storage beside the object. */
  allocator?: Allocator;
  /** How delete treats this kind beyond the generic rules (grace periods, GC default, spec finalizers). */
  deletion?: DeletionRules;
  /** metadata.name rule returning Kubernetes' messages; default DNS-1123 subdomain (Namespace: label, Service: DNS-1035). */
  nameRule?(name: string): string[];
}

/** Kubernetes' RESTGracefulDeleteStrategy and GarbageCollectionDeleteStrategy, as data. */
export interface DeletionRules {
  /** Seconds this delete waits before the object may be removed (Pod); 0 or absent deletes at once. */
  gracePeriod?(obj: KubeObject, options: DeleteOptions): number;
  /** Policy when the request names none and no GC finalizer says otherwise (v1 ReplicationController: Orphan). */
  defaultPropagation?: 'Orphan' | 'Background';
  /** Finalizers held outside metadata (Namespace spec.finalizers): the object stays while this is true. */
  heldBy?(obj: KubeObject): boolean;
  /** Applied when deletion starts (Namespace: status.phase Terminating). */
  onDeleting?(obj: KubeObject): void;
  /** Why this object may never be deleted (403 Forbidden), e.g. the namespaces the server itself needs. */
  undeletable?(obj: KubeObject): string | undefined;
}

/**
 * Reserves cluster-unique values (e.g. a Service's clusterIP) with a storage create, so two objects
 * can never hold the same one, even across concurrent creates.
 */
export interface Allocator {
  /** Fill in and reserve what `obj` needs (422 for a taken or invalid value); returns the undo. */
  allocate(obj: KubeObject, storage: Storage): Promise<() => Promise<void>>;
  /**
   * On update: reserve what `obj` needs that `old` did not hold (filling in what is missing). `undo`
   * frees those if the update is not stored; `commit` frees what only `old` held once it is.
   */
  reallocate?(obj: KubeObject, old: KubeObject, storage: Storage): Promise<{ undo(): Promise<void>; commit(): Promise<void> }>;
  /** Free what a removed object held. */
  release(obj: KubeObject, storage: Storage): Promise<void>;
}

/** `apps/v1` or `v1` for the core group. */
export const groupVersion = (def: Pick<ResourceDefinition, 'group' | 'version'>): string =>
  def.group ? `${def.group}/${def.version}` : def.version;

/* ---- The generic store's surface, as http/ calls it (registry/store.ts implements it) ---- */

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
}

export interface ResourceStore {
  readonly definition: ResourceDefinition;
  /** On `scale`, the object's autoscaling/v1 Scale view; on `status`, the object itself. */
  get(ctx: RequestContext, name: string, subresource?: Subresource): Promise<KubeObject>;
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
  create(ctx: RequestContext, body: unknown): Promise<KubeObject>;
  /** log / exec / attach / portforward (ConnectSubresources), for kinds with `connect`. */
  connect?(ctx: RequestContext, name: string, subresource: Subresource, query: URLSearchParams): Promise<ConnectAnswer>;
  /** POST on an object's subresource (a ServiceAccount's `token`): answers what it made, stores nothing of it. */
  createSubresource?(ctx: RequestContext, name: string, subresource: Subresource, body: unknown): Promise<KubeObject>;
  /** PUT; on `status` only status changes, on the main resource status changes are ignored. */
  update(ctx: RequestContext, name: string, body: unknown, subresource?: Subresource): Promise<KubeObject>;
  patch(ctx: RequestContext, name: string, type: PatchType, patch: unknown, subresource?: Subresource): Promise<KubeObject>;
  /** Server-side apply of a configuration as `ctx.fieldManager`; `created` when the object did not exist. */
  apply?(ctx: RequestContext, name: string, config: unknown, subresource?: Subresource): Promise<{ object: KubeObject; created: boolean }>;
  /** `deleted` false when finalizers or a grace period keep the object (it is returned with deletionTimestamp). */
  delete(ctx: RequestContext, name: string, options: DeleteOptions): Promise<{ object: KubeObject; deleted: boolean }>;
  deleteCollection(ctx: RequestContext, query: ListQuery, options: DeleteOptions): Promise<KubeList>;
  watch(ctx: RequestContext, query: WatchQuery, sink: WatchSink): Promise<{ close(): void }>;
}

/** Every registered kind, found the way the router finds them. */
export interface Registry {
  definitions(): readonly ResourceDefinition[];
  find(group: string, version: string, plural: string): ResourceStore | undefined;
}
