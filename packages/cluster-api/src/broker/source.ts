/**
 * Where the broker learns its Brokers and Triggers, and where it reports their status. The
 * API-backed source (a watch on brokers.eventing.knative.dev and triggers.eventing.knative.dev,
 * writing `/status`) implements this same interface; `StaticTriggerSource` is the in-memory one
 * tests and embedders use.
 */
import type { Broker, BrokerStatus, Trigger, TriggerStatus } from './types.js';
import { objectKey } from './types.js';

/** Everything the broker serves: a full snapshot, not a delta. */
export interface BrokerConfig {
  readonly brokers: readonly Broker[];
  readonly triggers: readonly Trigger[];
}

export interface TriggerSource {
  /**
   * Calls `listener` with the complete current configuration once it is known (an API-backed
   * source: after its first list), then again after every change. Only a complete snapshot may be
   * passed: a Trigger missing from it is deleted, with its consumer and progress. Returns a
   * function that stops the calls.
   */
  subscribe(listener: (config: BrokerConfig) => void): () => void;
  /** Writes a computed status (the `/status` subresource). Called only when it changed. */
  writeStatus?(kind: 'Broker' | 'Trigger', namespace: string, name: string, status: BrokerStatus | TriggerStatus): Promise<void>;
}

type Obj = Broker | Trigger;

/** An in-memory TriggerSource: `apply` and `remove` objects; statuses written land on them. */
export class StaticTriggerSource implements TriggerSource {
  private readonly brokers = new Map<string, Broker>();
  private readonly triggers = new Map<string, Trigger>();
  private readonly listeners = new Set<(config: BrokerConfig) => void>();
  private readonly statusWaiters = new Set<() => void>();

  constructor(objects: readonly Obj[] = []) {
    for (const o of objects) this.put(o);
  }

  private put(o: Obj): void {
    if ('spec' in o && o.spec && 'subscriber' in o.spec) this.triggers.set(objectKey(o.metadata), o as Trigger);
    else this.brokers.set(objectKey(o.metadata), o as Broker);
  }

  /** Creates or replaces objects (a Trigger has `spec.subscriber`), bumping `metadata.generation`. */
  apply(...objects: Obj[]): void {
    for (const o of objects) {
      const key = objectKey(o.metadata);
      const before = this.brokers.get(key) ?? this.triggers.get(key);
      const generation = before?.metadata.generation ?? 0;
      this.put({ ...o, metadata: { ...o.metadata, generation: generation + 1 }, status: before?.status } as Obj);
    }
    this.notify();
  }

  remove(kind: 'Broker' | 'Trigger', namespace: string, name: string): void {
    (kind === 'Broker' ? this.brokers : this.triggers).delete(`${namespace}/${name}`);
    this.notify();
  }

  broker(namespace: string, name: string): Broker | undefined {
    return this.brokers.get(`${namespace}/${name}`);
  }

  trigger(namespace: string, name: string): Trigger | undefined {
    return this.triggers.get(`${namespace}/${name}`);
  }

  subscribe(listener: (config: BrokerConfig) => void): () => void {
    this.listeners.add(listener);
    listener(this.snapshot());
    return () => this.listeners.delete(listener);
  }

  async writeStatus(kind: 'Broker' | 'Trigger', namespace: string, name: string, status: BrokerStatus | TriggerStatus): Promise<void> {
    const map: Map<string, Obj> = kind === 'Broker' ? this.brokers : this.triggers;
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
    return { brokers: [...this.brokers.values()], triggers: [...this.triggers.values()] };
  }

  private notify(): void {
    const config = this.snapshot();
    for (const l of this.listeners) l(config);
  }
}
