/**
 * The etcd backend (`etcd://host:2379,…`): Kubernetes' etcd3 store over the etcd3 client.
 *
 * etcd is the revision source and the compare-and-swap: create is a transaction on
 * `mod_revision == 0`, update and delete are transactions on `mod_revision == expected` (plus
 * `create_revision > 0`, so an absent key is KeyNotFound, never re-created). Several API servers
 * may share one cluster: nothing here assumes this process is the only writer, so watches come from
 * etcd itself (watch.ts) and the compacted revision is whatever etcd reports.
 *
 * Retries: reads are retried on another member within the call's deadline; a write is retried only
 * when it surely never left this process, so no write is applied twice.
 */
import type { Etcd3, ICompare, IKeyValue, IRequestOp, ITxnResponse } from 'etcd3';
import { checkListOptions, checkRevisionArg, checkValue, checkWatchOptions, closedError, conflict, keyExists, keyNotFound } from '../checks.js';
import { Compactor, type CompactionPolicy } from '../compactor.js';
import { bounded, connectEtcd, DEFAULT_ETCD_TIMEOUT_MS, type EtcdClientOptions, isCompactedError, neverSent, toStorageError } from './client.js';
import { GetBatcher } from './reads.js';
import { EtcdWatch, kvFromEtcd } from './watch.js';
import { isStorageError, StorageError } from '../errors.js';
import type { GetOptions, KeyValue, ListOptions, ListResult, Storage, Watch, WatchHandlers, WatchOptions } from '../interface.js';
import { checkKey, checkPrefix, prefixEnd, REGISTRY_ROOT } from '../keys.js';
import { backendFanOut } from '../fanout.js';

export interface EtcdOptions extends EtcdClientOptions {
  /** Background compaction; absent or false = none (the factory turns it on by default). */
  readonly compaction?: CompactionPolicy | false;
}

const MAX_ATTEMPTS = 3;
const bytes = (s: string): Buffer => Buffer.from(s, 'latin1');
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `If(mod_revision == expected && create_revision > 0)`: the key is live at exactly that revision. */
const liveAt = (key: Buffer, expected: number): ICompare[] => [
  { key, target: 'Mod', result: 'Equal', mod_revision: expected },
  { key, target: 'Create', result: 'Greater', create_revision: 0 },
];

const rangeOp = (key: Buffer): IRequestOp => ({ request_range: { key, keys_only: true } });

/** The key's current revisions from a failed transaction's `Else(Get(key))`. */
const elseKv = (res: ITxnResponse): IKeyValue | undefined => res.responses[0]?.response_range?.kvs[0];

export class EtcdStorage implements Storage {
  private readonly client: Etcd3;
  private readonly timeoutMs: number;
  private compacted = 0;
  private closed = false;
  private readonly watches = new Set<EtcdWatch>();
  /** Start points of `afterRevision: 0` watches still being fetched; later writes wait for them. */
  private readonly pendingStarts = new Set<Promise<number>>();
  private readonly failedWatches = backendFanOut();
  private readonly compactor: Compactor | undefined;
  private readonly latest = new GetBatcher((keys) =>
    this.read('', 0, async () => {
      if (keys.length === 1) return [(await this.client.kv.range({ key: keys[0] })).kvs[0]];
      const res = await this.client.kv.txn({ success: keys.map((key) => ({ request_range: { key } })) });
      return res.responses.map((r) => r.response_range.kvs[0]);
    }),
  );

  /** `location` is the storage URL after `etcd:` (`//host:port,…`). */
  constructor(location: string, opts: EtcdOptions = {}) {
    this.client = connectEtcd(location, opts);
    this.timeoutMs = opts.requestTimeoutMs ?? DEFAULT_ETCD_TIMEOUT_MS;
    if (opts.compaction) {
      this.compactor = new Compactor(this, opts.compaction);
      this.compactor.start();
    }
  }

