/**
 * The embedded default backend (`sqlite:<file>`): better-sqlite3 over the append-only log of
 * log.ts.
 *
 * Durability: WAL with synchronous=NORMAL. A write is acknowledged after its commit reached the WAL
 * file through write(2); it then survives kill -9 of this process (the OS page cache holds it), though
 * not a power cut of the machine.
 *
 * Single writer: the file is opened with locking_mode=EXCLUSIVE, so a second process cannot open it.
 * That makes this process the only source of changes, so watchers are fed in-process right after each
 * commit (fanout.ts) and replay comes from the log; revisions are assigned here (last + 1).
 * Writes are grouped into transactions by batch.ts; reads see only committed revisions.
 */
import type BetterSqlite3 from 'better-sqlite3';
import {
  checkListOptions,
  checkRevisionArg,
  checkValue,
  checkWatchOptions,
  closedError,
  compactedError,
  compactTarget,
  conflict,
  keyExists,
  keyNotFound,
  readRevision,
} from '../checks.js';
import { Compactor, type CompactionPolicy } from '../compactor.js';
import { isStorageError, StorageError } from '../errors.js';
import type { GetOptions, KeyValue, ListOptions, ListResult, Storage, StorageEvent, Watch, WatchHandlers, WatchOptions } from '../interface.js';
import { checkKey, checkPrefix, prefixEnd } from '../keys.js';
import { type BatchWrites, GroupCommit } from './batch.js';
import { HeadCache } from './heads.js';
import {
  compactRange,
  type Head,
  headToKv,
  type LogRow,
  type LogStatements,
  openDatabase,
  openLog,
  rowToEvent,
} from './log.js';
import { backendFanOut } from '../fanout.js';

export interface SqliteOptions {
  /** Background compaction; absent or false = none (the factory turns it on by default). */
  readonly compaction?: CompactionPolicy | false;
  /** How long to wait for a lock held by another process before failing to open. */
  readonly busyTimeoutMs?: number;
  /** Memory for the newest rows of recently used keys (heads.ts); 0 turns the cache off. */
  readonly headCacheBytes?: number;
}

/** Revisions compacted per transaction, so that compaction never blocks requests for long. */
const COMPACT_CHUNK = 2_000;

/** The caller's bytes, as the Buffer the driver binds (no copy: a written value is not modified, see Storage). */
const asBuffer = (value: Uint8Array): Buffer =>
  Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);

export class SqliteStorage implements Storage {
  private readonly st: LogStatements;
  /** The last revision assigned, including writes of the open (uncommitted) batch. */
  private rev: number;
  /** The last committed revision: every read happens at or below it. */
  private committedRev: number;
  private compacted: number;
  private readonly batches: GroupCommit;
  private closed = false;
  private readonly watchers = backendFanOut();
  private readonly compactor: Compactor | undefined;
  private compaction: Promise<number> = Promise.resolve(0);
  private readonly compactTx: (from: number, to: number) => void;
  /** Newest committed rows of recently used keys. */
  private readonly heads: HeadCache;
  /** Newest rows written by the open batch, not committed yet: only the writer's checks see them. */
  private readonly pending = new Map<string, Head>();

  /** Opens (creating if needed, with parent directories) the database file at `path`. */
  static open(path: string, opts: SqliteOptions = {}): SqliteStorage {
    const db = openDatabase(path, opts.busyTimeoutMs ?? 2_000);
    try {
      return new SqliteStorage(db, opts);
    } catch (err) {
      db.close();
      throw new StorageError('Unavailable', path, `cannot open SQLite storage at ${path}: ${(err as Error).message}`);
    }
  }

  private constructor(
    private readonly db: BetterSqlite3.Database,
    opts: SqliteOptions,
  ) {
    this.st = openLog(db);
    this.rev = this.st.sequence.get()?.seq ?? 0;
    this.committedRev = this.rev;
    this.heads = new HeadCache(opts.headCacheBytes);
    this.heads.fill(() => (this.rev > 0 ? this.st.heads.iterate() : []));
    this.batches = new GroupCommit(db, {
      insert: (rows) => {
        const { insert } = this.st;
        for (const r of rows) insert.run(r.id, r.name, r.created, r.deleted, r.create_revision, r.prev_revision, r.value, r.old_value);
      },
      committed: (events) => {
        for (const [key, head] of this.pending) this.heads.set(key, head);
        this.pending.clear();
        if (events.length === 0) return;
        this.committedRev = events.at(-1)!.revision;
        this.watchers.publish(events);
      },
      rolledBack: () => {
        this.pending.clear();
        this.rev = this.committedRev;
      },
    });
    this.compacted = this.st.getMeta.get('compact_revision')?.value ?? 0;
    this.compactTx = db.transaction((from: number, to: number) => compactRange(this.st, from, to));
    if (opts.compaction) {
      this.compactor = new Compactor(this, opts.compaction);
      this.compactor.start();
    }
  }

