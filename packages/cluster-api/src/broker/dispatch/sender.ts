/**
 * One delivery attempt: an HTTP POST of the event in binary mode, and the answer read through the
 * Knative data-plane status table:
 *
 * | answer                                   | outcome                                        |
 * | ---------------------------------------- | ---------------------------------------------- |
 * | 200 with a CloudEvent                    | done, with a reply                             |
 * | 200 empty, 202 (body ignored), other 2xx | done                                           |
 * | 200 with a body that is not an event     | retry (Knative's filter answers 502 for it)    |
 * | 404, 409, 429, 5xx, codes not in the table, timeout, connection error | retry   |
 * | 1xx, 3xx, other 4xx                      | failed, no retry                               |
 *
 * Connections are kept alive per origin. Bodies read back are capped: a reply larger than the
 * event limit is treated as a bad reply. `agents` and `readCapped` serve the node:http requests of
 * asynchronous invocations (invocation/invoker.ts).
 */
import { Agent as HttpAgent, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { Agent as UndiciAgent, type Dispatcher } from 'undici';
import { type CloudEvent } from '../event/event.js';
import { decodeMessage, encodeBinary } from '../event/http-codec.js';
import type { Router } from './cluster-hosts.js';

export type Outcome =
  | { readonly kind: 'done' }
  | { readonly kind: 'reply'; readonly event: CloudEvent; readonly traceparent?: string }
  | { readonly kind: 'retry' | 'fail'; readonly code: number; readonly body: Buffer; readonly why: string };

export interface SendOptions {
  readonly timeoutMs: number;
  /** Ask for a reply event (`Prefer: reply`): subscribers yes, dead-letter sinks no. */
  readonly preferReply: boolean;
  readonly traceparent?: string;
  readonly tracestate?: string;
  readonly maxReplyBytes: number;
  /** Where a URL the broker cannot reach itself is really sent (cluster-hosts.ts: cluster-local names through the gateway). */
  readonly router?: Router;
}

export const agents = { http: new HttpAgent({ keepAlive: true, maxSockets: 256 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 256 }) };

export function classify(status: number): 'retry' | 'fail' {
  if (status === 404 || status === 409 || status === 429 || status >= 500) return 'retry';
  if (status < 200 || (status >= 300 && status < 500)) return 'fail';
  return 'retry';
}

export function readCapped(res: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        res.destroy();
        resolve(undefined);
      } else chunks.push(c);
    });
    res.on('end', () => resolve(Buffer.concat(chunks, size)));
    res.on('error', reject);
    res.on('aborted', () => reject(new Error('response aborted')));
  });
}

function replyOutcome(headers: IncomingHttpHeaders, body: Buffer): Outcome {
  const isEvent = headers['ce-specversion'] !== undefined || /^application\/cloudevents/i.test(headers['content-type'] ?? '');
  if (!isEvent) {
    if (body.length === 0) return { kind: 'done' };
    return { kind: 'retry', code: 502, body, why: 'the response is not empty and not a CloudEvent' };
  }
  const decoded = decodeMessage(headers, body);
  if ('status' in decoded) return { kind: 'retry', code: 502, body, why: `the reply is not a valid CloudEvent: ${decoded.detail}` };
  if (decoded.length !== 1) return { kind: 'retry', code: 502, body, why: 'a reply must be one event, not a batch' };
  const traceparent = headers.traceparent;
  return { kind: 'reply', event: decoded[0]!, ...(typeof traceparent === 'string' ? { traceparent } : {}) };
}

/**
 * Deliveries' connections: undici keeps a pool of keep-alive connections per origin (at most 256
 * each, as many as deliveries in flight can use), and its dispatch API hands the answer to
 * `Delivery` below without a request or response stream per attempt: about half the CPU of
 * node:http's client per delivery (bench/broker).
 */
const dispatcher = new UndiciAgent({ connections: 256 });

/** Parsed subscriber URLs (a delivery goes to one of a few URLs, again and again); bounded, cleared when full. */
const parsed = new Map<string, URL>();
function parseUrl(url: string): URL {
  let u = parsed.get(url);
  if (!u) {
    if (parsed.size >= 1024) parsed.clear();
    parsed.set(url, (u = new URL(url)));
  }
  return u;
}

/** A response header as node:http gives it: the first of repeated `content-type`s, others joined. */
function nodeHeaders(headers: Record<string, string | string[] | undefined>): IncomingHttpHeaders {
  for (const [name, value] of Object.entries(headers)) {
    if (Array.isArray(value)) headers[name] = name === 'content-type' ? value[0] : value.join(', ');
  }
  return headers as IncomingHttpHeaders;
}

/** One attempt in flight: undici's callbacks in, one Outcome out. */
class Delivery implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private settled = false;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly opts: SendOptions, private readonly resolve: (o: Outcome) => void) {
    this.timer = setTimeout(() => this.fail(new Error(`no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Timed out while waiting for a connection: never sent.
    if (this.settled) controller.abort(new Error('timed out'));
  }

  onResponseStart(_c: Dispatcher.DispatchController, status: number, headers: Record<string, string | string[] | undefined>): void {
    this.status = status;
    this.headers = nodeHeaders(headers);
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.size += chunk.length;
    if (this.size <= this.opts.maxReplyBytes) return void this.chunks.push(chunk);
    this.settle({ kind: 'retry', code: 502, body: Buffer.alloc(0), why: `the response is larger than ${this.opts.maxReplyBytes} bytes` });
    this.controller?.abort(new Error('response too large'));
  }

  onResponseEnd(): void {
    const { status, opts } = this;
    const bytes = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    if (status === 200 && opts.preferReply) this.settle(replyOutcome(this.headers, bytes));
    else if (status >= 200 && status < 300) this.settle({ kind: 'done' });
    else this.settle({ kind: classify(status), code: status, body: bytes, why: `HTTP ${status}` });
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.fail(err);
  }

  /** No answer: a connection error, the timeout, a request undici refused to make. */
  fail(err: NodeJS.ErrnoException): void {
    const why = err.code && !err.code.startsWith('UND_ERR') ? err.code : err.message;
    if (this.settle({ kind: 'retry', code: 500, body: Buffer.from(`dispatch error: ${why}`), why })) this.controller?.abort(err);
  }

  private settle(outcome: Outcome): boolean {
    if (this.settled) return false;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve(outcome);
    return true;
  }
}

/** POSTs `event` to `url` and classifies the answer; never throws. */
export function send(url: string, event: CloudEvent, opts: SendOptions): Promise<Outcome> {
  const given = parseUrl(url);
  const routed = opts.router?.(given);
  const target = routed?.connect ?? given;
  const headers: Record<string, string> = routed ? { host: routed.host } : {};
  const body = encodeBinary(event, headers);
  if (opts.preferReply) headers.prefer = 'reply';
  if (opts.traceparent) headers.traceparent = opts.traceparent;
  if (opts.tracestate) headers.tracestate = opts.tracestate;
  return new Promise<Outcome>((resolve) => {
    const delivery = new Delivery(opts, resolve);
    try {
      dispatcher.dispatch({ origin: target.origin, path: `${target.pathname}${target.search}`, method: 'POST', headers, body: body ?? null }, delivery);
    } catch (err) {
      // A request undici refuses to make (a header value it does not allow).
      delivery.fail(err as Error);
    }
  });
}
