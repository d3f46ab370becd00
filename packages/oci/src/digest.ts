import { createHash } from 'node:crypto';
import type { Digest } from './types.js';

const DIGEST = /^sha256:[a-f0-9]{64}$/;

export function sha256(data: Buffer | string): Digest {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

export function isDigest(value: unknown): value is Digest {
  return typeof value === 'string' && DIGEST.test(value);
}

/** Checks a digest read from outside before it is used as a file name or a URL segment. */
export function parseDigest(value: unknown, what = 'digest'): Digest {
  if (isDigest(value)) return value;
  throw new Error(`Invalid ${what} ${JSON.stringify(String(value).slice(0, 80))}: expected sha256:<64 lowercase hex digits>`);
}

export class DigestMismatchError extends Error {
  override name = 'DigestMismatchError';
  constructor(readonly expected: Digest, readonly actual: Digest, where: string) {
    super(`Digest mismatch for ${where}: expected ${expected}, got ${actual}`);
  }
}

export function verifyDigest(data: Buffer, expected: Digest, where: string): void {
  const actual = sha256(data);
  if (actual !== expected) throw new DigestMismatchError(expected, actual, where);
}

/** Canonical JSON bytes of a document: the digest of a manifest is the digest of exactly these bytes. */
export function jsonBytes(doc: unknown): Buffer {
  return Buffer.from(JSON.stringify(doc));
}