  async get(key: string, opts?: GetOptions): Promise<KeyValue | undefined> {
    checkKey(key);
    const revision = checkRevisionArg(key, opts?.revision);
    if (this.closed) throw closedError(key);
    if (revision === 0) {
      const kv = await this.latest.get(bytes(key));
      return kv && kvFromEtcd(kv);
    }
    const res = await this.read(key, revision, () => this.client.kv.range({ key: bytes(key), revision }));
    return res.kvs[0] && kvFromEtcd(res.kvs[0]);
  }

  async list(opts: ListOptions): Promise<ListResult> {
    const { prefix, limit, after } = checkListOptions(opts);
    const revision = checkRevisionArg(prefix, opts.revision);
    // The first key strictly after `after` (a key, or the prefix, which is never a key).
    const start = after === prefix ? prefix : `${after}\0`;
    const range = { key: bytes(start), range_end: bytes(prefixEnd(prefix)), revision, limit };
    const res = await this.read(prefix, revision, () => this.client.kv.range(range));
    const items = res.kvs.map(kvFromEtcd);
    const remaining = Number(res.count) - items.length;
    return { items, revision: revision || Number(res.header.revision), more: res.more && remaining > 0, remaining };
  }

  async count(prefix: string): Promise<number> {
    checkPrefix(prefix);
    const res = await this.read(prefix, 0, () =>
      this.client.kv.range({ key: bytes(prefix), range_end: bytes(prefixEnd(prefix)), count_only: true }),
    );
    return Number(res.count);
  }

