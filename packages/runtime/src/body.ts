/**
 * Request bodies: one raw capture bounded by the body limit, parsed lazily by content type on first
 * read. The limit applies to every content type, so no parser can be made to buffer more than it.
 */
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

/** Reads the whole body, or rejects with payload_too_large as soon as it passes `limit`. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        // Stop reading: the socket closes after the 413, so an endless upload costs nothing more.
        req.pause();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : chunks.length === 0 ? EMPTY : Buffer.concat(chunks, size));
    };
    // The stream's own message names sockets and parser states; the client needs to know what it sent.
    const onError = () => {
      cleanup();
      reject(new RuntimeError('invalid_body', 'The request body ended before it was complete: the client aborted the upload, or its chunked encoding is malformed.'));
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
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
