/**
 * The client: verbs over any resource type (get, list, create, update, delete, patch in all four
 * kinds, server-side apply), the subresources controllers and agents use, watch, and raw requests.
 * Built on one Transport (keep-alive) per client; share a client between informers.
 */
import type { IncomingMessage } from 'node:http';
import { loadConnection, type Connection, type LoadOptions } from './kubeconfig.js';
import { apiVersionOf, type PathParts, resourcePath, Resources, type ResourceType } from './resources.js';
import { type Query, type RequestOptions, type Response, Transport } from './transport.js';
import type { KubeList, KubeObject, WatchEvent } from './types.js';
import { watchStream, type WatchOptions } from './watch.js';

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
}

export interface WriteOptions {
  namespace?: string;
  fieldManager?: string;
  dryRun?: boolean;
}

export interface DeleteOptions {
  namespace?: string;
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export const PatchTypes = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;
export type PatchType = keyof typeof PatchTypes;

export interface PatchOptions extends WriteOptions {
  type: PatchType;
  subresource?: string;
  /** Server-side apply only: take ownership of conflicting fields. */
  force?: boolean;
}

export interface ApplyOptions extends WriteOptions {
  fieldManager: string;
  force?: boolean;
  subresource?: string;
}

export interface LogOptions {
  namespace?: string;
  container?: string;
  follow?: boolean;
  tailLines?: number;
  sinceSeconds?: number;
  timestamps?: boolean;
  previous?: boolean;
  limitBytes?: number;
  signal?: AbortSignal;
}

const dryRun = (o?: { dryRun?: boolean }) => (o?.dryRun ? 'All' : undefined);
const parse = <T>(res: Response): T => JSON.parse(res.body) as T;

export class KubeClient {
  readonly transport: Transport;
  /** The namespace of the kubeconfig context (or in-cluster), for namespaced calls that name none. */
  readonly namespace: string;

  constructor(readonly connection: Connection) {
    this.transport = new Transport(connection);
    this.namespace = connection.namespace;
  }

  /** kubectl's loading rules: `--kubeconfig`, `KUBECONFIG`, `~/.kube/config`, in-cluster. */
  static fromKubeconfig(options: LoadOptions = {}): KubeClient {
    return new KubeClient(loadConnection(options));
  }

  path(type: ResourceType, parts: PathParts): string {
    return resourcePath(type, { ...parts, namespace: type.namespaced ? (parts.namespace ?? this.namespace) : undefined });
  }

  raw(opts: RequestOptions): Promise<Response> {
    return this.transport.request(opts);
  }

  private async call<T>(method: string, type: ResourceType, parts: PathParts, extra: Omit<RequestOptions, 'method' | 'path'> = {}): Promise<T> {
    const what = `${method.toLowerCase()} ${type.plural}${parts.name ? `/${parts.name}` : ''}${parts.subresource ? `/${parts.subresource}` : ''}`;
    return parse<T>(await this.transport.request({ method, path: this.path(type, parts), what, ...extra }));
  }

  get<T = KubeObject>(type: ResourceType, name: string, opts: { namespace?: string } = {}): Promise<T> {
    return this.call<T>('GET', type, { name, namespace: opts.namespace });
  }

  list<T = KubeObject>(type: ResourceType, opts: ListOptions = {}): Promise<KubeList<T>> {
    const { namespace, ...query } = opts;
    return this.call<KubeList<T>>('GET', type, { namespace }, { query: query as Query });
  }

  /** Every page of a list (limit/continue), and the resourceVersion of the first page. */
  async listAll<T = KubeObject>(type: ResourceType, opts: ListOptions = {}): Promise<KubeList<T>> {
    const first = await this.list<T>(type, opts);
    const items = [...first.items];
    for (let cont = first.metadata.continue; cont; ) {
      const page = await this.list<T>(type, { ...opts, continue: cont });
      items.push(...page.items);
      cont = page.metadata.continue;
    }
    return { ...first, metadata: { resourceVersion: first.metadata.resourceVersion }, items };
  }

  /** POST of an object; with `subresource`, of a body to object `name`'s subresource (binding, eviction, token), sent as it is. */
  create<T extends KubeObject>(type: ResourceType, obj: T, opts: WriteOptions & { name?: string; subresource?: string } = {}): Promise<T> {
    const namespace = opts.namespace ?? obj.metadata?.namespace;
    const parts = opts.subresource ? { namespace, name: opts.name ?? nameOf(obj), subresource: opts.subresource } : { namespace };
    return this.call<T>('POST', type, parts, { body: opts.subresource ? obj : withTypeMeta(type, obj), query: { fieldManager: opts.fieldManager, dryRun: dryRun(opts) } });
  }

