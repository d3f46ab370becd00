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
 * event limit is treated as a bad reply.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
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

/** POSTs `event` to `url` and classifies the answer; never throws. */
export function send(url: string, event: CloudEvent, opts: SendOptions): Promise<Outcome> {
  const given = new URL(url);
  const routed = opts.router?.(given);
  const target = routed?.connect ?? given;
  const headers: Record<string, string> = routed ? { host: routed.host } : {};
  const body = encodeBinary(event, headers);
  if (opts.preferReply) headers.prefer = 'reply';
  if (opts.traceparent) headers.traceparent = opts.traceparent;
  if (opts.tracestate) headers.tracestate = opts.tracestate;
  headers['content-length'] = String(body?.length ?? 0);
  const https = target.protocol === 'https:';
  return new Promise<Outcome>((resolve) => {
    const req = (https ? httpsRequest : httpRequest)(target, { method: 'POST', headers, agent: https ? agents.https : agents.http });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    const failed = (why: string) => resolve({ kind: 'retry', code: 500, body: Buffer.from(`dispatch error: ${why}`), why });
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      failed(err.code ?? err.message);
    });
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      readCapped(res, opts.maxReplyBytes).then(
        (bytes) => {
          clearTimeout(timer);
          if (bytes === undefined) resolve({ kind: 'retry', code: 502, body: Buffer.alloc(0), why: `the response is larger than ${opts.maxReplyBytes} bytes` });
          else if (status === 200 && opts.preferReply) resolve(replyOutcome(res.headers, bytes));
          else if (status >= 200 && status < 300) resolve({ kind: 'done' });
          else resolve({ kind: classify(status), code: status, body: bytes, why: `HTTP ${status}` });
        },
        (err: Error) => {
          clearTimeout(timer);
          failed(err.message);
        },
      );
    });
    req.end(body);
  });
}
