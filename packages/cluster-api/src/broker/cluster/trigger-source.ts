/**
 * The TriggerSource of the cluster API: Brokers, Triggers, Channels, InMemoryChannels and
 * Subscriptions from informers on Knative's CRDs (each
 * followed while its CRD serves it), handed on as complete snapshots in the broker's defaulted view,
 * and statuses written through the `status` subresource.
 *
 * A snapshot is passed only when it is complete (every CRD's state known, every served kind listed):
 * the data plane deletes a Trigger's progress when it is missing from one. Changes arriving together
 * (a relist, a burst of applies) make one snapshot. A status-only change makes none: the broker
 * wrote it, and nothing it computes depends on it.
 */
import { isNotFound, KubeApiError, type KubeClient, type ResourceType } from '@func/kube-client';
import type { Logger } from '../metrics.js';
import { type Channel, type ChannelKind, ChannelKinds, type Subscription } from '../channel/types.js';
import type { BrokerConfig, StatusKind, TriggerSource } from '../source.js';
import type { Broker, Trigger } from '../types.js';
import { defaultBroker, defaultSubscription, defaultTrigger } from './defaults.js';
import { CustomResourceFeed, type FeedOptions } from './feed.js';
import { BROKER_CRD, BrokerResources, SUBSCRIPTION_CRD, TRIGGER_CRD } from './resources.js';

type Obj = Broker | Trigger | Channel | Subscription;

const TYPES: Record<StatusKind, ResourceType> = {
  Broker: BrokerResources.brokers,
  Trigger: BrokerResources.triggers,
  Channel: BrokerResources.channels,
  InMemoryChannel: BrokerResources.inmemorychannels,
  Subscription: BrokerResources.subscriptions,
};

/** Key order aside, the same JSON value: a status read back may order its keys differently. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

export interface ApiTriggerSourceOptions {
  readonly logger: Logger;
  /** Field manager of status writes. */
  readonly fieldManager?: string;
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
}

export class ApiTriggerSource implements TriggerSource {
  private readonly feeds: Record<StatusKind, CustomResourceFeed<Obj>>;
  private readonly listeners = new Set<(config: BrokerConfig) => void>();
  private last: BrokerConfig | undefined;
  private pending: NodeJS.Immediate | undefined;

  constructor(private readonly client: KubeClient, private readonly options: ApiTriggerSourceOptions) {
    const feed: FeedOptions = {
      changed: () => this.schedule(),
      onError: (what, err) => options.logger('warn', 'broker watch failed, retrying', { what, error: (err as Error).message }),
      minBackoffMs: options.minBackoffMs,
      maxBackoffMs: options.maxBackoffMs,
    };
    const crds: Record<StatusKind, string> = {
      Broker: BROKER_CRD, Trigger: TRIGGER_CRD, Subscription: SUBSCRIPTION_CRD,
      Channel: ChannelKinds.Channel.crd, InMemoryChannel: ChannelKinds.InMemoryChannel.crd,
    };
    this.feeds = Object.fromEntries((Object.keys(crds) as StatusKind[]).map((k) => [k, new CustomResourceFeed<Obj>(client, crds[k], TYPES[k], feed)])) as Record<StatusKind, CustomResourceFeed<Obj>>;
  }

  start(): this {
    for (const f of Object.values(this.feeds)) f.start();
    return this;
  }

  /** True once a complete snapshot has been passed on. */
  get synced(): boolean {
    return this.last !== undefined;
  }

  subscribe(listener: (config: BrokerConfig) => void): () => void {
    this.listeners.add(listener);
    if (this.last) listener(this.last);
    return () => this.listeners.delete(listener);
  }

  private schedule(): void {
    this.pending ??= setImmediate(() => {
      this.pending = undefined;
      if (!Object.values(this.feeds).every((f) => f.ready)) return;
      const list = <T extends Obj>(kind: StatusKind) => this.feeds[kind].list() as T[];
      // A channel object is served as the kind it is, whatever its stored `kind` field says.
      const channels = (kind: ChannelKind) => list<Channel>(kind).map((c) => ({ ...c, kind }));
      this.last = {
        brokers: list<Broker>('Broker').map(defaultBroker),
        triggers: list<Trigger>('Trigger').map(defaultTrigger),
        channels: [...channels('Channel'), ...channels('InMemoryChannel')],
        subscriptions: list<Subscription>('Subscription').map(defaultSubscription),
      };
      for (const l of this.listeners) l(this.last);
    });
  }

  async writeStatus(kind: StatusKind, namespace: string, name: string, status: object): Promise<void> {
    const current = this.feeds[kind].get(namespace, name);
    // Gone (its deletion is on its way as a snapshot), or already so: nothing to write.
    if (!current || sameJson(current.status, status)) return;
    // The uid test keeps a status computed for a deleted object off one recreated under its name.
    const patch = [
      { op: 'test', path: '/metadata/uid', value: current.metadata.uid },
      { op: 'add', path: '/status', value: status },
    ];
    const type = TYPES[kind];
    try {
      await this.client.patch(type, name, patch, { namespace, subresource: 'status', type: 'json', fieldManager: this.options.fieldManager ?? 'broker' });
    } catch (err) {
      if (isNotFound(err) || (await this.replaced(err, type, current))) return;
      throw err;
    }
  }

  /** A 422 from the uid test (not from the status itself): the object was deleted and made again. */
  private async replaced(err: unknown, type: ResourceType, current: Obj): Promise<boolean> {
    if (!(err instanceof KubeApiError) || err.code !== 422) return false;
    const now = await this.client.get<Obj>(type, current.metadata.name, { namespace: current.metadata.namespace }).catch(() => undefined);
    return now?.metadata.uid !== current.metadata.uid;
  }

  async stop(): Promise<void> {
    if (this.pending) clearImmediate(this.pending);
    this.pending = undefined;
    this.listeners.clear();
    await Promise.all(Object.values(this.feeds).map((f) => f.stop()));
  }
}
