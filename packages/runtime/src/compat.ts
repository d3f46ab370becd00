/**
 * Compatibility mode (FUNC_COMPAT=faas-js-runtime): where spec 001 and faas-js-runtime 4 differ, a
 * function written for faas-js-runtime 4 gets what it got there. This file is the list: how the
 * body is parsed (Fastify's parsers), what a return value becomes (its invoker.js and Fastify's
 * reply), what a thrown error becomes. The runtime's own safety stays on in this mode: body limits,
 * CloudEvent validation, problem+json for errors the runtime raises, the drain on SIGTERM.
 */
import { Buffer } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import { mediaType } from './body.js';
import { isCloudEvent } from './cloudevents.js';
import { RuntimeError, sendProblem } from './errors.js';
import { chosenStatus, FRAMING, isReadable, sendCloudEvent, sendStream } from './response.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT = 'text/plain; charset=utf-8';

/**
 * Fastify's parsers as faas-js-runtime configured them: application/json → value, text/plain →
 * string ('' for an empty one), urlencoded → object, a structured CloudEvent → its JSON text,
 * anything else → Buffer. A request without a body has none.
 */
export function compatBody(raw: Buffer, req: IncomingMessage): unknown {
  const type = mediaType(req.headers['content-type']);
  if (raw.length === 0) return type === 'text/plain' && req.headers['content-length'] !== undefined ? '' : undefined;
  if (type === 'application/json') {
    try {
      return JSON.parse(raw.toString('utf8'));
    } catch (err) {
      throw new RuntimeError('invalid_json', `The body is not valid JSON: ${(err as Error).message}.`);
    }
  }
  if (type === 'text/plain' || type === 'application/cloudevents+json') return raw.toString('utf8');
  if (type === 'application/x-www-form-urlencoded') return { ...parseQueryString(raw.toString('utf8')) };
  return raw;
}

function corsObject(cors: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < cors.length; i += 2) out[cors[i]!] = cors[i + 1]!;
  return out;
}

function writeReply(res: ServerResponse, status: number, headers: Record<string, unknown>, payload: unknown): void {
  const type = String(headers['content-type'] ?? '');
  if (isReadable(payload)) return sendStream(res, status, headers, payload);
  let data: string | Uint8Array | undefined;
  if (payload === undefined || payload === null) data = undefined;
  else if (typeof payload === 'string' || payload instanceof Uint8Array) data = payload;
  else if (type.startsWith('text/plain')) data = JSON.stringify(payload);
  else if (type.includes('json')) data = JSON.stringify(payload);
  else throw new RuntimeError('invalid_response', `The function returned an object body with content-type "${type}", which only a string or a Buffer can have.`);
  if (data !== undefined) headers['content-length'] = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
  res.writeHead(status, headers as never);
  res.end(data);
}

/**
 * faas-js-runtime's invoker: nothing (any falsy value) → 204 text/plain; a CloudEvent answering an
 * event → binary mode; a string → text; an object → its `headers` and `statusCode` applied, its
 * `body` sent, or the whole object as JSON when it has no body.
 */
export function sendCompatResult(res: ServerResponse, value: unknown, cors: readonly string[], answeringEvent: boolean): void {
  const headers: Record<string, unknown> = { 'content-type': JSON_TYPE, ...corsObject(cors) };
  if (!value) {
    res.writeHead(204, { ...headers, 'content-type': 'text/plain' });
    res.end();
    return;
  }
  if (answeringEvent && isCloudEvent(value)) return sendCloudEvent(res, value, cors);
  if (typeof value === 'string') return writeReply(res, 200, { ...headers, 'content-type': TEXT }, value);
  if (typeof value !== 'object') return writeReply(res, 200, headers, undefined);
  const v = value as { headers?: unknown; statusCode?: unknown; body?: unknown };
  if (v.headers !== null && typeof v.headers === 'object') {
    for (const [name, h] of Object.entries(v.headers)) if (!FRAMING.has(name.toLowerCase())) headers[name.toLowerCase()] = h;
  }
  const status = chosenStatus(v.statusCode || undefined, 200);
  if (v.body !== undefined) return writeReply(res, status, headers, v.body);
  writeReply(res, status, { ...headers, 'content-type': JSON_TYPE }, value);
}

/**
 * faas-js-runtime answered a thrown error with its `code` as the status (500 without one) and its
 * message as plain text, 5xx included. Errors the runtime raises itself keep their problem+json.
 */
export function sendCompatError(res: ServerResponse, err: unknown, reqId: string): number {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  if (err instanceof RuntimeError) {
    sendProblem(res, err.code, err.message, err.status);
    return err.status;
  }
  const code = e?.code;
  if (code !== undefined && code !== null && !(typeof code === 'number' && Number.isInteger(code) && code >= 200 && code <= 599)) {
    sendProblem(res, 'internal_error', `The function failed; see the log entry with reqId ${reqId}.`, 500);
    return 500;
  }
  const status = typeof code === 'number' ? code : 500;
  const message = typeof e?.message === 'string' ? e.message : '';
  res.writeHead(status, { 'content-type': TEXT, 'content-length': Buffer.byteLength(message) });
  res.end(message);
  return status;
}
