/**
 * Request bodies: read once, bounded by kube-apiserver's 3 MiB limit. A declared Content-Length over
 * the limit is refused before a byte is kept; a chunked body as soon as it crosses it. The rest of a
 * refused body is read and dropped (up to `DiscardBytes`), so that the client, still sending, reads
 * the 413 on a connection that stays usable rather than a reset.
 */
import type { IncomingMessage } from 'node:http';
import { malformedBody, tooLarge } from '../api/errors.js';

/** Kubernetes' default request body limit (apiserver MaxRequestBodyBytes, 3 MiB). */
export const MaxRequestBodyBytes = 3 * 1024 * 1024;

/** How much of a refused body is read and dropped before the connection is cut instead. */
export const DiscardBytes = 4 * MaxRequestBodyBytes;

export function readBody(req: IncomingMessage, limit = MaxRequestBodyBytes): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(refuse(req, limit, 0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        reject(refuse(req, limit, size));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    // A client that goes away mid-body ('aborted', then 'close'): its fault, not a server error to log;
    // settle either way so nothing waits on a request that will never end.
    const early = (): void => reject(malformedBody('the request body ended early'));
    req.once('error', early);
    req.once('close', () => req.complete || early());
  });
}

/** The 413 for a body over `limit`; what is left of it is dropped as it arrives, past `DiscardBytes` the connection is cut. */
function refuse(req: IncomingMessage, limit: number, read: number): Error {
  let dropped = read;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DiscardBytes) req.socket.destroy();
  });
  req.resume();
  return tooLarge(limit);
}

/** An empty body is "no body" (DELETE without DeleteOptions), not an empty JSON document. */
export function hasBody(bytes: Buffer): boolean {
  // Looks at the leading bytes only: decoding a whole body to a string here would be done again later.
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === 0x20 || (b >= 0x09 && b <= 0x0d)) continue;
    // A non-ASCII byte may start Unicode whitespace (what trim() removes too): decide on the text.
    return b < 0x80 || bytes.toString('utf8').trim().length > 0;
  }
  return false;
}
