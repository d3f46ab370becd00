/**
 * One Trigger's delivery loop over its durable consumer. Every event of the Broker's stream is
 * evaluated once against the Trigger's filter (a non-match is acked at once); a match is POSTed to
 * the subscriber. Per attempt (a documented pipeline, so longer than most functions here):
 *
 * 1. done → ack.
 * 2. reply → append the reply to the same stream (its TTL one lower; at 0 it is dropped and logged),
 *    then ack. An append that fails fails the attempt, which is retried like any other.
 * 3. retriable failure and attempts left → nak with the backoff of that retry number.
 * 4. otherwise → the dead-letter sink with the knativeerror* extensions (retried in place with the
 *    same policy), else dropped: counted and logged with the reason.
 *
 * A Trigger without a program (filter invalid, subscriber unresolved, Broker not ready) is paused:
 * its consumer stays where it is and its events wait.
 */
import { backoffMs, type DeliveryPolicy } from '../delivery/policy.js';
import { type CloudEvent, decodeRecord, encodeRecord, type LogRecord, TTL_EXTENSION } from '../event/event.js';
import type { Predicate } from '../filter/filters.js';
import type { Consumer, EventLog, LogMessage } from '../log/interface.js';
import type { BrokerMetrics, Labels, Logger } from '../metrics.js';
import { deadLetterEvent } from './dead-letter.js';
import { type Outcome, send } from './sender.js';
import { Spread } from './spread.js';
import type { Router } from './cluster-hosts.js';
import { eventStep, type Journal, type Step } from '../debug/journal.js';

/** A failed attempt and the URL that failed (the subscriber's endpoint, a Subscription's `reply`, a dead-letter sink). */
type Failed = Extract<Outcome, { kind: 'retry' | 'fail' }> & { readonly url: string };
/** A finished attempt: where it went, and whether a reply came back. */
interface Done { readonly kind: 'done'; readonly url: string; readonly replied?: boolean }

export interface Program {
  readonly predicate: Predicate;
  /** The subscriber's URL (its first endpoint when it has several); absent for a Subscription with only a `reply`: the event itself is forwarded there. */
  readonly subscriber?: string;
  /** Every endpoint of the subscriber (a Service's ready pods), when it has more than one: deliveries are spread over them. */
  readonly endpoints?: readonly string[];
  /**
   * Where a reply goes: into a stream (a Trigger's own, routed like any event; a Subscription's
   * `reply` that is a channel or Broker this process serves), or POSTed to a URL (any other
   * `reply`), as part of the attempt; undefined, it is discarded.
   */
  readonly reply: { readonly stream: string } | { readonly url: string } | undefined;
  readonly policy: DeliveryPolicy;
  /** Resolved dead-letter sink URL, if the policy has one. */
  readonly deadLetterSink?: string;
  /** Why the filter does not match attributes it refused (for the debugger's journal). */
  readonly explain?: (attributes: CloudEvent['attributes']) => string;
}

/** Where a Trigger's delivery failures are recorded for its users (a Kubernetes Event on the Trigger). */
export type FailureRecorder = (about: TriggerRef, message: string) => void;

/** The Trigger a worker delivers for, as an Event refers to it. */
export interface TriggerRef {
  readonly apiVersion: 'eventing.knative.dev/v1';
  readonly kind: 'Trigger';
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
}

export interface WorkerDeps {
  readonly log: EventLog;
  readonly metrics: BrokerMetrics;
  readonly logger: Logger;
  readonly recordFailure?: FailureRecorder;
  /** Where each step of an event's path is written for the debugger. */
  readonly journal?: Journal;
  readonly maxInFlight: number;
  readonly ackWaitMs: number;
  readonly maxEventBytes: number;
  /** Where URLs the broker cannot reach itself go (cluster-hosts.ts). */
  readonly router?: Router;
}

/** The messages being worked on whose ack deadline one timer pushes back, every `period` ms while there are any. */
class Held {
  private readonly messages = new Set<LogMessage>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly period: number) {}

  add(m: LogMessage): () => void {
    this.messages.add(m);
    this.timer ??= setInterval(() => this.tick(), this.period);
    return () => {
      this.messages.delete(m);
      if (this.messages.size === 0) this.timer = void clearInterval(this.timer);
    };
  }

  private tick(): void {
    for (const m of this.messages) {
      try {
        m.working();
      } catch {
        // The log's connection closed under us: the ack wait runs out and the message is handed out again.
        this.messages.delete(m);
      }
    }
  }
}
const held = new Map<number, Held>();

/**
 * Marks `m` as being worked on every third of the ack wait (at most that long after it was taken),
 * so no other process takes it; returns the function that stops. One timer serves every message
 * held with the same ack wait, not one per delivery.
 */
export function holdWhileWorking(m: LogMessage, ackWaitMs: number): () => void {
  const period = Math.max(100, ackWaitMs / 3);
  let h = held.get(period);
  if (!h) held.set(period, (h = new Held(period)));
  return h.add(m);
}

/** Waits `ms`, or less if `signal` aborts; its abort listener goes when it ends (the signal outlives many sleeps). */
export const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