  getNow(key: string): KeyValue | null {
    return this.guard(key, () => {
      checkKey(key);
      const head = this.committedHead(key);
      return head && !head.deleted ? headToKv(head) : null;
    });
  }

  async get(key: string, opts?: GetOptions): Promise<KeyValue | undefined> {
    return this.guard(key, () => {
      checkKey(key);
      const at = readRevision(key, opts?.revision, this.committedRev, this.compacted);
      if (at !== this.committedRev) {
        const old = this.st.at.get(key, at);
        return old && !old.deleted ? headToKv(old) : undefined;
      }
      const head = this.committedHead(key);
      return head && !head.deleted ? headToKv(head) : undefined;
    });
  }

  async list(opts: ListOptions): Promise<ListResult> {
    return this.guard(opts?.prefix, () => {
      const { prefix, limit, after } = checkListOptions(opts);
      const rev = readRevision(prefix, opts.revision, this.committedRev, this.compacted);
      const end = prefixEnd(prefix);
      const items = this.st.page.all({ after, end, rev, limit: limit || -1 }).map(headToKv);
      const remaining =
        limit > 0 && items.length === limit ? this.st.count.get({ after: items.at(-1)!.key, end, rev })!.n : 0;
      return { items, revision: rev, more: remaining > 0, remaining };
    });
  }

  async count(prefix: string): Promise<number> {
    return this.guard(prefix, () => {
      checkPrefix(prefix);
      return this.st.count.get({ after: prefix, end: prefixEnd(prefix), rev: this.committedRev })!.n;
    });
  }

  async create(key: string, value: Uint8Array): Promise<KeyValue> {
    this.assertOpen(key);
    checkKey(key);
    checkValue(key, value);
    return this.write(key, (batch) => {
      const head = this.newest(key);
      if (head && !head.deleted) throw keyExists(key, head.id);
      const id = this.rev + 1;
      const row = { created: 1, deleted: 0, create_revision: id, prev_revision: head?.id ?? 0, value: asBuffer(value), old_value: null };
      return this.append(key, row, batch).kv;
    });
  }

  async update(key: string, value: Uint8Array, expectedRevision: number): Promise<KeyValue> {
    this.assertOpen(key);
    checkKey(key);
    checkValue(key, value);
    const expected = checkRevisionArg(key, expectedRevision, 'expectedRevision');
    return this.write(key, (batch) => {
      const head = this.live(key, expected);
      const row = { created: 0, deleted: 0, create_revision: head.create_revision, prev_revision: head.id, value: asBuffer(value), old_value: head.value };
      return this.append(key, row, batch).kv;
    });
  }

  async delete(key: string, expectedRevision?: number): Promise<{ prev: KeyValue; revision: number }> {
    this.assertOpen(key);
    checkKey(key);
    const expected = expectedRevision === undefined ? undefined : checkRevisionArg(key, expectedRevision, 'expectedRevision');
    return this.write(key, (batch) => {
      const head = this.live(key, expected);
      const row = { created: 0, deleted: 1, create_revision: head.create_revision, prev_revision: head.id, value: null, old_value: head.value };
      const ev = this.append(key, row, batch);
      return { prev: ev.prevKv!, revision: ev.revision };
    });
  }

  watch(opts: WatchOptions, handlers: WatchHandlers): Watch {
    try {
      this.assertOpen(opts?.key);
      checkWatchOptions(opts);
      const head = this.committedRev;
      const start = opts.afterRevision === 0 ? head : opts.afterRevision;
      if (start < this.compacted) throw compactedError(opts.key, this.compacted);
      // Replay (committed rows only) and registration happen in this one synchronous step; the
      // pending batch reaches the watcher through publish when it commits (see fanout.ts).
      const rows =
        start >= head
          ? []
          : opts.prefix
            ? this.st.replayPrefix.all(opts.key, prefixEnd(opts.key), start, head)
            : this.st.replayKey.all(opts.key, start, head);
      return this.watchers.add(opts, handlers, start, rows.map(rowToEvent));
    } catch (err) {
      return this.watchers.failed(handlers, this.toStorageError(opts?.key ?? '', err));
    }
  }

