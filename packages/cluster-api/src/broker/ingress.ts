/**
 * The ingress: `POST /{namespace}/{broker}` (and a channel's `/{channels|inmemorychannels}/{namespace}/{name}`) takes CloudEvents in binary, structured or batched mode
 * and answers 202 only once every event of the request is durably in the Broker's stream.
 *
 * | answer | when                                                                      |
 * | ------ | ------------------------------------------------------------------------- |
 * | 202    | stored                                                                    |
 * | 400    | not a valid CloudEvent (or one event of a batch is not), with the reason  |
 * | 404    | no such Broker                                                            |
 * | 405    | a method other than POST (OPTIONS answers 204 with `Allow`)              |
 * | 413    | body over `maxEventBytes`; the answer is sent before the connection closes |
 * | 415    | a structured format other than JSON                                       |
 * | 429    | too many events waiting to be stored (`Retry-After`)                      |
 * | 503    | the event log cannot store now (`Retry-After`); nothing was acknowledged  |
 *
 * Error bodies are `application/problem+json` with our own wording: no library or engine text.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEFAULT_TTL, encodeRecord, TTL_EXTENSION, type CloudEvent } from './event/event.js';
import { decodeMessage } from './event/http-codec.js';
import { channelKindOf, channelStream } from './channel/types.js';
import type { EventLog } from './log/interface.js';
import type { BrokerMetrics, Logger } from './metrics.js';
import { eventStep, type Journal } from './debug/journal.js';

export interface IngressDeps {
  readonly log: EventLog;
  readonly metrics: BrokerMetrics;
  readonly logger: Logger;
  /** The stream state of `ns/name` (a Broker) or `plural/ns/name` (a channel), undefined when there is none. */
  readonly stream: (key: string) => { readonly ready: boolean } | undefined;
  readonly maxEventBytes: number;
  /** Events accepted but not yet stored, across all Brokers, before 429. */
  readonly maxPendingEvents: number;
  /** Where each stored event is written for the debugger. */
  readonly journal?: Journal;
}

const TITLES: Record<number, string> = { 400: 'Bad Request', 403: 'Forbidden', 401: 'Unauthorized', 404: 'Not Found', 405: 'Method Not Allowed', 413: 'Payload Too Large', 415: 'Unsupported Media Type', 429: 'Too Many Requests', 503: 'Service Unavailable' };

export function problem(res: ServerResponse, status: number, detail: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail });
  res.writeHead(status, { 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** Reads the rest of a request and drops it (up to `cap` bytes, then the connection goes), so its client gets the answer sent, not a reset. */
export function discard(req: IncomingMessage, cap = 64 * 1024 * 1024): void {
  let drained = 0;
  req.on('data', (c: Buffer) => {
    drained += c.length;
    if (drained > cap) req.destroy();
  });
  req.resume();
}

/** A body over the limit: answer at once, then keep reading (discarding) so the client gets the answer, not a reset. */
export function tooLarge(req: IncomingMessage, res: ServerResponse, limit: number): void {
  problem(res, 413, `the request body exceeds the limit of ${limit} bytes`, { connection: 'close' });
  discard(req, 64 * limit);
}

export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        req.off('data', onData);
        resolve(undefined);
      } else chunks.push(c);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks, size)));
    req.on('error', reject);
  });
}

/** The hop TTL a sender set (Knative's extension) or the default, kept beside the event, not in it. */
function toRecord(e: CloudEvent, traceparent: string | undefined, tracestate: string | undefined): Uint8Array {
  const { [TTL_EXTENSION]: sent, ...attributes } = e.attributes;
  const n = Number(sent);
  const ttl = sent !== undefined && Number.isInteger(n) ? Math.min(Math.max(n, 0), DEFAULT_TTL) : DEFAULT_TTL;
  const event: CloudEvent = e.data ? { attributes, data: e.data } : { attributes };
  return encodeRecord({ event, ttl, ...(traceparent ? { traceparent } : {}), ...(tracestate ? { tracestate } : {}) });
}

function segment(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

/** The stream a path names: `/{namespace}/{broker}` a Broker's, `/{plural}/{namespace}/{name}` a channel's. */
function streamOf(path: string): string | undefined {
  const parts = path.split('/').map(segment);
  if (parts[0] !== '' || parts.slice(1).some((p) => !p)) return undefined;
  if (parts.length === 3) return `${parts[1]}/${parts[2]}`;
  const kind = parts.length === 4 ? channelKindOf(parts[1]!) : undefined;
  return kind ? channelStream(kind, parts[2]!, parts[3]!) : undefined;
}

export function ingressHandler(deps: IngressDeps): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  let pending = 0;
  return async (req, res) => {
    const key = streamOf((req.url ?? '/').split('?')[0]!);
    if (!key) return problem(res, 404, 'no such endpoint: POST events to /{namespace}/{broker} or /{channels|inmemorychannels}/{namespace}/{name}');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { allow: 'POST, OPTIONS' }).end();
      return;
    }
    if (req.method !== 'POST') return problem(res, 405, 'only POST is supported', { allow: 'POST, OPTIONS' });
    const stream = deps.stream(key);
    if (!stream) return problem(res, 404, `${key.split('/').length === 2 ? 'broker ' : ''}${key} does not exist`);
    if (Number(req.headers['content-length']) > deps.maxEventBytes) return tooLarge(req, res, deps.maxEventBytes);
    const body = await readBody(req, deps.maxEventBytes);
    if (!body) return tooLarge(req, res, deps.maxEventBytes);
    const decoded = decodeMessage(req.headers, body);
    if ('status' in decoded) {
      deps.metrics.inc('rejected', { broker: key });
      return problem(res, decoded.status, decoded.detail);
    }
    if (!stream.ready) return problem(res, 503, `${key} is not ready to store events`, { 'retry-after': '1' });
    if (pending + decoded.length > deps.maxPendingEvents) return problem(res, 429, 'too many events are waiting to be stored', { 'retry-after': '1' });
    const tp = req.headers.traceparent as string | undefined;
    const ts = req.headers.tracestate as string | undefined;
    pending += decoded.length;
    try {
      const records = decoded.map((e) => toRecord(e, tp, ts));
      if (decoded.length > 0) await deps.log.append(key, records);
      if (deps.journal) decoded.forEach((e, i) => deps.journal!.add(key, eventStep(e, records[i]!, 'ingress')));
    } catch (err) {
      deps.logger('warn', 'events not stored', { broker: key, count: decoded.length, error: (err as Error).message });
      return problem(res, 503, 'the events could not be stored; nothing was accepted, send them again', { 'retry-after': '1' });
    } finally {
      pending -= decoded.length;
    }
    deps.metrics.inc('accepted', { broker: key }, decoded.length);
    res.writeHead(202, { 'content-length': '0' }).end();
  };
}