  update<T extends KubeObject>(type: ResourceType, obj: T, opts: WriteOptions & { subresource?: string } = {}): Promise<T> {
    return this.call<T>('PUT', type, { name: nameOf(obj), namespace: opts.namespace ?? obj.metadata?.namespace, subresource: opts.subresource }, { body: withTypeMeta(type, obj), query: { fieldManager: opts.fieldManager, dryRun: dryRun(opts) } });
  }

  updateStatus<T extends KubeObject>(type: ResourceType, obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.update(type, obj, { ...opts, subresource: 'status' });
  }

  delete<T = KubeObject>(type: ResourceType, name: string, opts: DeleteOptions = {}): Promise<T> {
    const body = { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: opts.propagationPolicy, gracePeriodSeconds: opts.gracePeriodSeconds, preconditions: opts.preconditions, dryRun: opts.dryRun ? ['All'] : undefined };
    return this.call<T>('DELETE', type, { name, namespace: opts.namespace }, { body });
  }

  patch<T = KubeObject>(type: ResourceType, name: string, patch: unknown, opts: PatchOptions): Promise<T> {
    const query = { fieldManager: opts.fieldManager, force: opts.type === 'apply' && opts.force ? true : undefined, dryRun: dryRun(opts) };
    return this.call<T>('PATCH', type, { name, namespace: opts.namespace, subresource: opts.subresource }, { body: patch, contentType: PatchTypes[opts.type], query });
  }

  /** Server-side apply: the object (JSON is YAML) as the field manager's whole intent. */
  apply<T extends KubeObject>(type: ResourceType, obj: T, opts: ApplyOptions): Promise<T> {
    return this.patch<T>(type, nameOf(obj), withTypeMeta(type, obj), { ...opts, namespace: opts.namespace ?? obj.metadata?.namespace, type: 'apply' });
  }

  getScale(type: ResourceType, name: string, opts: { namespace?: string } = {}): Promise<KubeObject & { spec?: { replicas?: number } }> {
    return this.call('GET', type, { name, namespace: opts.namespace, subresource: 'scale' });
  }

  scale(type: ResourceType, name: string, replicas: number, opts: WriteOptions = {}): Promise<KubeObject> {
    return this.patch(type, name, { spec: { replicas } }, { ...opts, type: 'merge', subresource: 'scale' });
  }

  /** pods/binding: what a scheduler writes to place a pod on a node. */
  bind(pod: string, node: string, opts: { namespace?: string } = {}): Promise<KubeObject> {
    const namespace = opts.namespace ?? this.namespace;
    const body = { apiVersion: 'v1', kind: 'Binding', metadata: { name: pod, namespace }, target: { apiVersion: 'v1', kind: 'Node', name: node } };
    return this.create(Resources.pods, body, { name: pod, namespace, subresource: 'binding' });
  }

  /** pods/eviction (policy/v1 Eviction): a delete that respects PodDisruptionBudgets. */
  evict(pod: string, opts: DeleteOptions = {}): Promise<KubeObject> {
    const namespace = opts.namespace ?? this.namespace;
    const { namespace: _ns, ...deleteOptions } = opts;
    const body = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace }, deleteOptions };
    return this.create(Resources.pods, body, { name: pod, namespace, subresource: 'eviction' });
  }

  /** pods/log as a byte stream (follow keeps it open until the container ends or `signal` aborts). */
  logs(pod: string, opts: LogOptions = {}): Promise<IncomingMessage> {
    const { namespace, signal, ...query } = opts;
    const path = this.path(Resources.pods, { name: pod, namespace, subresource: 'log' });
    return this.transport.stream({ method: 'GET', path, query: query as Query, accept: '*/*', signal, what: `logs of pod ${pod}` });
  }

  /** A watch as an async iterator of events; see watch.ts. */
  watch<T = KubeObject>(type: ResourceType, opts: WatchOptions = {}): AsyncIterableIterator<WatchEvent<T>> {
    return watchStream<T>(this, type, opts);
  }

  close(): void {
    this.transport.close();
  }
}

function nameOf(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new Error('The object has no metadata.name');
  return name;
}

/** Fills apiVersion and kind from the type when the caller left them out (apply needs them). */
function withTypeMeta<T extends KubeObject>(type: ResourceType, obj: T): T {
  return { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(type), kind: obj.kind ?? type.kind };
}
