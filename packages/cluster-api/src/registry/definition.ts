/**
 * A kind is data: a ResourceDefinition (names, scope, verbs, strategy, subresources, hooks). Routes,
 * discovery and the generic store all derive from it — there is never an HTTP handler per kind, and
 * the generic store names no kind and no subresource. (Modelled on Kubernetes' registry/generic
 * registry.Store, one strategy per kind, and its storage map of subresources.)
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { DeleteOptions, KubeObject } from '../api/meta.js';
import type { Storage } from '../storage/interface.js';
import type { Authorizer } from './authorization.js';
import type { ListRule } from './generic/strategic-merge.js';
import type { FieldError } from './generic/validation.js';
import type { RequestContext, ResourceStore, UserInfo, Written } from './rest.js';
import type { SubresourceDef } from './subresource.js';

/** Verbs as discovery lists them (APIResource.verbs). */
export const Verbs = ['create', 'get', 'list', 'watch', 'update', 'patch', 'delete', 'deletecollection'] as const;
export type Verb = (typeof Verbs)[number];

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
  /** By name as it appears in paths (`pods/{name}/binding`): one entry each, see subresource.ts. */
  subresources?: Readonly<Record<string, SubresourceDef>>;
  strategy: Strategy;
  /** Side effects of this kind's writes, beside it (Kubernetes' AfterCreate and friends). */
  hooks?: Hooks;
  /** Extra `kubectl get` columns after NAME (and before AGE, which comes after them). */
  columns?: readonly TableColumn[];
  /**
   * `declared`: the columns follow NAME as declared, with no AGE added (a CRD's additionalPrinterColumns);
   * `own`: the columns are the whole row, in Kubernetes' order (Event: no Name first; PriorityClass: a column after Age).
   */
  columnLayout?: 'declared' | 'own';
  /** A custom resource (a CRD's served version): what it adds to, or changes in, the generic behaviour. */
  custom?: CustomResource;
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
  /** An ephemeral kind's answer to the question its object asks: the object with its status filled in (or, OpenShift, a response kind). */
  answer?: ReviewAnswer;
  /** Cluster-unique values the kind holds (Service clusterIP), reserved in storage beside the object. */
  allocator?: Allocator;
  /** How delete treats this kind beyond the generic rules (grace periods, GC default, spec finalizers). */
  deletion?: DeletionRules;
  /** metadata.name rule returning Kubernetes' messages; default DNS-1123 subdomain (Namespace: label, Service: DNS-1035). */
  nameRule?(name: string): string[];
  /** A kind whose objects are not stored (ComponentStatus, computed on every read) brings its own store. */
  store?(def: ResourceDefinition, services: Services): ResourceStore;
  /**
   * This definition is one more group version of an object set stored as another definition (its
   * storage version): same keys, same objects, converted on the way in and out. Absent: the
   * definition is its own storage version. `servedAt()` (registry/versions.ts) builds one.
   */
  storedAs?: StoredAs;
}

/**
 * Where a served group version keeps its objects: the storage version's resource, whose bytes carry
 * its apiVersion (Kubernetes' storage version), and how objects convert between the two.
 */
export interface StoredAs {
  group: string;
  version: string;
  plural: string;
  /** Between this version and the storage version; absent: the same fields, only apiVersion differs. */
  conversion?: Conversion;
}

/**
 * Field changes between a served version and its storage version, in place on a decoded object
 * (apiVersion and kind are the registry's business). Kubernetes' conversion functions, per pair.
 */
export interface Conversion {
  toStorage(obj: KubeObject): void;
  fromStorage(obj: KubeObject): void;
}

/**
 * What a custom resource brings (registry/crd/): its schema (for OpenAPI), how server-side apply merges
 * its lists, and the defaults applied to objects read from storage. Custom resources are JSON only
 * (no protobuf) and take json, merge and apply patches, never strategic merge, as kube-apiserver serves them.
 */
export interface CustomResource {
  /** The version's openAPIV3Schema. */
  schema?: object;
  /** x-kubernetes-list-type / -list-map-keys of the list at `path` (field names from the root); `default`: the built-in rules (metadata). */
  listRule(path: readonly string[]): ListRule | { type: 'default' };
  /** Applied to every object read from storage (defaults added to the schema after the object was stored). */
  onRead?(obj: KubeObject): void;
}

/**
 * What a kind does after its own writes, as Kubernetes' store hooks. Not run on dry runs. A hook that
 * writes answers what it wrote: that, not the stored object, is the client's answer.
 */
