/**
 * Runs the stored asynchronous invocations (invocation.ts), each once when it succeeds: the
 * request is sent to the function through the serving gateway (its URL, the original Host), and
 * its answer classified by the same table as a Trigger's delivery (sender.ts: 5xx, 404, 409, 429,
 * timeouts and connection errors retried; other 4xx final). The function's delivery policy
 * (retries, backoff, timeout, dead-letter sink) is a DeliverySpec read per invocation
 * (`policyOf`: the cluster broker reads the Knative Service's `function.knative.dev/async-delivery`
 * annotation); retries wait in the log (`nak`), so they survive a restart.
 *
 * When done — a 2xx, a final failure, or the retries spent — the function's last answer (status,
 * headers, body) is POSTed to the invocation's `X-Callback-Url`, with `X-Call-Id`,
 * `X-Function-Status` and `X-Function-Name` (OpenFaaS's callback headers); an answer that never
 * came is `X-Function-Status: 502` with `X-Function-Error`. A failed invocation also goes to the
 * dead-letter sink: the request's body as a CloudEvent (`dev.func.invocation`, the call id, no
 * request headers) with Knative's `knativeerror*` extensions.
 */
import { backoffMs, deliveryPolicy, deliveryProblems, type DeliveryPolicy } from '../delivery/policy.js';
import { decodeRecord, type LogRecord } from '../event/event.js';
import { deadLetterEvent } from '../dispatch/dead-letter.js';
import { type Answer, classify, exchange, send } from '../dispatch/sender.js';
import { holdWhileWorking, sleep } from '../dispatch/worker.js';
import type { Consumer, EventLog, LogMessage } from '../log/interface.js';
import type { BrokerMetrics, Logger } from '../metrics.js';
import { resolveDestination, type SubscriberResolver } from '../resolver.js';
import type { DeliverySpec } from '../types.js';
import { deadLetterBase, INVOCATION_STREAM, type Invocation, invocationOf } from './invocation.js';

export const INVOKER_CONSUMER = 'invoker';

export interface InvokerDeps {
  readonly log: EventLog;
  readonly metrics: BrokerMetrics;
  readonly logger: Logger;
  readonly resolver: SubscriberResolver;
  /** The serving gateway's base URL (`http://127.0.0.1:8092`); undefined while it is not known. */
  readonly gatewayUrl: () => string | undefined;
  /** The function's DeliverySpec; undefined: the default. */
  readonly policyOf: (namespace: string, name: string) => Promise<DeliverySpec | undefined>;
  readonly maxInFlight: number;
  readonly ackWaitMs: number;
  readonly maxEventBytes: number;
}


