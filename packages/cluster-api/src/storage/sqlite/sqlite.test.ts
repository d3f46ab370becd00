import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { isStorageError } from '../errors.js';
import { SqliteStorage } from './sqlite.js';
import { sqliteDriver } from './driver.js';
import { storageConformance } from '../testing/conformance.js';
import { dec, enc, Recorder } from '../testing/suite-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'cluster-api-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = (): string => join(dir, `db-${++n}.sqlite`);

storageConformance('sqlite', async () => SqliteStorage.open(fresh()));
// The same guarantees with the head cache off, and with one so small that it evicts on every write.
storageConformance('sqlite, no head cache', async () => SqliteStorage.open(fresh(), { headCacheBytes: 0 }));
storageConformance('sqlite, tiny head cache', async () => SqliteStorage.open(fresh(), { headCacheBytes: 300 }));

/** Rows in the log table, read after the store closed (it holds an exclusive lock while open). */
function rowCount(file: string): number {
  const db = new (sqliteDriver())(file, { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM log').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('sqlite specifics', () => {
  it('a write is invisible to readers and watchers until it is acknowledged', async () => {
    const s = SqliteStorage.open(fresh());
    const seed = await s.create('/registry/p/seed', enc('s'));
    const pending = s.create('/registry/p/a', enc('a'));
    // The row is in the open transaction now, but not committed.
    expect(await s.get('/registry/p/a')).toBeUndefined();
    expect(await s.currentRevision()).toBe(seed.modRevision);
    expect(await s.count('/registry/p/')).toBe(1);
    const rec = new Recorder(s, { key: '/registry/p/', prefix: true, afterRevision: seed.modRevision });
    const kv = await pending;
    expect(dec((await s.get('/registry/p/a'))!.value)).toBe('a');
    await rec.waitForRevision(kv.modRevision);
    expect(rec.revisions).toEqual([kv.modRevision]);
    await s.close();
  });

  it('the database itself refuses a second successor of a row (compare-and-swap in the schema)', async () => {
    const file = fresh();
    const s = SqliteStorage.open(file);
    const v1 = await s.create('/registry/u/a', enc('v1'));
    await s.update('/registry/u/a', enc('v2'), v1.modRevision);
    await s.close();
    const db = new (sqliteDriver())(file);
    try {
      const insert = db.prepare(
        `INSERT INTO log (name, created, deleted, create_revision, prev_revision, value, old_value)
         VALUES ('/registry/u/a', 0, 0, ?, ?, x'00', NULL)`,
      );
      expect(() => insert.run(v1.modRevision, v1.modRevision)).toThrow(/UNIQUE constraint failed: log.name, log.prev_revision/);
      expect(() => insert.run(v1.modRevision, 0)).toThrow(/UNIQUE constraint failed/);
    } finally {
      db.close();
    }
  });

  it('compaction removes superseded rows and tombstones, across many chunks, and persists', async () => {
    const file = fresh();
    const s = SqliteStorage.open(file);
    const keys = Array.from({ length: 2500 }, (_, i) => `/registry/c/k${String(i).padStart(4, '0')}`);
    const created = await Promise.all(keys.map((k) => s.create(k, enc('v1'))));
    await Promise.all(created.map((kv) => s.update(kv.key, enc('v2'), kv.modRevision)));
    await Promise.all(keys.slice(0, 100).map((k) => s.delete(k)));
    const rev = await s.currentRevision();
    expect(rev).toBe(5100);
    const before = await s.list({ prefix: '/registry/c/', revision: rev });
    expect(await s.compact(rev)).toBe(rev);
    const after = await s.list({ prefix: '/registry/c/', revision: rev });
    expect(after.items).toEqual(before.items);
    expect(after.items.every((kv) => dec(kv.value) === 'v2')).toBe(true);
    await s.close();
    expect(rowCount(file)).toBe(2400);
    const reopened = SqliteStorage.open(file);
    expect(await reopened.compactedRevision()).toBe(rev);
    const err = await reopened.get(keys[200]!, { revision: rev - 1 }).catch((e: unknown) => e);
    expect(isStorageError(err, 'Compacted')).toBe(true);
    expect(await reopened.count('/registry/c/')).toBe(2400);
    await reopened.close();
  });

  it('a damaged database file fails with Unavailable (at open or on read), never a crash', async () => {
    const file = fresh();
    const s = SqliteStorage.open(file);
    await Promise.all(Array.from({ length: 300 }, (_, i) => s.create(`/registry/d/k${i}`, new Uint8Array(2048).fill(i % 256))));
    await s.close();
    // Overwrite everything after the header page with garbage: the schema page survives, data does not.
    const bytes = readFileSync(file);
    bytes.fill(0xa5, 4096);
    writeFileSync(file, bytes);
    let opened: SqliteStorage | undefined;
    try {
      opened = SqliteStorage.open(file);
    } catch (err) {
      expect(isStorageError(err, 'Unavailable')).toBe(true);
      expect((err as Error).message).toContain(file);
      return;
    }
    const err = await opened.list({ prefix: '/registry/d/' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isStorageError(err, 'Unavailable')).toBe(true);
    expect((err as Error).message).toMatch(/malformed|corrupt|not a database/);
    await opened.close();
  });

  it('a full disk fails the writes it hits with Unavailable, loses nothing acknowledged, and recovers', async () => {
    const s = SqliteStorage.open(fresh());
    const db = (s as unknown as { db: BetterSqlite3.Database }).db;
    const base = await s.create('/registry/f/base', enc('base'));
    // Cap the file at its current size (a real SQLITE_FULL, as on a full disk).
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
    const big = new Uint8Array(64 * 1024).fill(7);
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => s.create(`/registry/f/k${i}`, big)));
    const failed = results.filter((r) => r.status === 'rejected');
    expect(failed.length).toBeGreaterThan(0);
    for (const r of failed) expect(isStorageError((r as PromiseRejectedResult).reason, 'Unavailable')).toBe(true);
    const acked = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.modRevision] : []));
    expect(await s.currentRevision()).toBe(Math.max(base.modRevision, ...acked));
    for (let i = 0; i < 10; i++) {
      const got = await s.get(`/registry/f/k${i}`);
      expect(got !== undefined).toBe(results[i]!.status === 'fulfilled');
    }
    db.pragma('max_page_count = 1073741823');
    const next = await s.create('/registry/f/after', enc('ok'));
    expect(next.modRevision).toBe((await s.currentRevision()));
    expect(next.modRevision).toBe(Math.max(base.modRevision, ...acked) + 1);
    expect(dec((await s.get('/registry/f/base'))!.value)).toBe('base');
    await s.close();
  });
});

