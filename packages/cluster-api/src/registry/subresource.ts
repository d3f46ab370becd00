/**
 * A subresource is one entry of its kind's `subresources` map (Kubernetes' storage map:
 * `"pods/binding"`, `"replicationcontrollers/scale"` beside the `Store`): its verbs, the kind it
 * answers with, and its behaviour, one of four types the generic store knows how to run. The store
 * names no subresource; routes, discovery and protobuf negotiation read these entries.
 *
 * - view: GET / PUT / PATCH a view of the parent (status, scale, finalize); a write goes through the
 *   parent's one guaranteed update with the view's update rules.
 * - action: POST that acts on the parent through its store (binding; eviction would delete).
 * - create: POST answered with an object made from the parent, stored nowhere (TokenRequest).
 * - connect: the request is checked against the parent, then a handler takes the exchange over
 *   (log, exec, attach, portforward, proxy), an upgraded connection included.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { DeleteOptions, KubeObject } from '../api/meta.js';
import type { ResourceDefinition, Services, Strategy, Verb } from './definition.js';
import type { RequestContext, Written } from './rest.js';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface SubresourceDef {
  /** Verbs as discovery lists them, and the only ones the router lets through. */
  verbs: readonly Verb[];
  /** The kind it answers with when not its parent's (Scale, TokenRequest, Binding, PodExecOptions). */
  kind?: GroupVersionKind;
  behaviour: SubresourceBehaviour;
}

// The checked body's type is each behaviour module's own business; the store only passes it along.
export type SubresourceBehaviour = ViewBehaviour<any> | ActionBehaviour<any> | CreateBehaviour<any> | ConnectBehaviour;

/** What a view's `decode` knows of the request. */
export interface ViewRequest {
  /** The object's name from the path. */
  name: string;
  /** The namespace from the path. */
  namespace?: string;
  /** The parent's definition. */
  def: ResourceDefinition;
  /** The body is a patch applied to the current view (a PUT body otherwise). */
  patched: boolean;
}

export interface ViewBehaviour<V = KubeObject> {
  type: 'view';
  /**
   * Top-level fields only this view writes (status: `['status']`): cleared on create, kept from the
   * stored object by every other write, and the only fields its managedFields entries cover.
   */
  owns?: readonly string[];
  /** A create may set the fields this view owns (a kubelet registers its Node with its status); default: cleared on create. */
  keptOnCreate?: boolean;
  /** The update rules of a write through this view; default: the kind's own strategy. */
  strategy?: Strategy;
  /** What GET answers and what a PATCH applies to; default the parent itself (then server-side apply works through it too). */
  read?(parent: KubeObject, def: ResourceDefinition): KubeObject;
  /** A PUT body or a patched view, checked (400, 422): what it asks for, and the resourceVersion it names (none or '': no precondition). */
  decode(body: unknown, request: ViewRequest): { view: V; resourceVersion?: string };
  /** The parent the view asks for, before the update rules (prepareUpdate) run on it. */
  merge(view: V, old: KubeObject, def: ResourceDefinition): KubeObject;
}

/** What an action may do to its parent: the parent store's own operations, on this one object. */
export interface ParentStore {
  get(): Promise<KubeObject>;
  /** Compare-and-swap update that skips the update rules (retried on conflict, as every update). */
  update(next: (old: KubeObject) => KubeObject): Promise<Written>;
  delete(options: DeleteOptions): Promise<Written>;
}

export interface ActionBehaviour<T = unknown> {
  type: 'action';
  /** The POST body, checked before anything is read (400, 422). */
  check(body: unknown, name: string): T;
  /** Acts on the parent; answers what the client gets (201). */
  act(checked: T, parent: ParentStore, ctx: RequestContext, services: Services): Promise<KubeObject>;
}

export interface CreateBehaviour<T = unknown> {
  type: 'create';
  /** The POST body, checked before the parent is read (400, 422). */
  check(body: unknown, name: string): T;
  /** The object made for the parent (201); nothing is stored. */
  create(checked: T, parent: KubeObject, ctx: RequestContext, services: Services): KubeObject | Promise<KubeObject>;
}

export interface ConnectRequest {
  subresource: string;
  query: URLSearchParams;
  /** The name segment as the path gave it: `web:8080` for pods/proxy (see ConnectBehaviour.objectName). */
  id: string;
  /** The namespace from the path. */
  namespace?: string;
  /** The raw path after the subresource segment (`…/proxy/a/b/` → `/a/b/`); '' when nothing follows. */
  subpath: string;
}

/**
 * An HTTP/1.1 request that asked to switch protocols (`Connection: Upgrade`): its connection can be
 * taken over. Until `take()`, the handler may still answer through `res` (a refusal is a Status like
 * any other); after it, the connection and the bytes already read past the request head are the
 * handler's, which writes the 101 itself.
 */
export interface Upgrade {
  take(): { socket: Duplex; head: Buffer };
}

/**
 * Takes the exchange over once the request is admitted: writes the answer, streams, or upgrades
 * (`upgrade` is there only for a request that asked to switch protocols). A rejection before anything
 * was written is answered as a Status.
 */
export type ConnectHandler = (req: IncomingMessage, res: ServerResponse, upgrade?: Upgrade) => void | Promise<void>;

export interface ConnectBehaviour {
  type: 'connect';
  /**
   * The stored object a path's name segment addresses, when the segment says more than the name
   * (pods/proxy and services/proxy take `[scheme:]name[:port]`); throws the 400 for a malformed one.
   */
  objectName?(id: string): string;
  /** Segments may follow the subresource (`…/proxy/{path}`); otherwise such a path is 404. */
  takesPath?: boolean;
  /** Checks the request against the parent (throwing the ApiError kube-apiserver gives), then hands back what serves it. */
  connect(parent: KubeObject, request: ConnectRequest, services: Services): ConnectHandler | Promise<ConnectHandler>;
}

/** The entry `name` of a kind's subresources (own properties only: a path segment like `constructor` names none). */
export const subresourceOf = (def: Pick<ResourceDefinition, 'subresources'>, name: string): SubresourceDef | undefined =>
  def.subresources && Object.hasOwn(def.subresources, name) ? def.subresources[name] : undefined;