  async currentRevision(): Promise<number> {
    this.assertOpen();
    return this.committedRev;
  }

  async compactedRevision(): Promise<number> {
    this.assertOpen();
    return this.compacted;
  }

  async compact(revision: number): Promise<number> {
    this.assertOpen();
    const target = compactTarget(revision, this.committedRev);
    // One compaction at a time; a later request continues where the earlier one stopped.
    const run = this.compaction.then(() => this.compactTo(target));
    this.compaction = run.catch(() => 0);
    return run;
  }

  async healthy(): Promise<{ ok: boolean; message?: string }> {
    if (this.closed) return { ok: false, message: 'storage is closed' };
    try {
      this.st.ping.get();
      return this.compactor?.lastError ? { ok: true, message: `compaction failing: ${this.compactor.lastError.message}` } : { ok: true };
    } catch (err) {
      return { ok: false, message: (err as Error).message };
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.compactor?.stop();
    // Writes already accepted are committed and acknowledged; watchers see them before the end.
    await this.batches.idle();
    this.heads.clear();
    this.watchers.failAll(closedError());
    await this.compaction;
    this.db.close();
  }

  private assertOpen(key = ''): void {
    if (this.closed) throw closedError(key);
  }

  /** Runs a synchronous database step; database failures surface as Unavailable. */
  private guard<T>(key: string | undefined, fn: () => T): T {
    this.assertOpen(key);
    try {
      return fn();
    } catch (err) {
      throw this.toStorageError(key ?? '', err);
    }
  }

  private toStorageError(key: string, err: unknown): StorageError {
    if (isStorageError(err)) return err;
    return new StorageError('Unavailable', key, `sqlite storage failure: ${(err as Error)?.message ?? String(err)}`);
  }

  /** The key's newest committed row (null: it has none), from the head cache or else the index. */
  private committedHead(key: string): Head | null {
    let head = this.heads.get(key);
    if (head === undefined) {
      head = this.st.at.get(key, this.committedRev) ?? null;
      this.heads.set(key, head);
    }
    return head;
  }

  /** The key's newest row, including the open batch's writes. */
  private newest(key: string): Head | undefined {
    return this.pending.get(key) ?? this.committedHead(key) ?? undefined;
  }

  private live(key: string, expected: number | undefined): Head {
    const head = this.newest(key);
    if (!head || head.deleted) throw keyNotFound(key);
    if (expected !== undefined && head.id !== expected) {
      throw conflict(key, expected, head.id);
    }
    return head;
  }

  /** One write, checked now against the newest rows, stored with its batch; resolves after the commit. */
  private write<T>(key: string, step: (batch: BatchWrites) => T): Promise<T> {
    return this.batches.run((batch) => this.guard(key, () => step(batch))).catch((err: unknown) => {
      throw this.toStorageError(key, err);
    });
  }

  /**
   * Adds one row at the next revision to the batch; watchers hear of it when the batch commits. The
   * database's UNIQUE(name, prev_revision) still refuses a second successor at commit: a check here
   * that let one through would fail the batch, never store two.
   */
  private append(key: string, row: Omit<LogRow, 'id' | 'name'>, batch: BatchWrites): StorageEvent {
    const full: LogRow = { ...row, id: this.rev + 1, name: key } as LogRow;
    this.rev = full.id;
    this.pending.set(key, { id: full.id, name: key, create_revision: full.create_revision, deleted: full.deleted, value: full.value });
    const ev = rowToEvent(full);
    batch.rows.push(full);
    batch.events.push(ev);
    return ev;
  }

  private async compactTo(target: number): Promise<number> {
    for (;;) {
      // Never inside a write batch: a rollback of the batch must not undo compaction.
      await this.batches.idle();
      if (this.compacted >= target || this.closed) break;
      const from = this.compacted;
      const to = Math.min(target, from + COMPACT_CHUNK);
      this.compactTx(from, to);
      this.compacted = to;
      // Let requests in between chunks.
      await new Promise((r) => setImmediate(r));
    }
    return this.compacted;
  }
}
