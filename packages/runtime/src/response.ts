/**
 * Maps what a function returns (or throws) to an HTTP response, writing straight to node:http's
 * ServerResponse. The heads of the common answers (a 204, text, bytes, JSON, with the CORS pairs)
 * are built once and reused (head.ts); what a function chose itself (a structured return's
 * headers, an event's attributes) is built per response. node:http checks every header it sends.
 */
import { Buffer } from 'node:buffer';
import type { ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { encodeBinary, isCloudEvent } from './cloudevents.js';
import { RuntimeError, sendProblem } from './errors.js';
import { withLength, writeHead, type Head } from './head.js';
import type { CloudEventLike, StructuredReturn } from './types.js';

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';
const OCTET = 'application/octet-stream';

/** base pairs + content-type, per (base list, type): both come from small fixed sets. */
const typed = new WeakMap<readonly string[], Map<string, Head>>();

let lastBase: readonly string[] | undefined;
let lastType = '';
let lastHead: Head | undefined;

function withType(base: readonly string[], type: string): Head {
  // A server answers mostly one way: the last pair answers without a map lookup.
  if (base === lastBase && type === lastType) return lastHead!;
  let byType = typed.get(base);
  if (!byType) typed.set(base, (byType = new Map()));
  let h = byType.get(type);
  if (!h) byType.set(type, (h = [...base, 'content-type', type]));
  lastBase = base;
  lastType = type;
  lastHead = h;
  return h;
}

/**
 * `{ statusCode?, headers?, body? }`, decided by values as faas-js-runtime decides (a `body: undefined`
 * key does not make one, so `{ ...context }` is sent as JSON); an object with `headers` but neither
 * of the others is sent whole, with those headers.
 */
function isStructured(value: object): value is StructuredReturn {
  const v = value as StructuredReturn;
  return v.statusCode !== undefined || v.body !== undefined || isHeaderObject(v.headers);
}

function isHeaderObject(headers: unknown): boolean {
  return headers !== null && typeof headers === 'object' && !Array.isArray(headers);
}

/**
 * The status a function chose, checked: node:http would send any three digits (999 included), and
 * a 1xx cannot end a response. A bad one is the function's error: the client gets a 500.
 */
export function chosenStatus(code: unknown, fallback: number): number {
  if (code === undefined || code === null) return fallback;
  if (typeof code === 'number' && Number.isInteger(code) && code >= 200 && code <= 599) return code;
  throw new RuntimeError('invalid_response', `The function returned statusCode ${JSON.stringify(code) ?? String(code)}; a response status must be an integer from 200 to 599.`);
}

function isBytes(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array;
}

export function isReadable(value: unknown): value is NodeJS.ReadableStream {
  return value !== null && typeof value === 'object' && typeof (value as { pipe?: unknown }).pipe === 'function';
}

/** A stream is sent as it is produced (chunked); a failure mid-stream can only cut the connection. */
export function sendStream(res: ServerResponse, status: number, headers: readonly string[] | Record<string, unknown>, stream: NodeJS.ReadableStream): void {
  res.writeHead(status, headers as never);
  pipeline(stream, res, () => undefined);
}

/** Serialises a body by its type, honouring a content-type the function chose. */
function encodeBody(body: unknown, type: string | undefined): { data: string | Uint8Array; type: string } {
  if (typeof body === 'string') return { data: body, type: type ?? TEXT };
  if (isBytes(body)) return { data: body, type: type ?? OCTET };
  return { data: JSON.stringify(body) ?? '', type: type ?? JSON_TYPE };
}

/** The runtime frames every body itself: a length or transfer coding the function passes along (a request's, say) would break it. */
export const FRAMING: ReadonlySet<string> = new Set(['content-length', 'transfer-encoding']);

function lowerCaseHeaders(headers: StructuredReturn['headers']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (headers && typeof headers === 'object') {
    for (const name of Object.keys(headers)) {
      const lower = name.toLowerCase();
      if (!FRAMING.has(lower)) out[lower] = headers[name];
    }
  }
  return out;
}

function sendStructured(res: ServerResponse, value: StructuredReturn, cors: readonly string[]): void {
  const headers = lowerCaseHeaders(value.headers);
  for (let i = 0; i < cors.length; i += 2) if (!(cors[i]! in headers)) headers[cors[i]!] = cors[i + 1];
  const headersOnly = value.statusCode === undefined && value.body === undefined;
  const body = headersOnly ? value : value.body;
  const status = chosenStatus(value.statusCode, body === undefined ? 204 : 200);
  if (body === undefined || body === null) {
    if (status !== 204 && status !== 304) headers['content-length'] = 0;
    res.writeHead(status, headers as never);
    res.end();
    return;
  }
  if (isReadable(body)) {
    headers['content-type'] ??= OCTET;
    sendStream(res, status, headers, body);
    return;
  }
  const { data, type } = encodeBody(body, headers['content-type'] as string | undefined);
  headers['content-type'] = type;
  headers['content-length'] = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
  res.writeHead(status, headers as never);
  res.end(data);
}

export function sendCloudEvent(res: ServerResponse, event: CloudEventLike, cors: readonly string[]): void {
  let message: ReturnType<typeof encodeBinary>;
  try {
    message = encodeBinary(event, cors);
  } catch (err) {
    throw new RuntimeError('invalid_response', `The function returned an invalid CloudEvent: ${(err as Error).message}.`);
  }
  const body = message.body;
  message.headers.push('content-length', String(body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength));
  res.writeHead(200, message.headers);
  res.end(body);
}

let sentHead: Head | undefined;
let sentLength = -1;
let sent: Head | undefined;

/**
 * writeHead with a flat list sends the head at once, so Node can no longer add content-length
 * itself; without it every response would be chunked. A function answers mostly with the same
 * headers and often with the same length, so the last head is kept and reused.
 */
function sendWith(res: ServerResponse, status: number, head: Head, body: string | Uint8Array): void {
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
  if (head !== sentHead || length !== sentLength) {
    sent = withLength(head, length);
    sentHead = head;
    sentLength = length;
  }
  writeHead(res, status, sent!);
  res.end(body);
}

/** Writes a function's return value: nothing → 204, string → text, bytes → octet-stream, object → JSON. */
export function sendResult(res: ServerResponse, value: unknown, cors: readonly string[]): void {
  if (value === undefined || value === null || value === '') {
    writeHead(res, 204, cors);
    res.end();
  } else if (typeof value === 'string') {
    sendWith(res, 200, withType(cors, TEXT), value);
  } else if (isBytes(value)) {
    sendWith(res, 200, withType(cors, OCTET), value);
  } else if (isReadable(value)) {
    sendStream(res, 200, withType(cors, OCTET), value);
  } else if (typeof value === 'object' && isCloudEvent(value)) {
    sendCloudEvent(res, value, cors);
  } else if (typeof value === 'object' && isStructured(value)) {
    sendStructured(res, value, cors);
  } else {
    sendWith(res, 200, withType(cors, JSON_TYPE), JSON.stringify(value));
  }
}

/** The HTTP status a thrown value asks for: statusCode, then status, then a numeric code, in 400–599. */
export function errorStatus(err: unknown): number | undefined {
  if (err === null || typeof err !== 'object') return undefined;
  const e = err as { statusCode?: unknown; status?: unknown; code?: unknown };
  for (const candidate of [e.statusCode, e.status, e.code]) {
    const n = typeof candidate === 'string' && /^\d{3}$/.test(candidate) ? Number(candidate) : candidate;
    if (typeof n === 'number' && Number.isInteger(n) && n >= 400 && n <= 599) return n;
  }
  return undefined;
}

/** Writes the response for a thrown value; returns the status sent so the caller can log by it. */
export function sendError(res: ServerResponse, err: unknown, reqId: string): number {
  if (err instanceof RuntimeError) {
    sendProblem(res, err.code, err.message, err.status);
    return err.status;
  }
  const status = errorStatus(err) ?? 500;
  if (status < 500) {
    const message = err instanceof Error ? err.message : String((err as { message?: unknown })?.message ?? err);
    sendProblem(res, 'function_error', message, status);
  } else {
    // Never the error's message: it may hold internals (paths, SQL, tokens). The log has it.
    sendProblem(res, status === 503 ? 'function_unavailable' : 'internal_error', `The function failed; see the log entry with reqId ${reqId}.`, status);
  }
  return status;
}
