/**
 * One ApiServerSource's receive adapter (Knative's pkg/adapter/apiserver), run in this process as
 * the ServiceAccount the source names, so RBAC applies to what it reads: for each of its resources
 * a list (not sent: Knative's reflector store drops the initial Replace) then a watch from that
 * list's resourceVersion, in the source's namespace, with the resource's label selector; each
 * ADDED / MODIFIED / DELETED object that passes the owner filter is sent to the sink (emit.ts). A
 * watch that ends or fails is listed and watched again after a second.
 */
import type { KubeObject } from '../../api/meta.js';
import type { ApiClient } from '../../client/interface.js';
import { inNamespace } from '../../controllers/shared.js';
import { selectorString } from '../../registry/kinds/label-selector.js';
import { emit, failure, withContext } from '../emit.js';
import { findResource } from '../resources.js';
import { apiServerEvent, type Change, type Mode } from './event.js';
import type { Router } from '../../broker/dispatch/cluster-hosts.js';

export interface ResourceSpec {
  apiVersion?: string;
  kind?: string;
  selector?: unknown;
}

export interface AdapterSpec {
  namespace: string;
  name: string;
  mode: Mode;
  resources: ResourceSpec[];
  owner?: { apiVersion?: string; kind?: string };
  ceOverrides?: { extensions?: Record<string, string> };
  sinkUri: string;
  /** The event source: the API server's URL. */
  source: string;
}

const RetryMs = 1000;

/** Knative's owner filter: with `owner` set, only objects one of whose ownerReferences is of that apiVersion and kind. */
const ownedAsAsked = (o: KubeObject, owner: AdapterSpec['owner']): boolean =>
  !owner?.kind || (o.metadata.ownerReferences ?? []).some((r) => r.kind === owner.kind && (!owner.apiVersion || r.apiVersion === owner.apiVersion));

export class ApiServerAdapter {
  private readonly watches: { close(): void }[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  /** Sends go one after another, in the order the watch saw the changes (Knative's delegate sends inline). */
  private sending: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly client: ApiClient,
    readonly spec: AdapterSpec,
    private readonly log: (entry: Record<string, unknown>) => void = () => undefined,
    private readonly router?: Router,
  ) {}

  start(): this {
    for (const r of this.spec.resources) void this.follow(r);
    return this;
  }

  private later(fn: () => void): void {
    if (this.stopped) return;
    const t = setTimeout(() => (this.timers.delete(t), fn()), RetryMs).unref();
    this.timers.add(t);
  }

  private async follow(r: ResourceSpec): Promise<void> {
    if (this.stopped) return;
    const store = findResource(this.client, r.apiVersion, r.kind);
    if (!store) return this.later(() => void this.follow(r));
    const ctx = inNamespace(store.definition.namespaced ? this.spec.namespace : undefined);
    const labelSelector = r.selector ? selectorString(r.selector) : undefined;
    try {
      const list = await store.list(ctx, { ...(labelSelector && { labelSelector }) });
      if (this.stopped) return;
      let ended = false;
      const again = () => ended || ((ended = true), this.later(() => void this.follow(r)));
      const handle = await store.watch(ctx, { ...(labelSelector && { labelSelector }), resourceVersion: list.metadata.resourceVersion }, {
        onEvent: (e) => {
          const change: Change | undefined = e.type === 'ADDED' ? 'add' : e.type === 'MODIFIED' ? 'update' : e.type === 'DELETED' ? 'delete' : undefined;
          if (change && ownedAsAsked(e.object, this.spec.owner)) this.send(change, e.object);
        },
        onError: again,
        onEnd: again,
      });
      if (this.stopped) handle.close();
      else this.watches.push(handle);
    } catch (err) {
      this.log({ level: 'warn', msg: 'apiserversource watch failed, retrying', namespace: this.spec.namespace, name: this.spec.name, resource: store.definition.plural, error: (err as Error).message });
      this.later(() => void this.follow(r));
    }
  }

  private send(change: Change, o: KubeObject): void {
    const { attributes, data } = apiServerEvent(this.spec.source, this.spec.mode, change, o);
    const event = withContext(attributes, data, this.spec.ceOverrides);
    this.sending = this.sending.then(() => emit(this.spec.sinkUri, event, undefined, this.router)).then((outcome) => {
      const why = failure(outcome);
      if (why) this.log({ level: 'warn', msg: 'apiserversource event not delivered', namespace: this.spec.namespace, name: this.spec.name, id: event.attributes.id, sink: this.spec.sinkUri, error: why });
    });
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.watches.splice(0)) w.close();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
