import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteLog } from './sqlite.js';
import { collect, eventLogConformance } from './testing/conformance.js';

const dir = mkdtempSync(join(tmpdir(), 'broker-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'broker.db');

eventLogConformance('sqlite', { open: async () => SqliteLog.open(file) });

describe('sqlite log', () => {
  it('refuses a second process on the same file, and a file that is not a database, naming the file', () => {
    const log = SqliteLog.open(join(dir, 'locked.db'));
    try {
      expect(() => SqliteLog.open(join(dir, 'locked.db'))).toThrow(/locked\.db: the file is in use by another process|database is locked/);
    } finally {
      void log.close();
    }
    writeFileSync(join(dir, 'junk.db'), 'not a database at all, just text'.repeat(100));
    expect(() => SqliteLog.open(join(dir, 'junk.db'))).toThrow(/junk\.db: the file is not a SQLite database/);
  });

  it('deletes events every consumer is past, keeps those waiting for a retry', async () => {
    const log = SqliteLog.open(join(dir, 'compact.db'));
    try {
      await log.ensureStream('s');
      const c = await log.consumer('s', 't', { maxInFlight: 100, ackWaitMs: 1000 });
      await log.append('s', Array.from({ length: 10 }, (_, i) => Buffer.from(`e${i}`)));
      const got = await collect(c, 10);
      await got[0]!.nak(60_000);
      await Promise.all(got.slice(1).map((m) => m.ack()));
      const count = () => (log as unknown as { db: { prepare(s: string): { get(): { n: number } } } }).db.prepare('SELECT count(*) AS n FROM events').get().n;
      await expect.poll(count, { timeout: 10_000, interval: 200 }).toBe(1);
    } finally {
      await log.close();
    }
  });
});
