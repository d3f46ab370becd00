/**
 * The control loop: from each snapshot of Brokers and Triggers to streams, consumers, running
 * deliveries and written statuses. Runs are serialised; a change during a run schedules one more.
 * It also runs every `resyncMs`, so a stream the engine refused or a subscriber that did not resolve
 * is tried again without a change to the objects.
 *
 * A Trigger delivers only when its Broker is Ready, its filter and DeliverySpec are valid and its
 * subscriber and dead-letter sink resolve; otherwise it is paused with its consumer kept, and its
 * status says why. A Trigger that disappears loses its consumer; a Broker that disappears, its stream.
 * Channels and Subscriptions go through the same streams, workers and status writes
 * (channel/reconcile.ts).
 */
import { deliveryPolicy, deliveryProblems, type FieldProblem } from './delivery/policy.js';
import { type Program, TriggerWorker, type TriggerRef, type WorkerDeps } from './dispatch/worker.js';
import { compileFilter } from './filter/filters.js';
import { explainMismatch } from './debug/explain.js';
import type { CloudEvent } from './event/event.js';
import { resolveDestination, type SubscriberResolver } from './resolver.js';
import type { BrokerConfig, StatusKind, TriggerSource } from './source.js';
import { readyCondition } from './status/conditions.js';
import { brokerStatus, type Resolution, triggerStatus } from './status/status.js';
import { type Broker, objectKey, type Trigger } from './types.js';
import { reconcileChannels } from './channel/reconcile.js';
import type { Channel } from './channel/types.js';
import type { Labels } from './metrics.js';

export interface ReconcilerDeps extends WorkerDeps {
  readonly source: TriggerSource;
  readonly resolver: SubscriberResolver;
  /** The ingress URL of a stream (`ns/broker`, `<channel plural>/ns/name`), once the ingress listens. */
  readonly address: (stream: string) => string | undefined;
  readonly resyncMs: number;
}

const delay = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms).unref());

export type StreamState = { readonly ready: true } | { readonly ready: false; readonly message: string };

/** The durable consumer of a Trigger: a recreated Trigger (new uid) starts afresh. */
export function consumerName(t: Trigger): string {
  return `${objectKey(t.metadata)}${t.metadata.uid ? `@${t.metadata.uid}` : ''}`;
}

export class Reconciler {
  private config: BrokerConfig | undefined;
  private readonly streams = new Map<string, StreamState>();
  private readonly brokers = new Map<string, Broker>();
  /** InMemoryChannels by stream key, with the status last computed. */
  readonly channels = new Map<string, Channel>();
  /** Channels (no stream of their own: their backing channel's, channel/backing.ts) by `channels/<ns>/<name>`, with the status last computed. */
  readonly backedChannels = new Map<string, Channel>();
  private readonly workers = new Map<string, { stream: string; worker: TriggerWorker; status: string }>();
  private readonly written = new Map<string, string>();
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private cleaned = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(readonly deps: ReconcilerDeps) {
    this.timer = setInterval(() => this.schedule(), deps.resyncMs);
    this.timer.unref();
    this.unsubscribe.push(deps.source.subscribe((c) => this.apply(c)));
    if (deps.resolver.subscribe) this.unsubscribe.push(deps.resolver.subscribe(() => this.schedule()));
  }

  /** The state of a Broker's or channel's stream for the ingress: undefined when there is none. */
  stream(key: string): StreamState | undefined {
    return this.brokers.has(key) || this.channels.has(key) ? (this.streams.get(key) ?? { ready: false, message: 'not created yet' }) : undefined;
  }

  /** The Trigger `namespace/name` of the current snapshot. */
  trigger(namespace: string, name: string): Trigger | undefined {
    return this.config?.triggers.find((t) => t.metadata.namespace === namespace && t.metadata.name === name);
  }

  apply(config: BrokerConfig): void {
    this.config = config;
    this.schedule();
  }

