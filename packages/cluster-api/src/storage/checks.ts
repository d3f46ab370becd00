/**
 * Argument and revision checks shared by every backend, so that each one rejects the same input
 * with the same StorageError (the conformance suite pins it).
 */
import { StorageError } from './errors.js';
import type { ListOptions, WatchOptions } from './interface.js';
import { checkKey, checkPrefix } from './keys.js';

function invalidArg(key: string, message: string): StorageError {
  return new StorageError('InvalidArgument', key, message);
}

export function checkValue(key: string, value: Uint8Array): void {
  if (!(value instanceof Uint8Array)) throw invalidArg(key, `value for ${key} must be a Uint8Array`);
}

/** A revision argument: a non-negative safe integer (0 = latest / unset). */
export function checkRevisionArg(key: string, revision: number | undefined, what = 'revision'): number {
  if (revision === undefined) return 0;
  if (!Number.isSafeInteger(revision) || revision < 0) {
    throw invalidArg(key, `${what} must be a non-negative integer, got ${String(revision)}`);
  }
  return revision;
}

/**
 * Resolves the revision a read happens at: 0 → current; below the compacted revision → Compacted
 * (the API turns it into 410 Gone); beyond the current one → InvalidArgument (etcd's future revision).
 */
export function readRevision(key: string, requested: number | undefined, current: number, compacted: number): number {
  const rev = checkRevisionArg(key, requested);
  if (rev === 0) return current;
  if (rev < compacted) throw compactedError(key, compacted);
  if (rev > current) throw invalidArg(key, `revision ${rev} is in the future (current revision ${current})`);
  return rev;
}

export function compactedError(key: string, compacted: number): StorageError {
  return new StorageError(
    'Compacted',
    key,
    `required revision has been compacted (oldest readable revision is ${compacted})`,
    compacted,
  );
}

export interface ListArgs {
  readonly prefix: string;
  readonly limit: number;
  /** Exclusive lower bound of keys: the larger of the prefix itself and startAfter. */
  readonly after: string;
}

export function checkListOptions(opts: ListOptions): ListArgs {
  if (opts === null || typeof opts !== 'object') throw invalidArg('', 'list options are required');
  checkPrefix(opts.prefix);
  const limit = opts.limit ?? 0;
  if (!Number.isSafeInteger(limit) || limit < 0) throw invalidArg(opts.prefix, `limit must be a non-negative integer, got ${String(limit)}`);
  const startAfter = opts.startAfter ?? '';
  if (typeof startAfter !== 'string') throw invalidArg(opts.prefix, 'startAfter must be a string');
  // The prefix itself is never a key (keys do not end in '/'), so it is a safe exclusive bound.
  return { prefix: opts.prefix, limit, after: startAfter > opts.prefix ? startAfter : opts.prefix };
}

export function closedError(key = ''): StorageError {
  return new StorageError('Unavailable', key, 'storage is closed');
}

export function checkWatchOptions(opts: WatchOptions): void {
  if (opts === null || typeof opts !== 'object') throw invalidArg('', 'watch options are required');
  if (opts.prefix) checkPrefix(opts.key);
  else checkKey(opts.key);
  checkRevisionArg(opts.key, opts.afterRevision, 'afterRevision');
}

export const keyNotFound = (key: string): StorageError => new StorageError('KeyNotFound', key, `key not found: ${key}`);

export const keyExists = (key: string, revision: number): StorageError =>
  new StorageError('KeyExists', key, `key already exists: ${key}`, revision);

/** Conflict carries the actual revision, so the caller can re-read exactly what beat it. */
export const conflict = (key: string, expected: number, actual: number): StorageError =>
  new StorageError('Conflict', key, `revision mismatch for ${key}: expected ${expected}, actual ${actual}`, actual);

/** A compaction target: a revision not beyond the current one. */
export function compactTarget(revision: number, current: number): number {
  const target = checkRevisionArg('', revision);
  if (target > current) throw invalidArg('', `cannot compact to ${target}: beyond the current revision ${current}`);
  return target;
}
