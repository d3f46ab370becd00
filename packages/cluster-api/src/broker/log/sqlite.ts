/**
 * The embedded event log: SQLite, one process. Every write (appends, consumer floors, retry rows)
 * joins the transaction of the current event-loop turn and commits with it (group commit): one WAL
 * append carries hundreds of events when the ingress is busy. Writes that may wait (consumers'
 * floors, journal entries) join the next such transaction, or make one within 50 ms. An append's promise resolves only
 * after COMMIT; a failed transaction fails every write in it and stores none of them.
 *
 * Old events are deleted in the background once every consumer of their stream is past them.
 */
import type { Database } from 'better-sqlite3';
import { type Consumer, type ConsumerOptions, type EventLog, JOURNAL_LIMIT, type JournalEntry, LogUnavailableError } from './interface.js';
import { openBrokerDatabase, prepare, type Statements } from './sqlite-db.js';
import { SqliteConsumer } from './sqlite-consumer.js';

interface Waiter {
  resolve(): void;
  reject(err: Error): void;
}

const COMPACT_EVERY_MS = 1_000;
/** How long a write that may wait (writeLater) waits at most for a transaction to join. */
const LATER_MS = 50;

export class SqliteLog implements EventLog {
  readonly engine = 'sqlite';
  readonly st: Statements;
  private readonly streamIds = new Map<string, number>();
  private readonly consumersByStream = new Map<number, Set<SqliteConsumer>>();
  private ops: Array<() => void> = [];
  private waiters: Waiter[] = [];
  private appended = new Set<number>();
  private scheduled = false;
  private laterTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private compacting = false;
  private readonly compactTimer: NodeJS.Timeout;

  static open(path: string): SqliteLog {
    return new SqliteLog(openBrokerDatabase(path));
  }

  private constructor(private readonly db: Database) {
    this.st = prepare(db);
    this.compactTimer = setInterval(() => void this.compact(), COMPACT_EVERY_MS);
    this.compactTimer.unref();
  }

  /** Queues `op` into the open transaction; resolves after its COMMIT. */
  write(op: () => void, stream?: number): Promise<void> {
    if (this.closed) return Promise.reject(new LogUnavailableError('the broker log is closed'));
    this.ops.push(op);
    if (stream !== undefined) this.appended.add(stream);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.commit());
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /**
   * Queues a write that may wait (a consumer's floor, journal entries): it joins the next
   * transaction, or one of its own within `LATER_MS`, instead of making one of its own every turn.
   */
  writeLater(op: () => void): Promise<void> {
    if (this.closed) return Promise.reject(new LogUnavailableError('the broker log is closed'));
    this.ops.push(op);
    if (!this.scheduled) this.laterTimer ??= setTimeout(() => this.commit(), LATER_MS);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private commit(): void {
    this.scheduled = false;
    clearTimeout(this.laterTimer);
    this.laterTimer = undefined;
    if (this.ops.length === 0) return;
    const [ops, waiters, appended] = [this.ops, this.waiters, this.appended];
    this.ops = [];
    this.waiters = [];
    this.appended = new Set();
    try {
      this.db.exec('BEGIN IMMEDIATE');
      for (const op of ops) op();
      this.db.exec('COMMIT');
    } catch (err) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      const error = new LogUnavailableError(`the broker log could not store the write: ${(err as Error).message}`);
      for (const w of waiters) w.reject(error);
      return;
    }
    for (const w of waiters) w.resolve();
    for (const stream of appended) for (const c of this.consumersByStream.get(stream) ?? []) c.appended();
  }

  private streamId(stream: string): number {
    const cached = this.streamIds.get(stream);
    if (cached !== undefined) return cached;
    const row = this.st.streamId.get(stream);
    if (!row) throw new LogUnavailableError(`the broker log has no stream ${stream}`);
    this.streamIds.set(stream, row.id);
    return row.id;
  }

  async ensureStream(stream: string): Promise<void> {
    this.st.insertStream.run(stream);
    this.streamId(stream);
  }