describe('sqlite head cache', () => {
  it('reads see every committed change through the cache', async () => {
    const file = fresh();
    const s = SqliteStorage.open(file);
    const a = await s.create('/registry/p/a', enc('one'));
    expect(dec((await s.get('/registry/p/a'))!.value)).toBe('one');
    const b = await s.update('/registry/p/a', enc('two'), a.modRevision);
    expect((await s.get('/registry/p/a'))!.modRevision).toBe(b.modRevision);
    expect(dec((await s.get('/registry/p/a'))!.value)).toBe('two');
    // An older revision still comes from the log.
    expect(dec((await s.get('/registry/p/a', { revision: a.modRevision }))!.value)).toBe('one');
    await s.delete('/registry/p/a', b.modRevision);
    expect(await s.get('/registry/p/a')).toBeUndefined();
    // A create after the delete succeeds (its row follows the tombstone) and is read back.
    const c = await s.create('/registry/p/a', enc('three'));
    expect(c.createRevision).toBe(c.modRevision);
    expect(dec((await s.get('/registry/p/a'))!.value)).toBe('three');
    await s.close();
    // What the cache answered is what the file holds.
    const reopened = SqliteStorage.open(file);
    const kv = (await reopened.get('/registry/p/a'))!;
    expect([dec(kv.value), kv.modRevision, kv.createRevision]).toEqual(['three', c.modRevision, c.createRevision]);
    await reopened.close();
  });

  it('a rolled-back batch leaves no trace in the cache', async () => {
    const s = SqliteStorage.open(fresh());
    const a = await s.create('/registry/p/a', enc('one'));
    // Fail the next COMMIT: the batch's writes are rolled back, and later reads and writes see the old row.
    const db = (s as unknown as { db: { exec(sql: string): unknown } }).db;
    const exec = db.exec.bind(db);
    db.exec = (sql: string) => {
      if (sql === 'COMMIT') {
        db.exec = exec;
        exec('ROLLBACK');
        throw new Error('disk I/O error');
      }
      return exec(sql);
    };
    const failed = await s.update('/registry/p/a', enc('lost'), a.modRevision).catch((e: unknown) => e);
    expect(isStorageError(failed, 'Unavailable')).toBe(true);
    expect(dec((await s.get('/registry/p/a'))!.value)).toBe('one');
    const b = await s.update('/registry/p/a', enc('two'), a.modRevision);
    expect(b.modRevision).toBe(a.modRevision + 1);
    expect(dec((await s.get('/registry/p/a'))!.value)).toBe('two');
    await s.close();
  });
});

