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
 * event limit is treated as a bad reply. `exchange` is the one HTTP client of deliveries, sources'
 * events and asynchronous invocations (invocation/invoker.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
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


export function classify(status: number): 'retry' | 'fail' {
  if (status === 404 || status === 409 || status === 429 || status >= 500) return 'retry';
  if (status < 200 || (status >= 300 && status < 500)) return 'fail';
  return 'retry';
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
 * The broker's connections: undici keeps a pool of keep-alive connections per origin (at most 256
 * each, as many as deliveries in flight can use), and its dispatch API hands the answer to
 * `Exchange` below without a request or response stream per attempt: about half the CPU of
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

/** Response headers as node:http gives them: the first of repeated `content-type`s, `set-cookie` a list, others joined. */
function nodeHeaders(headers: Record<string, string | string[] | undefined>): IncomingHttpHeaders {
  for (const [name, value] of Object.entries(headers)) {
    if (Array.isArray(value) && name !== 'set-cookie') headers[name] = name === 'content-type' ? value[0] : value.join(', ');
  }
  return headers as IncomingHttpHeaders;
}

/** The answer to one exchange (its body capped), or why none came. */
export type Answer =
  | { readonly status: number; readonly headers: IncomingHttpHeaders; readonly body: Buffer }
  | { readonly error: string; readonly tooLarge?: true };

/** One exchange in flight: undici's callbacks in, one Answer out. */
class Exchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private settled = false;
  private readonly timer: NodeJS.Timeout;

  constructor(timeoutMs: number, private readonly maxBytes: number, private readonly resolve: (a: Answer) => void) {
    this.timer = setTimeout(() => this.fail(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
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
    if (this.size <= this.maxBytes) return void this.chunks.push(chunk);
    this.settle({ error: `the response is larger than ${this.maxBytes} bytes`, tooLarge: true });
    this.controller?.abort(new Error('response too large'));
  }

  onResponseEnd(): void {
    this.settle({ status: this.status, headers: this.headers, body: this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size) });
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.fail(err);
  }

  /** No answer: a connection error (named by its code), the timeout, a request undici refused to make. */
  fail(err: NodeJS.ErrnoException): void {
    if (this.settle({ error: err.code && !err.code.startsWith('UND_ERR') ? err.code : err.message })) this.controller?.abort(err);
  }

  private settle(answer: Answer): boolean {
    if (this.settled) return false;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve(answer);
    return true;
  }
}

/** One HTTP exchange through the shared pools, its answer body capped at `maxBytes`; never throws. */
export function exchange(url: URL, method: string, headers: Record<string, string | string[]>, body: Uint8Array | undefined, timeoutMs: number, maxBytes: number): Promise<Answer> {
  return new Promise<Answer>((resolve) => {
    const handler = new Exchange(timeoutMs, maxBytes, resolve);
    try {
      dispatcher.dispatch({ origin: url.origin, path: `${url.pathname}${url.search}`, method, headers, body: body ?? null }, handler);
    } catch (err) {
      // A request undici refuses to make (a header value it does not allow).
      handler.fail(err as Error);
    }
  });
}

/** POSTs `event` to `url` and classifies the answer; never throws. */
export async function send(url: string, event: CloudEvent, opts: SendOptions): Promise<Outcome> {
  const given = parseUrl(url);
  const routed = opts.router?.(given);
  const target = routed?.connect ?? given;
  const headers: Record<string, string> = routed ? { host: routed.host } : {};
  const body = encodeBinary(event, headers);
  if (opts.preferReply) headers.prefer = 'reply';
  if (opts.traceparent) headers.traceparent = opts.traceparent;
  if (opts.tracestate) headers.tracestate = opts.tracestate;
  const answer = await exchange(target, 'POST', headers, body, opts.timeoutMs, opts.maxReplyBytes);
  if ('error' in answer) {
    const why = answer.error;
    return answer.tooLarge ? { kind: 'retry', code: 502, body: Buffer.alloc(0), why } : { kind: 'retry', code: 500, body: Buffer.from(`dispatch error: ${why}`), why };
  }
  const { status } = answer;
  if (status === 200 && opts.preferReply) return replyOutcome(answer.headers, answer.body);
  if (status >= 200 && status < 300) return { kind: 'done' };
  return { kind: classify(status), code: status, body: answer.body, why: `HTTP ${status}` };
}
