/**
 * Writing answers: one function for objects, one for errors. Every error leaves through `sendError`
 * so its body is always a Status (status.ts) in the representation the client can read.
 */
import type { ServerResponse } from 'node:http';
import type { OutputFormat } from './negotiate.js';
import { encode } from './negotiate.js';
import { Newline } from './json.js';
import { statusOf } from './status.js';

export function send(res: ServerResponse, code: number, value: unknown, format: OutputFormat = 'json', pretty = false): void {
  const { contentType, body } = encode(value, format === 'table' ? 'json' : format, pretty);
  const length = Buffer.byteLength(body);
  res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': length });
  endBody(res, body, length);
}

/** An answer already encoded, sent as it is. */
export function sendBytes(res: ServerResponse, code: number, body: Uint8Array, contentType: string): void {
  res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': body.byteLength });
  endBody(res, body, body.byteLength);
}

/** Compact JSON spliced from stored bytes, ended with json.Encoder's newline (written after it: no copy of a large list). */
export function sendStoredJson(res: ServerResponse, code: number, body: Uint8Array): void {
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': body.byteLength + 1 });
  endDrained(res, body, Newline);
}

/** A body in one piece: ended at once when it fits the socket's buffer, else its last byte held back. */
function endBody(res: ServerResponse, body: string | Uint8Array, length: number): void {
  if (length < res.writableHighWaterMark) return void res.end(body);
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  endDrained(res, bytes.subarray(0, -1), bytes.subarray(-1));
}

/**
 * Ends an answer, its last bytes sent only once the rest has left
 * the socket. Node's HTTP/1.1 server pauses a kept-alive connection whose writes still wait to drain
 * when the next request arrives on it, and over TLS its parser then fails on the rest of that
 * request's body (HPE_PAUSED) and destroys the socket: the client reads a connection reset. A client
 * sends its next request only once it has the whole answer, so holding the end back until the drain
 * closes that window. A body that fits the socket's buffer (the common case) leaves in one write.
 */
function endDrained(res: ServerResponse, body: Uint8Array, last: Uint8Array): void {
  // Corked, so headers, body and end leave in one write when nothing has to wait; end() uncorks.
  res.cork();
  if (res.write(body)) return void res.end(last);
  res.uncork();
  res.once('drain', () => res.end(last));
}

/** Errors are JSON unless the client asked for YAML or protobuf: a Table client still parses a JSON Status. */
/** `requestId`: a server error's, also sent as `Audit-Id` (kube-apiserver's header for it). */
export function sendError(res: ServerResponse, err: unknown, format: OutputFormat = 'json', requestId?: string, pretty = false): void {
  const status = statusOf(err, requestId);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (requestId) res.setHeader('Audit-Id', requestId);
  // As responsewriters.ErrorNegotiated: the header only for a positive hint.
  const retry = status.details?.retryAfterSeconds;
  if (retry) res.setHeader('Retry-After', String(retry));
  send(res, status.code, status, format === 'table' ? 'json' : format, pretty);
}

export function sendText(res: ServerResponse, code: number, text: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
