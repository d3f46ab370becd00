/**
 * The in-memory backend (`memory:`): the same semantics as SQLite and etcd — one global revision,
 * per-key history for reads at a past revision, compaction, watch with replay — without durability.
 * Every operation runs synchronously inside its async call, so a compare-and-swap cannot interleave
 * with another write.
 */
import {
  checkListOptions,
  checkRevisionArg,
  checkValue,
  checkWatchOptions,
  closedError,
  compactTarget,
  conflict,
  keyExists,
  keyNotFound,
  compactedError,
  readRevision,
} from '../checks.js';
import { Compactor, type CompactionPolicy } from '../compactor.js';
import type {
  GetOptions,
  KeyValue,
  ListOptions,
  ListResult,
  Storage,
  StorageEvent,
  Watch,
  WatchHandlers,
  WatchOptions,
} from '../interface.js';
import { checkKey, checkPrefix, prefixEnd } from '../keys.js';
import { backendFanOut } from '../fanout.js';

/** One write to a key; `value === null` is a deletion (tombstone). */
interface Version {
  readonly value: Uint8Array | null;
  readonly createRevision: number;
  readonly modRevision: number;
}

const EMPTY = new Uint8Array(0);

/** Events share the stored bytes (one copy per revision); values handed to callers are copies. */
function kvOf(key: string, v: Version): KeyValue {
  return { key, value: v.value ?? EMPTY, createRevision: v.createRevision, modRevision: v.modRevision };
}

function toKv(key: string, v: Version): KeyValue {
  return { key, value: (v.value ?? EMPTY).slice(), createRevision: v.createRevision, modRevision: v.modRevision };
}

/** The version visible at `rev`, or undefined when the key did not exist then. */
function visibleAt(versions: readonly Version[] | undefined, rev: number): Version | undefined {
  if (!versions) return undefined;
  for (let i = versions.length - 1; i >= 0; i--) {
    const v = versions[i]!;
    if (v.modRevision <= rev) return v.value === null ? undefined : v;
  }
  return undefined;
}

/** Index of the first element of sorted `arr` greater than `s`. */
function upperBound(arr: readonly string[], s: string): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid]! <= s) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface MemoryOptions {
  /** Background compaction; absent or false = none (the factory turns it on by default). */
  readonly compaction?: CompactionPolicy | false;
}

export class MemoryStorage implements Storage {
  private readonly history = new Map<string, Version[]>();
  /** Every key with history, sorted: list walks a prefix range of it. */
  private readonly keys: string[] = [];
  /** The changes after `compacted`, in order: log[i].revision === compacted + 1 + i. */
  private log: StorageEvent[] = [];
  private rev = 0;
  private compacted = 0;
  private closed = false;
  private readonly watchers = backendFanOut();
  private readonly compactor: Compactor | undefined;

  constructor(opts: MemoryOptions = {}) {
    if (opts.compaction) {
      this.compactor = new Compactor(this, opts.compaction);
      this.compactor.start();
    }
  }

  getNow(key: string): KeyValue | null {
    this.assertOpen(key);
    checkKey(key);
    const v = visibleAt(this.history.get(key), this.rev);
    return v ? toKv(key, v) : null;
  }

  async get(key: string, opts?: GetOptions): Promise<KeyValue | undefined> {
    this.assertOpen(key);
    checkKey(key);
    const at = readRevision(key, opts?.revision, this.rev, this.compacted);
    const v = visibleAt(this.history.get(key), at);
    return v && toKv(key, v);
  }

  async list(opts: ListOptions): Promise<ListResult> {
    this.assertOpen(opts?.prefix);
    const { prefix, limit, after } = checkListOptions(opts);
    const at = readRevision(prefix, opts.revision, this.rev, this.compacted);
    const end = prefixEnd(prefix);
    const items: KeyValue[] = [];
    let remaining = 0;
    for (let i = upperBound(this.keys, after); i < this.keys.length && this.keys[i]! < end; i++) {
      const key = this.keys[i]!;
      const v = visibleAt(this.history.get(key), at);
      if (!v) continue;
      if (limit === 0 || items.length < limit) items.push(toKv(key, v));
      else remaining++;
    }
    return { items, revision: at, more: remaining > 0, remaining };
  }

  async count(prefix: string): Promise<number> {
    this.assertOpen(prefix);
    checkPrefix(prefix);
    const end = prefixEnd(prefix);
    let n = 0;
    for (let i = upperBound(this.keys, prefix); i < this.keys.length && this.keys[i]! < end; i++) {
      if (this.history.get(this.keys[i]!)!.at(-1)!.value !== null) n++;
    }
    return n;
  }

