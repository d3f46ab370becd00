/**
 * The broker's SQLite file (`<data-dir>/broker.db` by default): its own file, apart from the API's
 * state, so a busy broker never slows the API's commits. Opened as the API's store is: WAL,
 * `synchronous=NORMAL` (a committed transaction survives `kill -9`), an exclusive lock (one process).
 *
 * Tables:
 * - `streams(id, name)`: one per Broker.
 * - `events(id, stream, body)`: the log. `id` is AUTOINCREMENT so it never goes back after the
 *   oldest records are deleted: consumers' floors compare against it.
 * - `consumers(id, stream, name, floor)`: one per Trigger; every event of the stream with
 *   `id <= floor` has been handled or parked in `pending`.
 * - `pending(consumer, event, attempt, due)`: messages waiting for a retry, with their attempt count.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Database, Statement } from 'better-sqlite3';
import { sqliteDriver } from '../../storage/sqlite/driver.js';
import { LogUnavailableError } from './interface.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS streams(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS events(id INTEGER PRIMARY KEY AUTOINCREMENT, stream INTEGER NOT NULL, body BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS events_by_stream ON events(stream, id);
CREATE TABLE IF NOT EXISTS consumers(id INTEGER PRIMARY KEY, stream INTEGER NOT NULL, name TEXT NOT NULL, floor INTEGER NOT NULL, UNIQUE(stream, name));
CREATE TABLE IF NOT EXISTS journal(id INTEGER PRIMARY KEY AUTOINCREMENT, stream TEXT NOT NULL, body BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS journal_by_stream ON journal(stream, id);
CREATE TABLE IF NOT EXISTS pending(consumer INTEGER NOT NULL, event INTEGER NOT NULL, attempt INTEGER NOT NULL, due INTEGER NOT NULL, PRIMARY KEY(consumer, event)) WITHOUT ROWID;
`;

export function openBrokerDatabase(path: string): Database {
  const file = resolve(path);
  let db: Database | undefined;
  try {
    mkdirSync(dirname(file), { recursive: true });
    const BetterSqlite3 = sqliteDriver();
    db = new BetterSqlite3(file, { timeout: 2_000 });
    db.pragma('locking_mode = EXCLUSIVE');
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`the file system does not support WAL mode (journal_mode is ${String(mode)})`);
    db.pragma('synchronous = NORMAL');
    // SQLite's default checkpoint size (1000 pages, ~4 MiB): the log's rows are short-lived, and a
    // small checkpoint is a short pause for the deliveries waiting behind it (p99 latency).
    db.pragma('wal_autocheckpoint = 1000');
    db.pragma('journal_size_limit = 67108864');
    db.exec(SCHEMA);
    return db;
  } catch (err) {
    db?.close();
    const code = (err as { code?: string }).code;
    const why = code === 'SQLITE_BUSY' ? 'the file is in use by another process' : code === 'SQLITE_NOTADB' ? 'the file is not a SQLite database' : (err as Error).message;
    throw new LogUnavailableError(`cannot open the broker's SQLite log at ${file}: ${why}`);
  }
}

type St<R = unknown> = Statement<unknown[], R>;

export interface Statements {
  readonly streamId: St<{ id: number }>;
  readonly allStreams: St<{ id: number }>;
  readonly insertStream: St;
  readonly deleteStreamRow: St;
  readonly deleteStreamEvents: St;
  readonly insertEvent: St;
  readonly maxEvent: St<{ id: number | null }>;
  readonly readAfter: St<{ id: number; body: Buffer }>;
  readonly readOne: St<{ body: Buffer }>;
  readonly consumerRow: St<{ id: number; floor: number }>;
  readonly consumerNames: St<{ name: string }>;
  readonly insertConsumer: St;
  readonly deleteConsumer: St;
  readonly deleteConsumerPending: St;
  readonly deleteStreamConsumers: St;
  readonly deleteStreamPending: St;
  readonly setFloor: St;
  readonly pendingOf: St<{ event: number; attempt: number; due: number }>;
  readonly putPending: St;
  readonly dropPending: St;
  readonly minFloor: St<{ floor: number | null; n: number }>;
  readonly compact: St;
  readonly insertJournal: St;
  readonly readJournal: St<{ id: number; body: Buffer }>;
  readonly journalStreams: St<{ stream: string }>;
  readonly trimJournal: St;
  readonly deleteJournal: St;
}

export function prepare(db: Database): Statements {
  const p = <R>(sql: string): St<R> => db.prepare(sql) as St<R>;
  return {
    streamId: p('SELECT id FROM streams WHERE name = ?'),
    allStreams: p('SELECT id FROM streams'),
    insertStream: p('INSERT OR IGNORE INTO streams(name) VALUES (?)'),
    deleteStreamRow: p('DELETE FROM streams WHERE id = ?'),
    deleteStreamEvents: p('DELETE FROM events WHERE stream = ?'),
    insertEvent: p('INSERT INTO events(stream, body) VALUES (?, ?)'),
    maxEvent: p('SELECT max(id) AS id FROM events WHERE stream = ?'),
    readAfter: p('SELECT id, body FROM events WHERE stream = ? AND id > ? ORDER BY id LIMIT ?'),
    readOne: p('SELECT body FROM events WHERE id = ?'),
    consumerRow: p('SELECT id, floor FROM consumers WHERE stream = ? AND name = ?'),
    consumerNames: p('SELECT name FROM consumers WHERE stream = ? ORDER BY name'),
    insertConsumer: p('INSERT INTO consumers(stream, name, floor) VALUES (?, ?, ?)'),
    deleteConsumer: p('DELETE FROM consumers WHERE id = ?'),
    deleteConsumerPending: p('DELETE FROM pending WHERE consumer = ?'),
    deleteStreamConsumers: p('DELETE FROM consumers WHERE stream = ?'),
    deleteStreamPending: p('DELETE FROM pending WHERE consumer IN (SELECT id FROM consumers WHERE stream = ?)'),
    setFloor: p('UPDATE consumers SET floor = ? WHERE id = ?'),
    pendingOf: p('SELECT event, attempt, due FROM pending WHERE consumer = ?'),
    putPending: p('INSERT OR REPLACE INTO pending(consumer, event, attempt, due) VALUES (?, ?, ?, ?)'),
    dropPending: p('DELETE FROM pending WHERE consumer = ? AND event = ?'),
    minFloor: p('SELECT min(floor) AS floor, count(*) AS n FROM consumers WHERE stream = ?'),
    insertJournal: p('INSERT INTO journal(stream, body) VALUES (?, ?)'),
    readJournal: p('SELECT id, body FROM journal WHERE stream = ? AND id > ? ORDER BY id LIMIT ?'),
    journalStreams: p('SELECT DISTINCT stream FROM journal'),
    // All but the newest @keep entries of a stream.
    trimJournal: p('DELETE FROM journal WHERE stream = @stream AND id <= (SELECT id FROM journal WHERE stream = @stream ORDER BY id DESC LIMIT 1 OFFSET @keep)'),
    deleteJournal: p('DELETE FROM journal WHERE stream = ?'),
    // Events every consumer is past and none holds for a retry; bounded so one pass stays short.
    compact: p(
      'DELETE FROM events WHERE id IN (SELECT id FROM events WHERE stream = @stream AND id <= @upTo ORDER BY id LIMIT 2000) ' +
        'AND id NOT IN (SELECT event FROM pending WHERE consumer IN (SELECT id FROM consumers WHERE stream = @stream))',
    ),
  };
}
