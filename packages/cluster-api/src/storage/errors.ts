/**
 * Storage-layer errors. They carry stable codes (Kubernetes' storage error codes) so that
 * api/errors.ts can map them to API errors without string matching.
 */

export const StorageErrorCodes = [
  'KeyNotFound',
  'KeyExists',
  'Conflict',
  'Compacted',
  'Unavailable',
  'InvalidArgument',
] as const;
export type StorageErrorCode = (typeof StorageErrorCodes)[number];

export class StorageError extends Error {
  override readonly name = 'StorageError';
  constructor(
    readonly code: StorageErrorCode,
    readonly key: string,
    message?: string,
    /** For Conflict: the key's actual revision; for Compacted: the compacted revision. */
    readonly revision?: number,
  ) {
    super(message ?? `${code}: ${key}`);
  }
}

export const isStorageError = (err: unknown, code?: StorageErrorCode): err is StorageError =>
  err instanceof StorageError && (code === undefined || err.code === code);