  async create(key: string, value: Uint8Array): Promise<KeyValue> {
    checkKey(key);
    checkValue(key, value);
    const k = bytes(key);
    const v = Buffer.from(value);
    const res = await this.write(key, () =>
      this.client.kv.txn({
        compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: 0 }],
        success: [{ request_put: { key: k, value: v } }],
        failure: [rangeOp(k)],
      }),
    );
    const rev = Number(res.header.revision);
    if (!res.succeeded) throw keyExists(key, Number(elseKv(res)?.mod_revision ?? rev));
    return { key, value: v, createRevision: rev, modRevision: rev };
  }

  async update(key: string, value: Uint8Array, expectedRevision: number): Promise<KeyValue> {
    checkKey(key);
    checkValue(key, value);
    const expected = checkRevisionArg(key, expectedRevision, 'expectedRevision');
    const k = bytes(key);
    const v = Buffer.from(value);
    const res = await this.write(key, () =>
      this.client.kv.txn({ compare: liveAt(k, expected), success: [{ request_put: { key: k, value: v } }, rangeOp(k)], failure: [rangeOp(k)] }),
    );
    if (!res.succeeded) throw this.casFailure(key, expected, res);
    const now = res.responses[1]!.response_range.kvs[0]!;
    return { key, value: v, createRevision: Number(now.create_revision), modRevision: Number(res.header.revision) };
  }

  async delete(key: string, expectedRevision?: number): Promise<{ prev: KeyValue; revision: number }> {
    checkKey(key);
    const expected = expectedRevision === undefined ? undefined : checkRevisionArg(key, expectedRevision, 'expectedRevision');
    const k = bytes(key);
    const del = { request_delete_range: { key: k, prev_kv: true } };
    const res = await this.write(key, () =>
      this.client.kv.txn(expected === undefined ? { success: [del] } : { compare: liveAt(k, expected), success: [del], failure: [rangeOp(k)] }),
    );
    if (!res.succeeded) throw this.casFailure(key, expected ?? 0, res);
    const prev = res.responses[0]!.response_delete_range.prev_kvs[0];
    if (!prev) throw keyNotFound(key);
    return { prev: kvFromEtcd(prev), revision: Number(res.header.revision) };
  }

  watch(opts: WatchOptions, handlers: WatchHandlers): Watch {
    try {
      if (this.closed) throw closedError(opts?.key);
      checkWatchOptions(opts);
    } catch (err) {
      return this.failedWatches.failed(handlers, err as Error);
    }
    let start: Promise<number> = Promise.resolve(opts.afterRevision);
    if (opts.afterRevision === 0) {
      // "From now" must include every write this process starts after watch() returns.
      start = this.currentRevision();
      this.pendingStarts.add(start);
      const done = () => this.pendingStarts.delete(start);
      start.then(done, done);
    }
    const w = new EtcdWatch(this.client, opts, handlers, start, (rev) => this.noteCompacted(rev), (x) => this.watches.delete(x));
    this.watches.add(w);
    return w;
  }

  async currentRevision(): Promise<number> {
    const res = await this.read('', 0, () => this.client.kv.range({ key: bytes(REGISTRY_ROOT), count_only: true }));
    return Number(res.header.revision);
  }

  async compactedRevision(): Promise<number> {
    if (this.closed) throw closedError();
    return this.compacted;
  }

  async compact(revision: number): Promise<number> {
    const target = checkRevisionArg('', revision);
    if (this.closed) throw closedError();
    if (target <= this.compacted) return this.compacted;
    try {
      await this.call('', false, () => this.client.kv.compact({ revision: target, physical: false }));
      return this.noteCompacted(target);
    } catch (err) {
      // Another API server (or etcdctl) compacted at or beyond the target already.
      if (isStorageError(err, 'Compacted')) return this.noteCompacted(target);
      throw err;
    }
  }

  async healthy(): Promise<{ ok: boolean; message?: string }> {
    if (this.closed) return { ok: false, message: 'storage is closed' };
    try {
      await this.currentRevision();
      return { ok: true };
    } catch (err) {
      return { ok: false, message: (err as Error).message };
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.compactor?.stop();
    for (const w of [...this.watches]) w.fail(closedError());
    this.client.close();
  }

  private noteCompacted(revision: number): number {
    this.compacted = Math.max(this.compacted, revision);
    return this.compacted;
  }

  private casFailure(key: string, expected: number, res: ITxnResponse): StorageError {
    const now = elseKv(res);
    return now ? conflict(key, expected, Number(now.mod_revision)) : keyNotFound(key);
  }

  /** A read, retried on another member while the deadline allows; Compacted carries etcd's revision. */
  private async read<T>(key: string, revision: number, op: () => Promise<T>): Promise<T> {
    try {
      return await this.call(key, true, op);
    } catch (err) {
      if (!isStorageError(err, 'Compacted')) throw err;
      const compacted = this.compacted > revision ? this.compacted : await this.probeCompacted(revision);
      throw toStorageError(new Error('required revision has been compacted'), key, compacted);
    }
  }

  private async write<T>(key: string, op: () => Promise<T>): Promise<T> {
    if (this.pendingStarts.size > 0) await Promise.allSettled([...this.pendingStarts]);
    return this.call(key, false, op);
  }

  private call<T>(key: string, idempotent: boolean, op: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(closedError(key));
    const deadline = Date.now() + this.timeoutMs;
    const attempt = async (n: number): Promise<T> => {
      try {
        return await op();
      } catch (err) {
        if (this.closed) throw closedError(key);
        if (isCompactedError(err)) throw toStorageError(err, key, this.compacted);
        const se = toStorageError(err, key);
        // Never send a retry after the caller may have been told Unavailable.
        const inTime = Date.now() + 20 * n < deadline;
        const again = n < MAX_ATTEMPTS && inTime && se.code === 'Unavailable' && (idempotent || neverSent(err));
        if (!again) throw se;
        await sleep(20 * n);
        return attempt(n + 1);
      }
    };
    return bounded(attempt(1), this.timeoutMs, key);
  }

  /**
   * etcd's read errors do not say how far history was compacted; a watch from the refused revision
   * does (its cancel carries compact_revision). Only on this rare path.
   */
  private probeCompacted(revision: number): Promise<number> {
    return new Promise((resolve) => {
      const opts = { key: REGISTRY_ROOT, prefix: true, afterRevision: revision };
      let w: EtcdWatch | undefined;
      const timer = setTimeout(() => (w?.close(), resolve(this.compacted)), 2_000);
      const done = (): void => {
        clearTimeout(timer);
        w?.close();
        resolve(this.compacted);
      };
      w = new EtcdWatch(this.client, opts, { onEvents: done, onError: done }, Promise.resolve(opts.afterRevision), (rev) => this.noteCompacted(rev), () => undefined);
    });
  }
}
