/**
 * The seam between the serving gateway and the broker for asynchronous invocations: an
 * `InvocationQueue` stores a call durably and answers 202 with its id only once it is stored, or
 * says why it did not. Two implementations satisfy it:
 * - `invocationQueue` (here): the broker's own, appending to its log. The broker's
 *   `POST /invocations/{namespace}/{function}` (ingress.ts) serves it over HTTP, and `serve`'s
 *   gateway, in the broker's process, calls it directly: no second HTTP hop.
 * - `httpInvocationQueue` (serving/gateway/async.ts): a gateway in a process of its own, as an HTTP
 *   client of that endpoint.
 *
 * Every check of a call happens here, whichever way it came: the broker's endpoint and the gateway
 * answer the same refusals with the same words (`answerQueued`).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { DEFAULT_TTL, encodeRecord } from '../event/event.js';
import { discard, problem, readBody } from '../ingress.js';
import type { EventLog } from '../log/interface.js';
import type { BrokerMetrics, Logger } from '../metrics.js';
import { INVOCATION_STREAM, invocationEvent } from './invocation.js';

/** A request to a function, as the gateway received it. */
export interface AsyncCall {
  readonly namespace: string;
  readonly name: string;
  readonly method: string;
  /** Path and query. */
  readonly path: string;
  /** The Host the request came with: the function's URL host, which the gateway routes by. */
  readonly host: string;
  /** Where the function's answer goes (`X-Callback-Url`), if anywhere. */
  readonly callback?: string;
  /** The client's headers; the gateway's control headers among them are dropped. */
  readonly headers: IncomingHttpHeaders;
}

export interface Refusal {
  readonly status: 400 | 413 | 429 | 503;
  readonly detail: string;
  /** The client may send it again after a second (nothing was stored). */
  readonly retry?: true;
}

export type Queued = { readonly status: 202; readonly id: string } | Refusal;

export interface InvocationQueue {
  /** Reads the call's body from `body` and stores the call; resolves with 202 only after it is durable. */
  queue(call: AsyncCall, body: IncomingMessage): Promise<Queued>;
}

export interface InvocationQueueDeps {
  readonly log: EventLog;
  readonly metrics: BrokerMetrics;
  readonly logger: Logger;
  readonly maxEventBytes: number;
  /** Invocations read but not yet stored, before 429. */
  readonly maxPending: number;
  /** True once the stream exists. */
  readonly ready: () => boolean;
}

/** Headers of the gateway's own or of one connection: never stored with the request. */
const CONTROL = new Set(['x-func-method', 'x-func-path', 'x-func-host', 'x-callback-url', 'host', 'content-length', 'connection', 'keep-alive', 'transfer-encoding', 'prefer']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const PATH_NOT = /[\s\u0000-\u001f]/;
const HOST_NOT = /[\s/\u0000-\u001f]/;
const LABELS = { broker: INVOCATION_STREAM };

export function httpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/** What is wrong with `call`, in the client's terms; undefined when nothing is. */
function callProblem(call: AsyncCall): string | undefined {
  if (!TOKEN.test(call.method)) return 'X-Func-Method must name an HTTP method';
  if (!call.path.startsWith('/') || PATH_NOT.test(call.path)) return 'X-Func-Path must be an absolute path';
  if (call.host === '' || HOST_NOT.test(call.host)) return 'X-Func-Host must be a host';
  if (call.callback !== undefined && !httpUrl(call.callback)) return 'X-Callback-Url must be an absolute http or https URL';
  return undefined;
}

function storedHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const k in headers) {
    const v = headers[k];
    if (v !== undefined && !CONTROL.has(k)) out[k] = v;
  }
  return out;
}

/** The broker's queue: the call appended to the `invocations` stream (its invoker runs it from there). */
export function invocationQueue(deps: InvocationQueueDeps): InvocationQueue {
  let pending = 0;
  const tooLarge: Refusal = { status: 413, detail: `the request body exceeds the limit of ${deps.maxEventBytes} bytes` };
  return {
    async queue(call, req) {
      const wrong = callProblem(call);
      if (wrong) return { status: 400, detail: wrong };
      if (Number(req.headers['content-length']) > deps.maxEventBytes) return tooLarge;
      const body = await readBody(req, deps.maxEventBytes);
      if (!body) return tooLarge;
      if (!deps.ready()) return { status: 503, detail: 'invocations cannot be stored yet', retry: true };
      if (pending >= deps.maxPending) return { status: 429, detail: 'too many invocations are waiting to be stored', retry: true };
      const id = randomUUID();
      const { namespace, name, method, path, host, callback } = call;
      const event = invocationEvent({ id, namespace, name, method, path, host, headers: storedHeaders(call.headers), body, ...(callback ? { callback } : {}) });
      pending++;
      try {
        await deps.log.append(INVOCATION_STREAM, [encodeRecord({ event, ttl: DEFAULT_TTL })]);
      } catch (err) {
        deps.logger('warn', 'invocation not stored', { function: `${namespace}/${name}`, error: (err as Error).message });
        return { status: 503, detail: 'the invocation could not be stored; nothing was accepted, send it again', retry: true };
      } finally {
        pending--;
      }
      deps.metrics.inc('accepted', LABELS);
      return { status: 202, id };
    },
  };
}

/**
 * Answers the client: 202 with the call id (`X-Call-Id` and `{"id": …}`), or the refusal as a
 * problem (`Retry-After: 1` when it may be sent again; a body over the limit is read to its end
 * and dropped, so the client gets the answer rather than a reset).
 */
export function answerQueued(req: IncomingMessage, res: ServerResponse, q: Queued, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.destroy();
  if (q.status === 202) {
    const body = `{"id":"${q.id}"}`;
    return void res.writeHead(202, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-call-id': q.id, ...headers }).end(body);
  }
  problem(res, q.status, q.detail, { ...(q.retry ? { 'retry-after': '1' } : {}), ...(q.status === 413 ? { connection: 'close' } : {}) });
  if (q.status === 413) discard(req);
}
