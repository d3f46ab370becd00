/**
 * Where the broker learns its Brokers and Triggers, and where it reports their status. The
 * API-backed source (a watch on brokers.eventing.knative.dev and triggers.eventing.knative.dev,
 * writing `/status`) implements this same interface; `StaticTriggerSource` is the in-memory one
 * tests and embedders use.
 */
import type { Channel, Subscription } from './channel/types.js';
import type { Broker, Trigger } from './types.js';
import { objectKey } from './types.js';

/** Everything the broker serves: a full snapshot, not a delta. */
export interface BrokerConfig {
  readonly brokers: readonly Broker[];
  readonly triggers: readonly Trigger[];
  /** Channels and InMemoryChannels (`messaging.knative.dev/v1`). */
  readonly channels?: readonly Channel[];
  readonly subscriptions?: readonly Subscription[];
}

/** The kinds a status is written for. */
export type StatusKind = 'Broker' | 'Trigger' | Channel['kind'] | 'Subscription';

export interface TriggerSource {
  /**
   * Calls `listener` with the complete current configuration once it is known (an API-backed
   * source: after its first list), then again after every change. Only a complete snapshot may be
   * passed: a Trigger missing from it is deleted, with its consumer and progress. Returns a
   * function that stops the calls.
   */
  subscribe(listener: (config: BrokerConfig) => void): () => void;
  /** Writes a computed status (the `/status` subresource). Called only when it changed. */
  writeStatus?(kind: StatusKind, namespace: string, name: string, status: object): Promise<void>;
}

type Obj = Broker | Trigger | Channel | Subscription;

/** The kind of an object given to StaticTriggerSource: its `kind`, else a Trigger has `spec.subscriber`. */
function kindOf(o: Obj): StatusKind {
  if (o.kind === 'Channel' || o.kind === 'InMemoryChannel' || o.kind === 'Subscription') return o.kind;
  return o.spec && 'subscriber' in o.spec ? 'Trigger' : 'Broker';
}

/** An in-memory TriggerSource: `apply` and `remove` objects; statuses written land on them. */
export class StaticTriggerSource implements TriggerSource {
  private readonly objects = new Map<StatusKind, Map<string, Obj>>();
  private readonly listeners = new Set<(config: BrokerConfig) => void>();
  private readonly statusWaiters = new Set<() => void>();

  constructor(objects: readonly Obj[] = []) {
    for (const o of objects) this.put(o);
  }

  private of(kind: StatusKind): Map<string, Obj> {
    let m = this.objects.get(kind);
    if (!m) this.objects.set(kind, (m = new Map()));
    return m;
  }

  private put(o: Obj): void {
    this.of(kindOf(o)).set(objectKey(o.metadata), o);
  }

  /** Creates or replaces objects, bumping `metadata.generation`. */
  apply(...objects: Obj[]): void {
    for (const o of objects) {
      const before = this.of(kindOf(o)).get(objectKey(o.metadata));
      const generation = before?.metadata.generation ?? 0;
      this.put({ ...o, metadata: { ...o.metadata, generation: generation + 1 }, status: before?.status } as Obj);
    }
    this.notify();
  }

  remove(kind: StatusKind, namespace: string, name: string): void {
    this.of(kind).delete(`${namespace}/${name}`);
    this.notify();
  }

  broker(namespace: string, name: string): Broker | undefined {
    return this.of('Broker').get(`${namespace}/${name}`) as Broker | undefined;
  }

  trigger(namespace: string, name: string): Trigger | undefined {
    return this.of('Trigger').get(`${namespace}/${name}`) as Trigger | undefined;
  }

  /** A Channel, InMemoryChannel or Subscription as last applied, with the status written for it. */
  get<T extends Obj>(kind: StatusKind, namespace: string, name: string): T | undefined {
    return this.of(kind).get(`${namespace}/${name}`) as T | undefined;
  }

  subscribe(listener: (config: BrokerConfig) => void): () => void {
    this.listeners.add(listener);
    listener(this.snapshot());
    return () => this.listeners.delete(listener);
  }

  async writeStatus(kind: StatusKind, namespace: string, name: string, status: object): Promise<void> {
    const map = this.of(kind);
    const o = map.get(`${namespace}/${name}`);
    if (o) map.set(`${namespace}/${name}`, { ...o, status } as Obj);
    for (const w of [...this.statusWaiters]) w();
  }

  /** Resolves when `check` holds, re-checked after every status write (tests). */
  until(check: (source: this) => boolean, timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter = () => {
        if (!check(this)) return;
        this.statusWaiters.delete(waiter);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.statusWaiters.delete(waiter);
        reject(new Error(`status condition not reached in ${timeoutMs} ms: ${JSON.stringify(this.snapshot(), null, 1).slice(0, 4000)}`));
      }, timeoutMs);
      this.statusWaiters.add(waiter);
      waiter();
    });
  }

  private snapshot(): BrokerConfig {
    const list = <T>(kind: StatusKind) => [...this.of(kind).values()] as T[];
    return { brokers: list('Broker'), triggers: list('Trigger'), channels: [...list<Channel>('Channel'), ...list<Channel>('InMemoryChannel')], subscriptions: list('Subscription') };
  }

  private notify(): void {
    const config = this.snapshot();
    for (const l of this.listeners) l(config);
  }
}