export interface Hooks {
  /** After a create is stored (also one made by server-side apply). */
  afterCreate?(created: Written, ctx: RequestContext, services: Services): Promise<Written | void>;
  /**
   * A write's last check before it is stored, given the object as it would be stored and the one it
   * replaces (undefined on a create); throws to refuse. Runs on dry runs too. Kubernetes'
   * policy-based RBAC storage (escalation checks) sits here, as would an admission plugin of one kind.
   */
  admit?(obj: KubeObject, old: KubeObject | undefined, ctx: RequestContext, services: Services): Promise<void>;
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
  /** Defaults and clearing of fields the client may not set (e.g. status on create); `ctx` names the requester (a CSR records it). */
  prepareForCreate?(obj: KubeObject, ctx?: RequestContext): void;
  /** Called with the incoming object and the stored one; e.g. copy status from old on a main-resource PUT. */
  prepareForUpdate?(obj: KubeObject, old: KubeObject): void;
  validate?(obj: KubeObject): FieldError[];
  /** Rules for a create only (beside `validate`): what an update checks against the stored object instead. */
  validateCreate?(obj: KubeObject): FieldError[];
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

/** Kubernetes' RESTGracefulDeleteStrategy and GarbageCollectionDeleteStrategy, as data. */
export interface DeletionRules {
  /** Seconds this delete waits before the object may be removed (Pod); 0 or absent deletes at once. */
  gracePeriod?(obj: KubeObject, options: DeleteOptions): number;
  /** Policy when the request names none and no GC finalizer says otherwise (v1 ReplicationController: Orphan). */
  defaultPropagation?: 'Orphan' | 'Background';
  /** Finalizers held outside metadata (Namespace spec.finalizers): the object stays while this is true. */
  heldBy?(obj: KubeObject): boolean;
  /** Finalizers added when deletion starts (CustomResourceDefinition: customresourcecleanup.apiextensions.k8s.io). */
  finalizers?: readonly string[];
  /** Applied when deletion starts (Namespace: status.phase Terminating). */
  onDeleting?(obj: KubeObject): void;
  /** Why this request may not delete this object (403 Forbidden): the namespaces the server itself needs, another node's pod. */
  undeletable?(obj: KubeObject, ctx: RequestContext): string | undefined;
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

/**
 * What subresource behaviours, hooks, review answers and kind-provided stores may use beyond their
 * own object: the other kinds, and the server's parts (the registry's options fill it in).
 */
export interface Services {
  /** Another kind's store, found the way the router finds it. */
  find(group: string, version: string, plural: string): ResourceStore | undefined;
  /** Every definition served now (APIService lists their group versions). */
  definitions?(): readonly ResourceDefinition[];
  /** Signs ServiceAccount tokens; absent: TokenRequest is not served. */
  tokens?: TokenIssuer;
  /** PEM of the CA clients verify this server with (service-account-token Secrets carry it as `ca.crt`). */
  rootCa?: string;
  /** TokenReview: the token's user for `audiences` (default: this API server's); absent when the server authenticates nobody. */
  reviewToken?(token: string, audiences?: readonly string[]): Promise<{ user: UserInfo; audiences: string[] } | undefined>;
  /** Health of this server's components (ComponentStatus). */
  componentStatuses(): Promise<readonly ComponentHealth[]>;
  /**
   * The server's authorizer chain (the review kinds answer from it; the RBAC kinds ask it for `bind`
   * and `escalate`); absent when the registry runs without one, and then nothing is refused for
   * authorization.
   */
  authorizer?: Authorizer;
  /** The node agents' servers (pods/log asks them); absent: no node is reached. */
  kubelet?: KubeletConnection;
  /** How pods' ports are reached (port-forward, pods/proxy, services/proxy); absent: they cannot be. */
  podNetwork?: PodNetwork;
  /** The nodes' and pods' usage the metrics API serves (src/metrics/); absent: it serves none. */
  resourceMetrics?: ResourceMetricsSource;
}

/** CPU (nanocores, averaged over the window) and memory (working set bytes) at `timestamp`. */
export interface UsagePoint {
  timestamp: number;
  windowMs: number;
  cpuNanoCores: number;
  memoryBytes: number;
}

export type NodeUsagePoint = UsagePoint & { name: string };

export interface PodUsagePoint {
  namespace: string;
  name: string;
  timestamp: number;
  windowMs: number;
  containers: { name: string; cpuNanoCores: number; memoryBytes: number }[];
}

/** Where metrics.k8s.io's NodeMetrics and PodMetrics come from (metrics-server's store). */
export interface ResourceMetricsSource {
  nodes(): Promise<readonly NodeUsagePoint[]>;
  pods(): Promise<readonly PodUsagePoint[]>;
}

/** How the API server reaches a node's agent (src/node/kubelet-client.ts), as kube-apiserver reaches kubelets. */
export interface KubeletConnection {
  /** An HTTPS request to the node's agent, answered whatever its status; rejects when the agent cannot be reached. */
  request(node: KubeObject, method: string, path: string): Promise<IncomingMessage>;
  /** An upgrade request to the node's agent (exec, attach): the 101 and the switched connection, or the agent's refusal. */
  upgrade?(node: KubeObject, method: string, path: string, headers: Record<string, string>): Promise<{ response: IncomingMessage; socket?: Duplex; head?: Buffer }>;
}

/**
 * The API server's way to a pod's ports, provided by the node agent (tunnelled to the node that runs
 * the pod, so it works across machines). Without one, port-forward answers as kube-apiserver does
 * for a node it cannot reach and the proxies answer 503.
 */
export interface PodNetwork {
  /**
   * A TCP connection to `port` of `pod` (the stored object, scheduled: `spec.nodeName` is set).
   * Reject when it cannot be made; a Node network error `code` (ECONNREFUSED, ETIMEDOUT, EHOSTUNREACH…)
   * reaches the client worded as Go words it, any other error as "unable to connect" (no message of
   * the dialer's is shown). The stream should allow half-open connections (`allowHalfOpen: true`):
   * a port-forward client may finish sending long before the pod finishes answering.
   */
  dial(pod: KubeObject, port: number): Promise<Duplex>;
}

/** One component's health, as ComponentStatus reports it. */
export interface ComponentHealth {
  name: string;
  healthy: boolean;
  message?: string;
  error?: string;
}

/** The object a review kind answers with (may throw an ApiError for a question it refuses). */
export type ReviewAnswer = (obj: KubeObject, services: Services, ctx: RequestContext) => KubeObject | Promise<KubeObject>;

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

/** Signs service account tokens (auth/service-account-tokens.ts); the registry's TokenRequest uses it. */
export interface TokenIssuer {
  issue(account: { namespace: string; name: string; uid: string }, audiences: readonly string[], seconds: number, bound?: BoundObject): IssuedToken;
}

/** `apps/v1` or `v1` for the core group. */
export const groupVersion = (def: Pick<ResourceDefinition, 'group' | 'version'>): string =>
  def.group ? `${def.group}/${def.version}` : def.version;
