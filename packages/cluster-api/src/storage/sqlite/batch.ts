/**
 * Group commit for the SQLite backend: the writes that arrive within one turn of the event loop
 * share one transaction, committed in a setImmediate. The WAL append per commit is the cost of a
 * write, so concurrent clients get several times the throughput of one commit per write.
 *
 * A write's checks run when it arrives, against the owner's in-memory view (the newest committed
 * rows plus the batch's own); its row goes to the database only at commit, with the batch's other
 * rows in one tight loop. Inserting them one by one between requests was measured at several times
 * the cost: SQLite's B-tree code and pages are cold by the time the next request reaches it.
 *
 * Invariants that keep it correct:
 * - A write is acknowledged (its promise resolves) only after COMMIT returned: kill -9 then keeps it.
 * - Readers never see a pending write: they read at the committed revision, which moves only after
 *   COMMIT (the owner's `committed` hook), and watchers are told in that same hook.
 * - If an insert or COMMIT fails, or SQLite rolled the transaction back by itself (disk full, I/O
 *   error), every write of the batch fails with Unavailable and the owner rewinds (`rolledBack`).
 * - A write whose check fails (KeyExists, Conflict) fails alone: it added nothing to the batch.
 */
import type { Database } from 'better-sqlite3';
import { isStorageError, StorageError } from '../errors.js';
import type { StorageEvent } from '../interface.js';
import type { LogRow } from './log.js';

/** What a write adds to the open batch: its row, and the event watchers get once it is committed. */
export interface BatchWrites {
  readonly rows: LogRow[];
  readonly events: StorageEvent[];
}

interface Batch extends BatchWrites {
  readonly done: Promise<void>;
  resolve(): void;
  reject(err: Error): void;
}

export interface BatchHooks {
  /** Inside the transaction, at commit: store the batch's rows in order. */
  insert(rows: readonly LogRow[]): void;
  /** After COMMIT: the batch's events, in revision order. */
  committed(events: readonly StorageEvent[]): void;
  /** After a rollback: nothing of the batch was stored. */
  rolledBack(): void;
}

export class GroupCommit {
  private open: Batch | undefined;

  constructor(
    private readonly db: Database,
    private readonly hooks: BatchHooks,
  ) {}

  /**
   * Runs `step` synchronously against the open batch (opening one if needed); `step` adds its row and
   * event to it, or throws and adds nothing. Resolves with its result once the batch committed.
   */
  async run<T>(step: (batch: BatchWrites) => T): Promise<T> {
    const batch = this.open ?? this.begin();
    let result: T;
    try {
      result = step(batch);
    } catch (err) {
      // Refused against the batch's own writes (a Conflict with a pending update): answer once they
      // are committed, so a caller that reads and retries reads them, rather than retrying at once
      // against the committed past until its attempts run out.
      if (batch.rows.length > 0) await batch.done.catch(() => undefined);
      throw err;
    }
    await batch.done;
    return result;
  }

  /** Resolves once no batch is open (compaction and close run between batches). */
  async idle(): Promise<void> {
    while (this.open) await this.open.done.catch(() => undefined);
  }

  private begin(): Batch {
    let resolve!: () => void;
    let reject!: (err: Error) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Every writer awaits `done`; this only keeps a batch whose writers all failed from being "unhandled".
    done.catch(() => undefined);
    const batch: Batch = { rows: [], events: [], done, resolve, reject };
    this.open = batch;
    setImmediate(() => this.commit(batch));
    return batch;
  }

  private commit(batch: Batch): void {
    if (this.open !== batch) return;
    this.open = undefined;
    if (batch.rows.length > 0) {
      try {
        this.db.exec('BEGIN IMMEDIATE');
        this.hooks.insert(batch.rows);
        this.db.exec('COMMIT');
      } catch (err) {
        this.abort(batch, err);
        return;
      }
    }
    this.hooks.committed(batch.events);
    batch.resolve();
  }

  private abort(batch: Batch, cause: unknown): void {
    if (this.db.inTransaction) {
      try {
        this.db.exec('ROLLBACK');
      } catch {
        // The connection is already unusable; the writes below are reported as failed either way.
      }
    }
    this.hooks.rolledBack();
    const message = isStorageError(cause) ? cause.message : ((cause as Error)?.message ?? String(cause));
    batch.reject(new StorageError('Unavailable', '', `write not stored, the transaction was rolled back: ${message}`));
  }
}
