/**
 * Request bodies: one raw capture bounded by the body limit, parsed lazily by content type on first
 * read. The limit applies to every content type, so no parser can be made to buffer more than it.
 */
import { Buffer } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import { RuntimeError } from './errors.js';

export const EMPTY = Buffer.alloc(0);

/** True when the request announces a body; GETs without one skip the read entirely. */
export function hasBody(req: IncomingMessage): boolean {
  const h = req.headers;
  return h['transfer-encoding'] !== undefined || (h['content-length'] !== undefined && h['content-length'] !== '0');
}

function tooLarge(limit: number): RuntimeError {
  return new RuntimeError('payload_too_large', `The request body exceeds the limit of ${limit} bytes.`);
}

/** Called once with the body, or with why it cannot be had. */
export type BodyCallback = (err: RuntimeError | undefined, raw: Buffer) => void;

/**
 * Reads the whole body, or stops at payload_too_large as soon as it passes `limit`. A callback, not
 * a promise: this runs for every request with a body, and a promise costs an allocation and a
 * microtask turn each time. On success the listeners are left to go with the request.
 */
export function readBody(req: IncomingMessage, limit: number, done: BodyCallback): void {
  if (Number(req.headers['content-length']) > limit) {
    done(tooLarge(limit), EMPTY);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) {
      settled = true;
      req.off('data', onData);
      // Stop reading until the 413 is written; lingering-close.ts then drains what is still coming.
      req.pause();
      done(tooLarge(limit), EMPTY);
      return;
    }
    chunks.push(chunk);
  };
  req.on('data', onData);
  req.on('end', () => {
    if (settled) return;
    settled = true;
    done(undefined, chunks.length === 1 ? chunks[0]! : chunks.length === 0 ? EMPTY : Buffer.concat(chunks, size));
  });
  // The stream's own message names sockets and parser states; the client needs to know what it sent.
  req.on('error', () => {
    if (settled) return;
    settled = true;
    done(new RuntimeError('invalid_body', 'The request body ended before it was complete: the client aborted the upload, or its chunked encoding is malformed.'), EMPTY);
  });
}

/** The media type without parameters, lower-cased: `application/json; charset=utf-8` → `application/json`. */
export function mediaType(contentType: string | undefined): string {
  if (!contentType) return '';
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

export function isJsonType(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}

/** Parses by content type: JSON (and +json) → value, urlencoded → object, text → string, else Buffer. */
export function parseBody(raw: Buffer, contentType: string | undefined): unknown {
  if (raw.length === 0) return undefined;
  const type = mediaType(contentType);
  if (isJsonType(type)) {
    try {
      return JSON.parse(raw.toString('utf8'));
    } catch (err) {
      throw new RuntimeError('invalid_json', `The body is not valid JSON: ${(err as Error).message}.`);
    }
  }
  if (type === 'application/x-www-form-urlencoded') return { ...parseQueryString(raw.toString('utf8')) };
  if (type.startsWith('text/')) return raw.toString('utf8');
  return raw;
}