  /** Resolves once the current snapshot has been reconciled (tests, start-up). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  schedule(): void {
    if (this.stopped || !this.config) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.reconcile(this.config)
      .catch((err) => this.deps.logger('error', 'reconcile failed', { error: (err as Error).message }))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.schedule();
        }
      });
  }

  private async reconcile(config: BrokerConfig): Promise<void> {
    const now = new Date().toISOString();
    const seen = new Set<string>();
    for (const b of config.brokers) {
      seen.add(objectKey(b.metadata));
      await this.reconcileBroker(b, now);
    }
    for (const key of [...this.brokers.keys()]) if (!seen.has(key)) await this.removeStream(key, 'Broker');
    const wanted = new Set<string>();
    for (const t of config.triggers) {
      wanted.add(consumerName(t));
      await this.reconcileTrigger(t, now);
    }
    await reconcileChannels(this, config, now, wanted);
    for (const [name, w] of [...this.workers]) if (!wanted.has(name)) await this.removeWorker(name, w.stream);
    await this.dropStaleConsumers(wanted);
  }

  /** The ready stream of the Broker or channel whose address `url` is, if this process serves one. */
  localStream(url: string): string | undefined {
    for (const [key, o] of [...this.brokers, ...this.channels]) if (o.status?.address?.url === url && this.streams.get(key)?.ready) return key;
    return undefined;
  }

  /** Creates the stream of `key` unless it is there; its state after. */
  async ensureStream(key: string): Promise<StreamState> {
    if (!this.streams.get(key)?.ready) {
      try {
        await this.deps.log.ensureStream(key);
        this.streams.set(key, { ready: true });
      } catch (err) {
        this.streams.set(key, { ready: false, message: (err as Error).message });
      }
    }
    return this.streams.get(key)!;
  }

  private async reconcileBroker(b: Broker, now: string): Promise<void> {
    const key = objectKey(b.metadata);
    await this.ensureStream(key);
    const dest = b.spec?.delivery?.deadLetterSink;
    const status = brokerStatus({
      broker: { ...b, status: this.previous('Broker', key) ?? b.status },
      address: this.deps.address(key),
      stream: this.streams.get(key)!,
      dispatcherReady: true,
      deadLetterSink: dest ? await resolveDestination(dest, b.metadata.namespace, this.deps.resolver) : undefined,
      deliveryProblems: deliveryProblems(b.spec?.delivery, 'spec.delivery'),
      now,
    });
    this.brokers.set(key, { ...b, status });
    await this.write('Broker', b.metadata.namespace, b.metadata.name, status);
  }

  /** A Broker or channel gone: its stream, its consumers' workers, what was written about it. */
  async removeStream(key: string, kind: StatusKind, objectKeyOf = key): Promise<void> {
    this.brokers.delete(key);
    this.channels.delete(key);
    this.backedChannels.delete(key);
    this.streams.delete(key);
    this.written.delete(`${kind}/${objectKeyOf}`);
    for (const [name, w] of [...this.workers]) if (w.stream === key) await this.removeWorker(name, key);
    await this.deps.log.deleteStream(key).catch((err) => this.deps.logger('warn', 'stream not deleted', { broker: key, error: (err as Error).message }));
  }

  private async reconcileTrigger(t: Trigger, now: string): Promise<void> {
    const ns = t.metadata.namespace;
    const brokerKey = `${ns}/${t.spec.broker}`;
    const broker = this.brokers.get(brokerKey);
    const filter = compileFilter(t.spec);
    const problems: FieldProblem[] = deliveryProblems(t.spec.delivery, 'spec.delivery');
    if (!t.spec.delivery && broker) problems.push(...deliveryProblems(broker.spec?.delivery, `Broker ${t.spec.broker} spec.delivery`));
    const subscriber = await resolveDestination(t.spec.subscriber ?? {}, ns, this.deps.resolver);
    const dlsDest = t.spec.delivery?.deadLetterSink ?? broker?.spec?.delivery?.deadLetterSink;
    const dls: Resolution | undefined = dlsDest ? await resolveDestination(dlsDest, ns, this.deps.resolver) : undefined;
    const brokerReady = readyCondition(broker?.status?.conditions)?.status === 'True';
    const deliverable = brokerReady && 'predicate' in filter && problems.length === 0 && 'uri' in subscriber && (!dls || 'uri' in dls);
    const program = deliverable
      ? {
          predicate: filter.predicate,
          subscriber: subscriber.uri,
          reply: { stream: brokerKey },
          ...(subscriber.endpoints ? { endpoints: subscriber.endpoints } : {}),
          explain: (attributes: CloudEvent['attributes']) => explainMismatch(t.spec, attributes),
          policy: deliveryPolicy(t.spec.delivery, broker!.spec?.delivery),
          ...(dls && 'uri' in dls ? { deadLetterSink: dls.uri } : {}),
        }
      : undefined;
    const key = objectKey(t.metadata);
    const about = { apiVersion: 'eventing.knative.dev/v1', kind: 'Trigger', namespace: ns, name: t.metadata.name, ...(t.metadata.uid ? { uid: t.metadata.uid } : {}) } as const;
    const programmed = await this.program(consumerName(t), brokerKey, { broker: brokerKey, trigger: key }, `Trigger/${key}`, program, about);
    const status = triggerStatus({
      trigger: { ...t, status: this.previous('Trigger', key) ?? t.status },
      broker,
      subscriber,
      deadLetterSink: dls,
      filterProblems: 'problems' in filter ? filter.problems : [],
      deliveryProblems: problems,
      programmed,
      now,
    });
    await this.write('Trigger', ns, t.metadata.name, status);
  }

