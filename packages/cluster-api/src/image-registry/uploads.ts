/**
 * Blob upload sessions (distribution spec "pushing blobs"): a POST opens one, PATCHes append chunks
 * at the offset the session has reached (a chunk elsewhere is a 416), the closing PUT names the
 * digest. Bytes go to a file of the session under the uploads directory, counted against the size
 * limit as they arrive; the blob reaches the image store only once its digest is verified
 * (ImageLayout.writeBlobFrom), so a half or wrong upload is never visible. Sessions live in this
 * process (a restart forgets them, as it empties the directory), at most `maxSessions` at once, and
 * one idle for an hour is dropped.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DigestMismatchError, type ImageLayout } from '@func/oci';
import { DistributionError } from './errors.js';

export interface UploadLimits {
  /** The largest blob taken (default 2 GiB). */
  maxBlobBytes: number;
  /** Sessions open at once (default 64). */
  maxSessions: number;
}

interface Session {
  name: string;
  file: string;
  size: number;
  touched: number;
  busy: boolean;
}

const IdleMs = 3_600_000;
const SessionId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Counts bytes through, failing once they pass the limit. */
class Limit extends Transform {
  passed = 0;
  constructor(private left: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.left -= chunk.length;
    this.passed += chunk.length;
    if (this.left < 0) return done(new DistributionError('SIZE_INVALID', 'blob larger than this registry accepts', 413));
    done(null, chunk);
  }
}

export class Uploads {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly dir: string, private readonly limits: UploadLimits) {}

  /** Empties the directory (sessions of an earlier process cannot be resumed). */
  async open(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
    await mkdir(this.dir, { recursive: true });
  }

  async close(): Promise<void> {
    this.sessions.clear();
    await rm(this.dir, { recursive: true, force: true });
  }

  async start(name: string): Promise<string> {
    await this.expire();
    if (this.sessions.size >= this.limits.maxSessions) throw new DistributionError('TOOMANYREQUESTS', 'too many uploads in progress');
    const id = randomUUID();
    const file = join(this.dir, id);
    await rm(file, { force: true });
    this.sessions.set(id, { name, file, size: 0, touched: Date.now(), busy: false });
    return id;
  }

  /** The session's size so far (the `Range` of its answers: `0-<size-1>`). */
  size(name: string, id: string): number {
    return this.session(name, id).size;
  }

  /** Appends the request's body; `range` (`from-to` of Content-Range) must start at the session's size. */
  async append(name: string, id: string, body: IncomingMessage, range?: string): Promise<number> {
    const s = this.session(name, id);
    if (range !== undefined) {
      const m = /^(\d+)-(\d+)$/.exec(range.trim());
      if (!m || Number(m[1]) !== s.size || Number(m[2]) < Number(m[1]))
        throw new DistributionError('BLOB_UPLOAD_INVALID', `chunk must start at offset ${s.size}`, 416, { range: s.size > 0 ? `0-${s.size - 1}` : '0-0', location: uploadPath(name, id) });
    }
    if (s.busy) throw new DistributionError('BLOB_UPLOAD_INVALID', 'another chunk of this upload is in progress');
    const declared = Number(body.headers['content-length'] ?? NaN);
    if (declared > this.limits.maxBlobBytes - s.size) throw new DistributionError('SIZE_INVALID', 'blob larger than this registry accepts', 413);
    s.busy = true;
    const counter = new Limit(this.limits.maxBlobBytes - s.size);
    try {
      await pipeline(body, counter, createWriteStream(s.file, { flags: 'a' }));
    } catch (err) {
      // What reached the file stays counted: the client resumes from the offset the session reports.
      s.size += counter.passed;
      if (err instanceof DistributionError) {
        await this.cancel(name, id);
        throw err;
      }
      throw new DistributionError('BLOB_UPLOAD_INVALID', 'the upload was interrupted');
    } finally {
      s.busy = false;
      s.touched = Date.now();
    }
    s.size += counter.passed;
    return s.size;
  }

  /** Verifies the digest and moves the blob into the store; the session ends either way. */
  async finish(name: string, id: string, digest: string, layout: ImageLayout): Promise<void> {
    const s = this.session(name, id);
    try {
      await layout.writeBlobFrom(createReadStream(s.file), digest as `sha256:${string}`);
    } catch (err) {
      if (err instanceof DigestMismatchError) throw new DistributionError('DIGEST_INVALID', 'the uploaded content does not match the digest');
      throw err;
    } finally {
      await this.cancel(name, id);
    }
  }

  async cancel(name: string, id: string): Promise<void> {
    const s = this.session(name, id);
    this.sessions.delete(id);
    await rm(s.file, { force: true });
  }

  private session(name: string, id: string): Session {
    const s = SessionId.test(id) ? this.sessions.get(id) : undefined;
    if (!s || s.name !== name) throw new DistributionError('BLOB_UPLOAD_UNKNOWN', 'blob upload unknown to registry');
    return s;
  }

  private async expire(): Promise<void> {
    const now = Date.now();
    for (const [id, s] of this.sessions) if (!s.busy && now - s.touched > IdleMs) await this.cancel(s.name, id);
  }
}

export const uploadPath = (name: string, id: string): string => `/v2/${name}/blobs/uploads/${id}`;
