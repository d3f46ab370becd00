/**
 * Group commit for the SQLite backend: the writes that arrive within one turn of the event loop
 * share one transaction, committed in a setImmediate. The WAL append per commit is the cost of a
 * write, so concurrent clients get several times the throughput of one commit per write.
 *
 * Invariants that keep it correct:
 * - A write is acknowledged (its promise resolves) only after COMMIT returned: kill -9 then keeps it.
 * - Readers never see a pending write: they read at the committed revision, which moves only after
 *   COMMIT (the owner's `committed` hook), and watchers are told in that same hook.
 * - If COMMIT fails, or SQLite rolled the transaction back by itself (disk full, I/O error), every
 *   write of the batch fails with Unavailable and the owner rewinds its next revision (`rolledBack`).
 * - A failing step that leaves the transaction intact (KeyExists, Conflict) fails alone.
 */
import type { Database } from 'better-sqlite3';
import { isStorageError, StorageError } from './errors.js';
import type { StorageEvent } from './interface.js';

interface Batch {
  readonly events: StorageEvent[];
  readonly done: Promise<void>;
  resolve(): void;
  reject(err: Error): void;
}

export interface BatchHooks {
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
   * Runs `step` synchronously inside the open transaction (opening one if needed); `step` records
   * the events it stored in `events`. Resolves with its result once the transaction committed.
   */
  async run<T>(step: (events: StorageEvent[]) => T): Promise<T> {
    const batch = this.open ?? this.begin();
    let result: T;
    try {
      result = step(batch.events);
    } catch (err) {
      if (!this.db.inTransaction) this.abort(batch, err);
      throw err;
    }
    await batch.done;
    return result;
  }

  /** Resolves once no transaction is open (compaction and close run between batches). */
  async idle(): Promise<void> {
    while (this.open) await this.open.done.catch(() => undefined);
  }

  private begin(): Batch {
    this.db.exec('BEGIN IMMEDIATE');
    let resolve!: () => void;
    let reject!: (err: Error) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Every writer awaits `done`; this only keeps a batch whose writers all failed from being "unhandled".
    done.catch(() => undefined);
    const batch: Batch = { events: [], done, resolve, reject };
    this.open = batch;
    setImmediate(() => this.commit(batch));
    return batch;
  }

  private commit(batch: Batch): void {
    if (this.open !== batch) return;
    try {
      this.db.exec('COMMIT');
    } catch (err) {
      this.abort(batch, err);
      return;
    }
    this.open = undefined;
    this.hooks.committed(batch.events);
    batch.resolve();
  }

  private abort(batch: Batch, cause: unknown): void {
    if (this.open === batch) this.open = undefined;
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