  /** The delivery loop of consumer `name` on `stream`; `status` is the `Kind/ns/name` its object's status is written as; `about` the Trigger its failures are recorded on. */
  private worker(name: string, stream: string, labels: Labels, status: string, about?: TriggerRef): TriggerWorker {
    let w = this.workers.get(name);
    if (w && w.stream !== stream) {
      void w.worker.stop();
      w = undefined;
    }
    if (!w) {
      w = { stream, worker: new TriggerWorker(stream, name, labels, this.deps, about), status };
      this.workers.set(name, w);
    }
    return w.worker;
  }

  /**
   * Runs (or with no program, pauses) the deliveries of consumer `name` on `stream`: true once they
   * run, which is only once the consumer exists, so every event accepted from then on reaches it.
   */
  async program(name: string, stream: string, labels: Labels, status: string, program: Program | undefined, about?: TriggerRef): Promise<boolean> {
    if (!this.streams.get(stream)?.ready) {
      this.workers.get(name)?.worker.setProgram(undefined);
      return false;
    }
    const worker = this.worker(name, stream, labels, status, about);
    worker.setProgram(program);
    return program !== undefined && (await Promise.race([worker.consumerCreated.then(() => true), delay(5_000, false)]));
  }

  private async removeWorker(name: string, stream: string): Promise<void> {
    const w = this.workers.get(name);
    this.workers.delete(name);
    if (w) this.written.delete(w.status);
    await w?.worker.stop();
    await this.deps.log.deleteConsumer(stream, name).catch((err) => this.deps.logger('warn', 'consumer not deleted', { trigger: name, error: (err as Error).message }));
  }

  /** Consumers of Triggers deleted while no broker ran: found once per stream, then removed. */
  private async dropStaleConsumers(wanted: Set<string>): Promise<void> {
    for (const [key, state] of this.streams) {
      if (!state.ready || this.cleaned.has(key)) continue;
      try {
        for (const name of await this.deps.log.consumers(key)) if (!wanted.has(name)) await this.deps.log.deleteConsumer(key, name);
        this.cleaned.add(key);
      } catch (err) {
        this.deps.logger('warn', 'stale consumers not listed', { broker: key, error: (err as Error).message });
      }
    }
  }

  previous<S>(kind: string, key: string): S | undefined {
    const json = this.written.get(`${kind}/${key}`);
    return json === undefined ? undefined : (JSON.parse(json) as S);
  }

  async write(kind: StatusKind, namespace: string, name: string, status: object): Promise<void> {
    const key = `${kind}/${namespace}/${name}`;
    const json = JSON.stringify(status);
    if (this.written.get(key) === json) return;
    this.written.set(key, json);
    try {
      await this.deps.source.writeStatus?.(kind, namespace, name, status);
    } catch (err) {
      this.written.delete(key);
      this.deps.logger('warn', 'status not written', { kind, object: `${namespace}/${name}`, error: (err as Error).message });
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    for (const u of this.unsubscribe) u();
    await this.settled();
    await Promise.all([...this.workers.values()].map((w) => w.worker.stop()));
    this.workers.clear();
  }
}
