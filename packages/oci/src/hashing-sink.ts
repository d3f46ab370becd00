import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import type { Digest } from './types.js';

/** A pass-through stream that hashes and counts what flows through it. */
export class HashingSink extends Transform {
  private readonly hash: Hash = createHash('sha256');
  size = 0;

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.size += chunk.length;
    done(null, chunk);
  }

  digest(): Digest {
    return `sha256:${this.hash.digest('hex')}`;
  }
}