export class TriggerWorker {
  private program: Program | undefined;
  private consumer: Consumer | undefined;
  private created = false;
  private markCreated!: () => void;
  /** Resolves once the durable consumer exists: from then on no event of the stream is missed. */
  readonly consumerCreated = new Promise<void>((resolve) => (this.markCreated = resolve));
  private stopped = false;
  private readonly stopping = new AbortController();
  private pause = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly spread = new Spread();
  private readonly loop: Promise<void>;

  constructor(
    private readonly stream: string,
    private readonly name: string,
    private readonly labels: Labels,
    private readonly deps: WorkerDeps,
    private readonly about?: TriggerRef,
  ) {
    this.loop = this.run();
  }

  /** Starts, changes or (undefined) pauses the deliveries. */
  setProgram(program: Program | undefined): void {
    const wasRunning = this.program !== undefined;
    this.program = program;
    if (wasRunning !== (program !== undefined)) this.pause.abort();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const signal = this.pause.signal;
      try {
        if (!this.program) {
          await this.idle(signal);
        } else {
          this.consumer ??= await this.deps.log.consumer(this.stream, this.name, { maxInFlight: this.deps.maxInFlight, ackWaitMs: this.deps.ackWaitMs });
          this.created = true;
          this.markCreated();
          for (const m of await this.consumer.fetch(this.deps.maxInFlight, signal)) this.track(this.handle(m));
        }
      } catch (err) {
        this.deps.logger('warn', 'trigger consumer unavailable, retrying', { ...this.labels, error: (err as Error).message });
        await this.closeConsumer();
        await sleep(1000, signal);
      }
      if (signal.aborted && !this.stopped) this.pause = new AbortController();
    }
  }

  /** Paused: the consumer exists (so events wait for this Trigger) but hands nothing out. */
  private async idle(signal: AbortSignal): Promise<void> {
    await this.closeConsumer();
    if (!this.created) {
      await this.deps.log.ensureConsumer(this.stream, this.name, { maxInFlight: this.deps.maxInFlight, ackWaitMs: this.deps.ackWaitMs });
      this.created = true;
      this.markCreated();
    }
    await sleep(2 ** 31 - 1, signal);
  }

  private async closeConsumer(): Promise<void> {
    const c = this.consumer;
    this.consumer = undefined;
    await c?.close().catch(() => undefined);
  }

  /** A delivery in flight until it settles; one that rejects (handle() catches what it expects) is logged, never left unhandled. */
  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    p.catch((err: unknown) => this.deps.logger('error', 'delivery failed unexpectedly', { ...this.labels, error: (err as Error)?.message ?? String(err) }))
      .finally(() => this.inFlight.delete(p));
  }

  private dropped(record: LogRecord | undefined, reason: string): void {
    this.deps.metrics.inc('dropped', this.labels);
    const a = record?.event.attributes;
    this.deps.logger('warn', 'event dropped', { ...this.labels, id: a?.id, source: a?.source, type: a?.type, reason });
    if (a) this.step({ k: 'dropped', id: String(a.id), trigger: this.labels.trigger!, why: reason });
  }

  private step(step: Step): void {
    this.deps.journal?.add(this.stream, step);
  }

  private async handle(m: LogMessage): Promise<void> {
    let record: LogRecord;
    try {
      record = decodeRecord(m.data);
    } catch {
      this.dropped(undefined, 'the stored record is corrupt');
      return m.ack().catch(() => undefined);
    }
    const program = this.program;
    if (!program) return m.nak(0).catch(() => undefined);
    const id = String(record.event.attributes.id);
    const trigger = this.labels.trigger!;
    if (!program.predicate(record.event.attributes)) {
      if (m.attempt === 1) this.step({ k: 'match', id, trigger, matched: false, why: program.explain?.(record.event.attributes) ?? 'the filter does not match' });
      return m.ack().catch(() => undefined);
    }
    const keepAlive = holdWhileWorking(m, this.deps.ackWaitMs);
    try {
      const started = performance.now();
      const outcome = await this.attempt(program, record);
      const ms = Math.round((performance.now() - started) * 10) / 10;
      if (outcome.kind !== 'done') this.failed(record, m.attempt, outcome);
      this.step(outcome.kind === 'done'
        ? { k: 'attempt', id, trigger, n: m.attempt, url: outcome.url, ms, outcome: outcome.replied ? 'reply' : 'done' }
        : { k: 'attempt', id, trigger, n: m.attempt, url: outcome.url, code: outcome.code, ms, outcome: outcome.kind, why: outcome.why });
      if (outcome.kind === 'done') {
        this.deps.metrics.inc('delivered', this.labels);
        return await m.ack();
      }
      if (outcome.kind === 'retry' && m.attempt <= program.policy.retry) {
        this.deps.metrics.inc('retried', this.labels);
        return await m.nak(backoffMs(program.policy, m.attempt));
      }
      await this.deadLetter(program, record, outcome);
      await m.ack();
    } catch (err) {
      // The log failed under us (ack or nak lost): the message comes back after the ack wait.
      this.deps.logger('warn', 'delivery state not stored; the event will be delivered again', { ...this.labels, error: (err as Error).message });
    } finally {
      keepAlive();
    }
  }

  /** A failed attempt: logged with the event's id, and recorded on the Trigger (its last error). */
  private failed(record: LogRecord, attempt: number, failure: Failed): void {
    const a = record.event.attributes;
    this.deps.logger('warn', 'delivery attempt failed', { ...this.labels, id: a.id, source: a.source, type: a.type, attempt, url: failure.url, code: failure.code, reason: failure.why });
    if (this.about) this.deps.recordFailure?.(this.about, `delivery to ${failure.url} failed: ${failure.why}`);
  }

  /** A POST the answer of which is only done or failed (a reply URL, a dead-letter sink). */
  private async forward(url: string, event: CloudEvent, record: LogRecord, timeoutMs: number): Promise<{ kind: 'done' } | Failed> {
    const r = await send(url, event, { timeoutMs, preferReply: false, traceparent: record.traceparent, maxReplyBytes: this.deps.maxEventBytes, router: this.deps.router });
    return r.kind === 'done' || r.kind === 'reply' ? { kind: 'done' } : { ...r, url };
  }

  /** One POST (to the endpoint with the fewest in flight), and for a reply the durable re-enqueue (or the POST to `reply`) the attempt's success depends on. */
  private async attempt(program: Program, record: LogRecord): Promise<Done | Failed> {
    if (program.subscriber === undefined) {
      const to = program.reply && 'url' in program.reply ? program.reply.url : '';
      return this.passOn(program.reply, record.event, record, program.policy.timeoutMs, record.traceparent, to);
    }
    const target = program.endpoints && program.endpoints.length > 1 ? this.spread.acquire(program.endpoints) : { url: program.subscriber, release: () => undefined };
    const outcome = await send(target.url, record.event, {
      timeoutMs: program.policy.timeoutMs,
      preferReply: true,
      traceparent: record.traceparent,
      tracestate: record.tracestate,
      maxReplyBytes: this.deps.maxEventBytes,
      router: this.deps.router,
    }).finally(() => target.release());
    if (outcome.kind !== 'reply') return { ...outcome, url: target.url };
    this.deps.metrics.inc('replies', this.labels);
    return this.passOn(program.reply, outcome.event, record, program.policy.timeoutMs, outcome.traceparent ?? record.traceparent, target.url);
  }

  /**
   * Where a reply (or a reply-only Subscription's event) goes: stored in a stream this process
   * serves, one hop lower (at 0 it is dropped and logged), or POSTed to a URL; undefined, nowhere.
   */
  private async passOn(to: Program['reply'], event: CloudEvent, record: LogRecord, timeoutMs: number, traceparent: string | undefined, url: string): Promise<Done | Failed> {
    if (!to) return { kind: 'done', url, replied: true };
    if ('url' in to) {
      const r = await this.forward(to.url, event, record, timeoutMs);
      return r.kind === 'done' ? { kind: 'done', url, replied: true } : r;
    }
    const ttl = record.ttl - 1;
    if (ttl <= 0) {
      this.dropped({ ...record, event }, `reply dropped: the ${TTL_EXTENSION} hop limit is exhausted (an event loop?)`);
      return { kind: 'done', url, replied: true };
    }
    const { [TTL_EXTENSION]: _ttl, ...attributes } = event.attributes;
    const reply: CloudEvent = event.data ? { attributes, data: event.data } : { attributes };
    try {
      const stored = encodeRecord({ event: reply, ttl, ...(traceparent ? { traceparent } : {}) });
      await this.deps.log.append(to.stream, [stored]);
      this.step(eventStep(reply, stored, 'reply', { trigger: this.labels.trigger!, replyTo: String(record.event.attributes.id) }));
    } catch (err) {
      return { kind: 'retry', code: 500, body: Buffer.from('reply not stored'), why: `the reply could not be stored: ${(err as Error).message}`, url };
    }
    return { kind: 'done', url, replied: true };
  }

  private async deadLetter(program: Program, record: LogRecord, failure: Failed): Promise<void> {
    const sink = program.deadLetterSink;
    if (!sink) return this.dropped(record, `delivery failed (${failure.why}) and no dead-letter sink is configured`);
    const event = deadLetterEvent(record.event, failure.url, failure.code, failure.body);
    for (let n = 0; ; n++) {
      const r = await this.forward(sink, event, record, program.policy.timeoutMs);
      const step = { k: 'deadletter', id: String(record.event.attributes.id), trigger: this.labels.trigger!, sink } as const;
      if (r.kind === 'done') {
        this.step({ ...step, ok: true });
        return this.deps.metrics.inc('deadLettered', this.labels);
      }
      if (r.kind === 'fail' || n >= program.policy.retry || this.stopped) {
        this.step({ ...step, ok: false });
        return this.dropped(record, `delivery failed (${failure.why}) and so did the dead-letter sink (${r.why})`);
      }
      await sleep(backoffMs(program.policy, n + 1), this.stopping.signal);
    }
  }

  /** Stops fetching; waits for deliveries in flight (each bounded by its timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    this.pause.abort();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
    await this.closeConsumer();
  }
}
