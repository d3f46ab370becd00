/**
 * The objects of one custom resource kind, for as long as its CRD serves them: an informer on the
 * CRD (by name) starts an informer on the kind once the CRD is Established with the version served,
 * and stops it when the CRD goes (or is being deleted), dropping its objects. So the broker may
 * start before Knative's CRDs are applied, and follows them being deleted and applied again.
 *
 * `ready` says whether `list()` is complete: the CRD's state is known, and when served, the kind's
 * first list is in. Only then may a snapshot be built from it.
 */
import { Informer, type KubeClient, type KubeObject, type ResourceType } from '@func/kube-client';
import { BrokerResources } from './resources.js';

interface Crd extends KubeObject {
  spec?: { versions?: { name?: string; served?: boolean }[] };
  status?: { conditions?: { type?: string; status?: string }[] };
}

/** Served: Established, not being deleted, and the version asked for is served. */
export function crdServes(crd: Crd | undefined, version: string): boolean {
  if (!crd || crd.metadata?.deletionTimestamp) return false;
  const established = crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  return Boolean(established && crd.spec?.versions?.some((v) => v.name === version && v.served));
}

/** Everything of an object but what its own status write and bookkeeping change. */
const shapeOf = (o: KubeObject): string => {
  const { resourceVersion: _rv, managedFields: _mf, ...meta } = (o.metadata ?? {}) as Record<string, unknown>;
  return JSON.stringify([meta, (o as { spec?: unknown }).spec]);
};

export interface FeedOptions {
  /** Called when `list()` or `ready` may have changed; not for status-only updates. */
  readonly changed: () => void;
  readonly onError: (what: string, err: unknown) => void;
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
}

/** `T`: the kind's JSON shape (objects are passed through as the API serves them). */
export class CustomResourceFeed<T> {
  private readonly crd: Informer<Crd>;
  private objects: Informer | undefined;
  private objectsSynced = false;
  private crdSynced = false;

  constructor(
    private readonly client: KubeClient,
    readonly crdName: string,
    private readonly type: ResourceType,
    private readonly options: FeedOptions,
  ) {
    this.crd = new Informer<Crd>(client, BrokerResources.crds, { fieldSelector: `metadata.name=${crdName}`, ...this.backoff(), onError: (e) => options.onError(`watch ${crdName}`, e) });
    const follow = () => this.follow();
    this.crd.on('add', follow).on('update', follow).on('delete', follow);
  }

  private backoff() {
    return { minBackoffMs: this.options.minBackoffMs ?? 200, maxBackoffMs: this.options.maxBackoffMs ?? 5_000 };
  }

  start(): this {
    this.crd.start();
    this.crd.synced.then(() => {
      this.crdSynced = true;
      this.follow();
      this.options.changed();
    }).catch((err: unknown) => this.options.onError(`follow ${this.crdName}`, err));
    return this;
  }

  get ready(): boolean {
    return this.crdSynced && (!this.objects || this.objectsSynced);
  }

  /** True while the CRD serves the kind (its objects are in `list()`). */
  get served(): boolean {
    return this.objects !== undefined;
  }

  list(): T[] {
    return (this.objects?.list() ?? []) as unknown as T[];
  }

  get(namespace: string, name: string): T | undefined {
    return this.objects?.get(name, namespace) as T | undefined;
  }

  private follow(): void {
    const serves = crdServes(this.crd.get(this.crdName), this.type.version);
    if (serves && !this.objects) this.startObjects();
    else if (!serves && this.objects) this.stopObjects();
  }

  private startObjects(): void {
    // namespace '': every namespace (the client's own namespace otherwise).
    const informer = new Informer(this.client, this.type, { namespace: '', ...this.backoff(), onError: (e) => this.options.onError(`watch ${this.type.plural}`, e) });
    this.objects = informer;
    this.objectsSynced = false;
    const changed = () => this.objects === informer && this.options.changed();
    informer.on('add', changed).on('delete', changed);
    informer.on('update', (obj, old) => (!old || shapeOf(obj) !== shapeOf(old)) && changed());
    informer.start();
    informer.synced.then(() => {
      if (this.objects !== informer) return;
      this.objectsSynced = true;
      this.options.changed();
    }).catch((err: unknown) => this.options.onError(`list ${this.type.plural}`, err));
    this.options.changed();
  }

  private stopObjects(): void {
    const informer = this.objects;
    this.objects = undefined;
    this.objectsSynced = false;
    informer?.stop().catch((err: unknown) => this.options.onError(`stop watching ${this.type.plural}`, err));
    this.options.changed();
  }

  async stop(): Promise<void> {
    const informer = this.objects;
    this.objects = undefined;
    await Promise.all([this.crd.stop(), informer?.stop()]);
  }
}