/** Headers of one connection (or of one exchange's framing), not of the request or answer: never forwarded. */
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date', 'upgrade', 'expect']);
const endToEnd = (headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string | string[]> => {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
  return out;
};
const LABELS = { broker: INVOCATION_STREAM };

export class Invoker {
  private consumer: Consumer | undefined;
  private readonly stopping = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly loop: Promise<void>;
  /** True once the stream and its consumer exist: an invocation stored from then on is run. */
  ready = false;

  constructor(private readonly deps: InvokerDeps) {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      try {
        const opts = { maxInFlight: this.deps.maxInFlight, ackWaitMs: this.deps.ackWaitMs };
        if (!this.ready) {
          // A consumer starts at the end of its stream: it must exist before the first invocation is accepted.
          await this.deps.log.ensureStream(INVOCATION_STREAM);
          await this.deps.log.ensureConsumer(INVOCATION_STREAM, INVOKER_CONSUMER, opts);
          this.ready = true;
        }
        this.consumer ??= await this.deps.log.consumer(INVOCATION_STREAM, INVOKER_CONSUMER, opts);
        for (const m of await this.consumer.fetch(this.deps.maxInFlight, signal)) {
          const p = this.handle(m).catch((err: unknown) => this.deps.logger('error', 'invocation failed unexpectedly', { error: (err as Error)?.message ?? String(err) }));
          this.inFlight.add(p);
          void p.finally(() => this.inFlight.delete(p));
        }
      } catch (err) {
        this.deps.logger('warn', 'invocation consumer unavailable, retrying', { error: (err as Error).message });
        await this.consumer?.close().catch(() => undefined);
        this.consumer = undefined;
        await sleep(1000, signal);
      }
    }
  }

  private async policy(inv: Invocation): Promise<{ policy: DeliveryPolicy; deadLetterSink?: string }> {
    let spec: DeliverySpec | undefined;
    try {
      spec = await this.deps.policyOf(inv.namespace, inv.name);
    } catch (err) {
      this.deps.logger('warn', 'delivery policy not read; using the default', { function: `${inv.namespace}/${inv.name}`, error: (err as Error).message });
    }
    const problems = deliveryProblems(spec, 'delivery');
    if (problems.length > 0) {
      this.deps.logger('warn', 'delivery policy invalid; using the default', { function: `${inv.namespace}/${inv.name}`, problems: problems.map((p) => `${p.path}: ${p.message}`) });
      spec = undefined;
    }
    const policy = deliveryPolicy(spec, undefined);
    if (!policy.deadLetterSink) return { policy };
    const dls = await resolveDestination(policy.deadLetterSink, inv.namespace, this.deps.resolver);
    if ('uri' in dls) return { policy, deadLetterSink: dls.uri };
    this.deps.logger('warn', 'dead-letter sink not resolved', { function: `${inv.namespace}/${inv.name}`, error: dls.error });
    return { policy };
  }

  private async handle(m: LogMessage): Promise<void> {
    let record: LogRecord;
    let inv: Invocation | undefined;
    try {
      record = decodeRecord(m.data);
      inv = invocationOf(record.event);
    } catch {
      inv = undefined;
    }
    if (!inv) {
      this.deps.logger('warn', 'invocation dropped: the stored record is corrupt', {});
      return m.ack().catch(() => undefined);
    }
    const gateway = this.deps.gatewayUrl();
    if (!gateway) return m.nak(1000).catch(() => undefined);
    const { policy, deadLetterSink } = await this.policy(inv);
    const keepAlive = holdWhileWorking(m, this.deps.ackWaitMs);
    const fn = `${inv.namespace}/${inv.name}`;
    try {
      const target = new URL(inv.path, gateway);
      // The function sees the call id too (as OpenFaaS passes it), to tell a retry from a new call.
      const headers = { ...endToEnd(inv.headers), host: inv.host, 'x-call-id': inv.id };
      const answer = await exchange(target, inv.method, headers, inv.body, policy.timeoutMs, this.deps.maxEventBytes);
      const ok = 'status' in answer && answer.status >= 200 && answer.status < 300;
      if (ok) this.deps.metrics.inc('delivered', LABELS);
      else {
        const why = 'error' in answer ? answer.error : `HTTP ${answer.status}`;
        this.deps.logger('warn', 'invocation attempt failed', { function: fn, id: inv.id, attempt: m.attempt, reason: why });
        const retriable = 'error' in answer || classify(answer.status) === 'retry';
        if (retriable && m.attempt <= policy.retry && !this.stopping.signal.aborted) {
          this.deps.metrics.inc('retried', LABELS);
          return await m.nak(backoffMs(policy, m.attempt));
        }
        await this.deadLetter(record!, inv, policy, deadLetterSink, target.href, answer);
      }
      await this.callback(inv, policy, answer);
      await m.ack();
    } catch (err) {
      this.deps.logger('warn', 'invocation state not stored; it will run again', { function: fn, id: inv.id, error: (err as Error).message });
    } finally {
      keepAlive();
    }
  }

  private async deadLetter(record: LogRecord, inv: Invocation, policy: DeliveryPolicy, sink: string | undefined, dest: string, answer: Answer): Promise<void> {
    const fields = { function: `${inv.namespace}/${inv.name}`, id: inv.id };
    if (!sink) {
      this.deps.metrics.inc('dropped', LABELS);
      return this.deps.logger('warn', 'invocation failed and no dead-letter sink is configured', fields);
    }
    const event = deadLetterEvent(deadLetterBase(record.event), dest, 'status' in answer ? answer.status : 500, 'status' in answer ? answer.body : Buffer.from(answer.error));
    const sent = await this.retried('dead-letter sink', policy, fields, async () => {
      const r = await send(sink, event, { timeoutMs: policy.timeoutMs, preferReply: false, maxReplyBytes: this.deps.maxEventBytes });
      if (r.kind === 'done' || r.kind === 'reply') return 'done';
      return r.kind === 'fail' ? { final: r.why } : { again: r.why };
    });
    this.deps.metrics.inc(sent ? 'deadLettered' : 'dropped', LABELS);
  }

  /** The function's answer to the callback URL: its status, headers and body. */
  private async callback(inv: Invocation, policy: DeliveryPolicy, answer: Answer): Promise<void> {
    if (!inv.callback) return;
    const url = new URL(inv.callback);
    const headers = 'status' in answer ? endToEnd(answer.headers) : {};
    Object.assign(headers, {
      'x-call-id': inv.id,
      'x-function-name': `${inv.namespace}/${inv.name}`,
      'x-function-status': String('status' in answer ? answer.status : 502),
      ...('error' in answer ? { 'x-function-error': answer.error } : {}),
    });
    const body = 'status' in answer ? answer.body : Buffer.alloc(0);
    await this.retried('callback', policy, { function: `${inv.namespace}/${inv.name}`, id: inv.id }, async () => {
      const r = await exchange(url, 'POST', headers, body, policy.timeoutMs, 64 * 1024);
      if ('error' in r) return { again: r.error };
      if (r.status >= 200 && r.status < 300) return 'done';
      return classify(r.status) === 'retry' ? { again: `HTTP ${r.status}` } : { final: `HTTP ${r.status}` };
    });
  }

  /** Tries `once` with the policy's retries and backoff, in place; logs what is given up. True when done. */
  private async retried(what: string, policy: DeliveryPolicy, fields: Record<string, unknown>, once: () => Promise<'done' | { again: string } | { final: string }>): Promise<boolean> {
    for (let n = 0; ; n++) {
      const r = await once();
      if (r === 'done') return true;
      const why = 'again' in r ? r.again : r.final;
      if ('final' in r || n >= policy.retry || this.stopping.signal.aborted) {
        this.deps.logger('warn', `invocation ${what} failed`, { ...fields, reason: why });
        return false;
      }
      await sleep(backoffMs(policy, n + 1), this.stopping.signal);
    }
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
    await this.consumer?.close().catch(() => undefined);
  }
}
