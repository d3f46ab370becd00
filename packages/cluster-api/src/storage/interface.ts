/**
 * The narrow, byte-level storage contract every backend (memory, sqlite, etcd) implements.
 *
 * It knows keys, bytes and revisions — nothing of kinds, JSON or HTTP. The revision is one global,
 * strictly increasing counter per store (etcd's model); `metadata.resourceVersion` is that revision
 * as a string. Compare-and-swap happens inside the backend (a unique index, an etcd transaction),
 * never as read-then-write in the caller.
 *
 * Keys look like `/registry/<resource>/<namespace>/<name>` (see keys.ts); prefixes end in `/`.
 */

/** One stored value at one revision. */
export interface KeyValue {
  readonly key: string;
  /** May be shared with the backend's cache and with watchers: read it, never modify it. */
  readonly value: Uint8Array;
  /** Revision at which the key was (last) created. */
  readonly createRevision: number;
  /** Revision of the last write to the key; the object's resourceVersion. */
  readonly modRevision: number;
}

export interface GetOptions {
  /** Read the key as it was at this revision; 0 or absent = latest. Below the compacted revision → Compacted. */
  readonly revision?: number;
}

export interface ListOptions {
  /** Keys starting with this prefix (ends in `/`). */
  readonly prefix: string;
  /** Snapshot revision; 0 or absent = latest. Below the compacted revision → Compacted. */
  readonly revision?: number;
  /** At most this many items; 0 or absent = all. */
  readonly limit?: number;
  /** Exclusive start: only keys strictly greater than this one (the continue position). */
  readonly startAfter?: string;
}

export interface ListResult {
  readonly items: KeyValue[];
  /** The snapshot revision the list was read at; pass it back to read the next page consistently. */
  readonly revision: number;
  /** True when more keys under the prefix follow the last item at this revision. */
  readonly more: boolean;
  /** How many keys follow the last returned item (for ListMeta.remainingItemCount); undefined if unknown. */
  readonly remaining?: number;
}

export type StorageEventType = 'put' | 'delete';

/** One change, as delivered by watch, in revision order. */
export interface StorageEvent {
  readonly type: StorageEventType;
  /** For 'put': the new value. For 'delete': the key with an empty value and modRevision = the delete revision. */
  readonly kv: KeyValue;
  /** The value before this change (absent for a create). Needed to emit DELETED with the last state. */
  readonly prevKv?: KeyValue;
  readonly revision: number;
}

export interface WatchOptions {
  /** Keys starting with this prefix, or exactly `key` when `prefix` is false. */
  readonly key: string;
  readonly prefix: boolean;
  /**
   * Deliver every change with revision > afterRevision, in order, none lost, none repeated.
   * 0 = only changes after the watch starts. Below the compacted revision → onError(Compacted).
   */
  readonly afterRevision: number;
}

export interface WatchHandlers {
  /** Called in revision order; a batch holds events of increasing revision. */
  onEvents(events: readonly StorageEvent[]): void;
  /** Terminal: the watch is over after this (Compacted, Unavailable, backend closed). */
  onError(err: Error): void;
}

export interface Watch {
  /** Stop delivering and free everything the watch holds. Idempotent. */
  close(): void;
}

/**
 * Values written are kept as given (a backend may hold them in a cache and hand them to watchers):
 * a caller must not modify a buffer after passing it to create or update.
 */
export interface Storage {
  get(key: string, opts?: GetOptions): Promise<KeyValue | undefined>;
  /**
   * Optional: the latest committed value when the backend holds it at hand (null: the key has none),
   * without a promise; undefined when it cannot answer at once (ask `get`). Reads are the hot path:
   * answering one in the tick that parsed the request saves a chain of promise resolutions.
   */
  getNow?(key: string): KeyValue | null | undefined;
  list(opts: ListOptions): Promise<ListResult>;
  /** Number of keys under the prefix at the latest revision. */
  count(prefix: string): Promise<number>;
  /** Create; fails with KeyExists when the key is live. Returns the new KeyValue. */
  create(key: string, value: Uint8Array): Promise<KeyValue>;
  /**
   * Replace when the key's modRevision equals expectedRevision; Conflict otherwise, KeyNotFound when absent.
   * Returns the new KeyValue.
   */
  update(key: string, value: Uint8Array, expectedRevision: number): Promise<KeyValue>;
  /**
   * Delete, optionally only when modRevision equals expectedRevision (Conflict otherwise).
   * KeyNotFound when absent. Returns the deleted value and the delete revision.
   */
  delete(key: string, expectedRevision?: number): Promise<{ prev: KeyValue; revision: number }>;
  watch(opts: WatchOptions, handlers: WatchHandlers): Watch;
  /** The latest revision of the whole store. */
  currentRevision(): Promise<number>;
  /** Oldest revision still readable (list/get/watch below it → Compacted). */
  compactedRevision(): Promise<number>;
  /**
   * Discard the history at and below `revision` except each key's value at `revision` itself
   * (etcd's compaction): afterwards reads and watches below it fail with Compacted. Driven by the
   * background compactor (compactor.ts). Returns the compacted revision, which never decreases;
   * beyond the current revision → InvalidArgument.
   */
  compact(revision: number): Promise<number>;
  /** Reachable and writable; for /readyz and ComponentStatus. */
  healthy(): Promise<{ ok: boolean; message?: string }>;
  close(): Promise<void>;
}
