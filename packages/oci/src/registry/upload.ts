/**
 * Blob uploads (distribution spec "pushing blobs"): POST opens a session; small blobs go in one
 * PUT (monolithic), large ones in PATCH chunks with Content-Range, then a PUT with the digest.
 * Each answer's Location is the next URL (it may be relative and carries the session state).
 */
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { Digest } from '../types.js';
import type { RegistryClient } from './client.js';
import { pushScope } from './client.js';
import { RegistryError } from './errors.js';

export interface BlobSource {
  digest: Digest;
  size: number;
  /** A file holding the blob, or the bytes themselves. */
  path?: string;
  data?: Buffer;
}

/** A chunk of the blob: bytes (retryable as they are) or a fresh file stream per attempt. */
function part(source: BlobSource, start: number, end: number): Buffer | (() => Readable) {
  if (source.data) return source.data.subarray(start, end + 1);
  if (end < start) return Buffer.alloc(0);
  return () => createReadStream(source.path!, { start, end });
}

function nextLocation(location: string | undefined, base: URL, what: string): string {
  if (!location) throw new RegistryError('protocol', `The registry gave no upload location for ${what}`);
  const url = new URL(location, base);
  return url.pathname + url.search;
}

export async function uploadBlob(client: RegistryClient, repo: string, source: BlobSource): Promise<void> {
  const what = `uploading ${source.digest} to ${repo}`;
  const scopes = [pushScope(repo)];
  const start = await client.request({ method: 'POST', path: `/v2/${repo}/blobs/uploads/`, scopes, what, expect: [202], headers: { 'content-length': '0' } });
  start.stream.resume();
  let location = nextLocation(start.headers.location, client.base, what);
  if (source.size > client.chunkSize) {
    for (let from = 0; from < source.size; from += client.chunkSize) {
      const to = Math.min(from + client.chunkSize, source.size) - 1;
      const res = await client.request({
        method: 'PATCH', path: location, scopes, what, body: part(source, from, to), expect: [202],
        headers: { 'content-type': 'application/octet-stream', 'content-range': `${from}-${to}`, 'content-length': String(to - from + 1) },
      });
      res.stream.resume();
      location = nextLocation(res.headers.location, client.base, what);
    }
  }
  const monolithic = source.size <= client.chunkSize;
  const url = new URL(location, client.base);
  url.searchParams.set('digest', source.digest);
  const done = await client.request({
    method: 'PUT', path: url.pathname + url.search, scopes, what, expect: [201],
    body: monolithic ? part(source, 0, source.size - 1) : Buffer.alloc(0),
    headers: { 'content-type': 'application/octet-stream', 'content-length': String(monolithic ? source.size : 0) },
  });
  done.stream.resume();
}
