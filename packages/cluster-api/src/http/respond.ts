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
  res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** An answer already encoded, sent as it is. */
export function sendBytes(res: ServerResponse, code: number, body: Uint8Array, contentType: string): void {
  res.writeHead(code, { 'Content-Type': contentType, 'Content-Length': body.byteLength });
  res.end(body);
}

/** Compact JSON spliced from stored bytes, ended with json.Encoder's newline (written after it: no copy of a large list). */
export function sendStoredJson(res: ServerResponse, code: number, body: Uint8Array): void {
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': body.byteLength + 1 });
  // Corked, so body and newline leave in one write; end() uncorks.
  res.cork();
  res.write(body);
  res.end(Newline);
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