  async deleteStream(stream: string): Promise<void> {
    const row = this.st.streamId.get(stream);
    this.streamIds.delete(stream);
    if (!row) return void (await this.write(() => this.st.deleteJournal.run(stream)));
    for (const c of this.consumersByStream.get(row.id) ?? []) await c.close();
    this.consumersByStream.delete(row.id);
    await this.write(() => {
      this.st.deleteJournal.run(stream);
      this.st.deleteStreamPending.run(row.id);
      this.st.deleteStreamConsumers.run(row.id);
      this.st.deleteStreamEvents.run(row.id);
      this.st.deleteStreamRow.run(row.id);
    });
  }

  append(stream: string, records: readonly Uint8Array[]): Promise<void> {
    let id: number;
    try {
      id = this.streamId(stream);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.write(() => {
      for (const r of records) this.st.insertEvent.run(id, r);
    }, id);
  }

  async ensureConsumer(stream: string, name: string): Promise<void> {
    const sid = this.streamId(stream);
    if (this.st.consumerRow.get(sid, name)) return;
    // A new consumer starts at the end of the stream: only events from now on.
    await this.write(() => {
      if (!this.st.consumerRow.get(sid, name)) this.st.insertConsumer.run(sid, name, this.st.maxEvent.get(sid)?.id ?? 0);
    });
  }

  async consumer(stream: string, name: string, opts: ConsumerOptions): Promise<Consumer> {
    await this.ensureConsumer(stream, name);
    const sid = this.streamId(stream);
    const row = this.st.consumerRow.get(sid, name)!;
    const consumer = new SqliteConsumer(this, sid, row.id, row.floor, opts, (c) => this.consumersByStream.get(sid)?.delete(c));
    let set = this.consumersByStream.get(sid);
    if (!set) this.consumersByStream.set(sid, (set = new Set()));
    set.add(consumer);
    return consumer;
  }

  async deleteConsumer(stream: string, name: string): Promise<void> {
    const sid = this.st.streamId.get(stream)?.id;
    if (sid === undefined) return;
    const row = this.st.consumerRow.get(sid, name);
    if (!row) return;
    for (const c of this.consumersByStream.get(sid) ?? []) if (c.rowId === row.id) await c.close();
    await this.write(() => {
      this.st.deleteConsumerPending.run(row.id);
      this.st.deleteConsumer.run(row.id);
    });
  }

  async consumers(stream: string): Promise<string[]> {
    const sid = this.st.streamId.get(stream)?.id;
    return sid === undefined ? [] : this.st.consumerNames.all(sid).map((r) => r.name);
  }

  journal(stream: string, entries: readonly Uint8Array[]): Promise<void> {
    return this.writeLater(() => {
      for (const e of entries) this.st.insertJournal.run(stream, e);
    });
  }

  async readJournal(stream: string, afterSeq: number, limit: number): Promise<JournalEntry[]> {
    return this.st.readJournal.all(stream, afterSeq, limit).map((r) => ({ seq: r.id, data: r.body }));
  }

  /**
   * Deletes the events every consumer of their stream is past (a stream without consumers keeps
   * nothing: no Trigger would ever see it), in chunks of 2,000 rows with the event loop free between
   * them, so deliveries never wait long behind a delete.
   */
  private async compact(): Promise<void> {
    if (this.compacting) return;
    this.compacting = true;
    try {
      for (const { stream } of this.st.journalStreams.all()) this.st.trimJournal.run({ stream, keep: JOURNAL_LIMIT });
      for (const { id: stream } of this.st.allStreams.all()) {
        for (let deleted = 2000; deleted >= 2000 && !this.closed; ) {
          const { floor, n } = this.st.minFloor.get(stream)!;
          const upTo = n === 0 ? (this.st.maxEvent.get(stream)?.id ?? 0) : (floor ?? 0);
          deleted = upTo > 0 ? this.st.compact.run({ stream, upTo }).changes : 0;
          await new Promise((r) => setImmediate(r));
        }
      }
    } catch {
      // Deleting old events can wait for the next pass (disk full, I/O error): nothing is lost by it.
    } finally {
      this.compacting = false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    for (const set of this.consumersByStream.values()) for (const c of set) await c.close();
    // Let the last turn's writes commit before the file closes, and those that could wait.
    while (this.scheduled) await new Promise((r) => setImmediate(r));
    if (this.laterTimer) this.commit();
    this.closed = true;
    clearInterval(this.compactTimer);
    this.db.close();
  }
}