  async create(key: string, value: Uint8Array): Promise<KeyValue> {
    this.assertOpen(key);
    checkKey(key);
    checkValue(key, value);
    const last = this.history.get(key)?.at(-1);
    if (last && last.value !== null) {
      throw keyExists(key, last.modRevision);
    }
    const rev = this.rev + 1;
    const next: Version = { value: new Uint8Array(value), createRevision: rev, modRevision: rev };
    this.commit(key, next);
    return toKv(key, next);
  }

  async update(key: string, value: Uint8Array, expectedRevision: number): Promise<KeyValue> {
    this.assertOpen(key);
    checkKey(key);
    checkValue(key, value);
    const last = this.live(key, checkRevisionArg(key, expectedRevision, 'expectedRevision'));
    const next: Version = { value: new Uint8Array(value), createRevision: last.createRevision, modRevision: this.rev + 1 };
    this.commit(key, next, last);
    return toKv(key, next);
  }

  async delete(key: string, expectedRevision?: number): Promise<{ prev: KeyValue; revision: number }> {
    this.assertOpen(key);
    checkKey(key);
    const expected = expectedRevision === undefined ? undefined : checkRevisionArg(key, expectedRevision, 'expectedRevision');
    const last = this.live(key, expected);
    const ev = this.commit(key, { value: null, createRevision: last.createRevision, modRevision: this.rev + 1 }, last);
    return { prev: toKv(key, last), revision: ev.revision };
  }

  watch(opts: WatchOptions, handlers: WatchHandlers): Watch {
    try {
      this.assertOpen(opts?.key);
      checkWatchOptions(opts);
      const start = opts.afterRevision === 0 ? this.rev : opts.afterRevision;
      if (start < this.compacted) throw compactedError(opts.key, this.compacted);
      // Replay and registration happen in this one synchronous step (see fanout.ts).
      const replay = this.log.slice(Math.max(0, start - this.compacted));
      return this.watchers.add(opts, handlers, start, replay);
    } catch (err) {
      return this.watchers.failed(handlers, err as Error);
    }
  }

  async currentRevision(): Promise<number> {
    this.assertOpen();
    return this.rev;
  }

  async compactedRevision(): Promise<number> {
    this.assertOpen();
    return this.compacted;
  }

  async compact(revision: number): Promise<number> {
    this.assertOpen();
    const target = compactTarget(revision, this.rev);
    if (target <= this.compacted) return this.compacted;
    const dropped = this.log.slice(0, target - this.compacted);
    this.log = this.log.slice(target - this.compacted);
    this.compacted = target;
    for (const key of new Set(dropped.map((ev) => ev.kv.key))) this.trim(key, target);
    return target;
  }

  async healthy(): Promise<{ ok: boolean; message?: string }> {
    return this.closed ? { ok: false, message: 'storage is closed' } : { ok: true };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.compactor?.stop();
    this.watchers.failAll(closedError());
  }

  private assertOpen(key = ''): void {
    if (this.closed) throw closedError(key);
  }

  /** The live latest version, checked against an optional expected modRevision. */
  private live(key: string, expected: number | undefined): Version {
    const last = this.history.get(key)?.at(-1);
    if (!last || last.value === null) throw keyNotFound(key);
    if (expected !== undefined && last.modRevision !== expected) {
      throw conflict(key, expected, last.modRevision);
    }
    return last;
  }

  private commit(key: string, next: Version, prev?: Version): StorageEvent {
    let versions = this.history.get(key);
    if (!versions) {
      versions = [];
      this.history.set(key, versions);
      this.keys.splice(upperBound(this.keys, key), 0, key);
    }
    versions.push(next);
    this.rev = next.modRevision;
    const ev: StorageEvent = {
      type: next.value === null ? 'delete' : 'put',
      kv: next.value === null ? { key, value: EMPTY, createRevision: 0, modRevision: this.rev } : kvOf(key, next),
      ...(prev && { prevKv: kvOf(key, prev) }),
      revision: this.rev,
    };
    this.log.push(ev);
    this.watchers.publish([ev]);
    return ev;
  }

  /** Drops versions of `key` that no read at or above `floor` can see. */
  private trim(key: string, floor: number): void {
    const versions = this.history.get(key);
    if (!versions) return;
    let keepFrom = 0;
    for (let i = versions.length - 1; i >= 0; i--) {
      if (versions[i]!.modRevision <= floor) {
        keepFrom = versions[i]!.value === null ? i + 1 : i;
        break;
      }
    }
    if (keepFrom > 0) versions.splice(0, keepFrom);
    if (versions.length > 0) return;
    this.history.delete(key);
    this.keys.splice(upperBound(this.keys, key) - 1, 1);
  }
}