describe('sqlite head cache over a reopened file', () => {
  it.each([
    ['the whole file fits', undefined],
    ['the file is larger than the cache', 2_000],
  ])('%s: existing, deleted and new keys behave as before the restart', async (_label, headCacheBytes) => {
    const file = fresh();
    const s = SqliteStorage.open(file);
    const kvs = [];
    for (let i = 0; i < 40; i++) kvs.push(await s.create(`/registry/p/k${i}`, enc(`v${i}`)));
    for (let i = 0; i < 10; i++) await s.delete(`/registry/p/k${i}`, kvs[i]!.modRevision);
    await s.close();

    const r = SqliteStorage.open(file, { headCacheBytes });
    for (let i = 0; i < 40; i++) {
      const kv = await r.get(`/registry/p/k${i}`);
      if (i < 10) expect(kv).toBeUndefined();
      else expect([dec(kv!.value), kv!.modRevision]).toEqual([`v${i}`, kvs[i]!.modRevision]);
    }
    const exists = await r.create('/registry/p/k20', enc('again')).catch((e: unknown) => e);
    expect(isStorageError(exists, 'KeyExists')).toBe(true);
    // A deleted key can be created again, and its row follows the tombstone.
    const again = await r.create('/registry/p/k3', enc('back'));
    expect(dec((await r.get('/registry/p/k3'))!.value)).toBe('back');
    expect(again.createRevision).toBe(again.modRevision);
    const fresh1 = await r.create('/registry/p/new', enc('n'));
    expect((await r.get('/registry/p/new'))!.modRevision).toBe(fresh1.modRevision);
    expect(await r.count('/registry/p/')).toBe(32);
    await r.close();
  });
});

describe('sqlite group commit', () => {
  it('an insert that fails at commit fails every write of its batch, stores none of them, and the store goes on', async () => {
    const file = fresh();
    const s = SqliteStorage.open(file);
    const seed = await s.create('/registry/p/seed', enc('s'));
    const st = (s as unknown as { st: { insert: { run: (...args: unknown[]) => unknown } } }).st;
    const run = st.insert.run.bind(st.insert);
    st.insert.run = (...args: unknown[]) => {
      if (args[1] === '/registry/p/b') throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      return run(...args);
    };
    const results = await Promise.allSettled([
      s.create('/registry/p/a', enc('a')),
      s.create('/registry/p/b', enc('b')),
      s.update('/registry/p/seed', enc('s2'), seed.modRevision),
    ]);
    st.insert.run = run;
    for (const r of results) {
      expect(r.status).toBe('rejected');
      expect(isStorageError((r as PromiseRejectedResult).reason, 'Unavailable')).toBe(true);
    }
    expect(await s.get('/registry/p/a')).toBeUndefined();
    expect(dec((await s.get('/registry/p/seed'))!.value)).toBe('s');
    expect(await s.currentRevision()).toBe(seed.modRevision);
    // The next batch takes the revisions the failed one did not use.
    const a = await s.create('/registry/p/a', enc('a'));
    expect(a.modRevision).toBe(seed.modRevision + 1);
    await s.close();
    expect(rowCount(file)).toBe(2);
  });

  it('a write refused against a pending one is answered after it commits, so a read-and-retry loop reads it', async () => {
    const s = SqliteStorage.open(fresh());
    const seed = await s.create('/registry/p/x', enc('1'));
    const first = s.update('/registry/p/x', enc('2'), seed.modRevision);
    // A second writer that read the committed row: refused, but only once the first write is committed.
    const second = await s.update('/registry/p/x', enc('3'), seed.modRevision).then(() => 'stored', (e: unknown) => e);
    expect(isStorageError(second, 'Conflict')).toBe(true);
    const now = (await s.get('/registry/p/x'))!;
    expect([dec(now.value), now.modRevision]).toEqual(['2', (await first).modRevision]);
    expect(dec((await s.update('/registry/p/x', enc('3'), now.modRevision)).value)).toBe('3');
    await s.close();
  });
});
