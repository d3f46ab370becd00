import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isStorageError, type StorageError } from './errors.js';
import { openStorage, parseStorageUrl } from './factory.js';
import type { Storage } from './interface.js';
import { SqliteStorage } from './sqlite/sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'cluster-api-factory-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

async function failure(p: Promise<unknown> | (() => unknown)): Promise<StorageError> {
  const err = await (typeof p === 'function' ? Promise.resolve().then(p) : p).then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e,
  );
  expect(isStorageError(err), String(err)).toBe(true);
  return err as StorageError;
}

async function roundTrip(s: Storage): Promise<void> {
  const kv = await s.create('/registry/pods/ns/a', enc('hello'));
  expect(dec((await s.get('/registry/pods/ns/a'))!.value)).toBe('hello');
  expect(kv.modRevision).toBeGreaterThan(0);
}

describe('openStorage', () => {
  it('memory: opens an empty in-process store', async () => {
    const s = await openStorage('memory:');
    expect(await s.currentRevision()).toBe(0);
    await roundTrip(s);
    await s.close();
  });

  it.each([
    ['sqlite:<path>', (p: string) => `sqlite:${p}`],
    ['sqlite://<absolute path>', (p: string) => `sqlite://${p}`],
  ])('%s creates the parent directories and the file', async (_, url) => {
    const file = join(dir, 'nested', String(Math.random()).slice(2), 'state.db');
    const s = await openStorage(url(file));
    expect(existsSync(file)).toBe(true);
    await roundTrip(s);
    await s.close();
  });

  it('sqlite: keeps everything across a reopen', async () => {
    const file = join(dir, 'reopen.db');
    const a = await openStorage(`sqlite:${file}`, { compaction: false });
    const v1 = await a.create('/registry/pods/ns/a', enc('v1'));
    const v2 = await a.update('/registry/pods/ns/a', enc('v2'), v1.modRevision);
    await a.create('/registry/pods/ns/b', enc('b'));
    await a.compact(v1.modRevision);
    await a.close();
    const b = await openStorage(`sqlite:${file}`, { compaction: false });
    expect(await b.currentRevision()).toBe(v2.modRevision + 1);
    expect(await b.compactedRevision()).toBe(v1.modRevision);
    expect(dec((await b.get('/registry/pods/ns/a', { revision: v1.modRevision }))!.value)).toBe('v1');
    expect((await b.list({ prefix: '/registry/pods/' })).items.map((kv) => dec(kv.value))).toEqual(['v2', 'b']);
    const next = await b.create('/registry/pods/ns/c', enc('c'));
    expect(next.modRevision).toBe(v2.modRevision + 2);
    await b.close();
  });

  it.each([
    ['no endpoints', 'etcd://', /no endpoints/],
    ['no //', 'etcd:127.0.0.1:2379', /expected etcd:\/\/host:port/],
    ['an endpoint without a port', 'etcd://127.0.0.1:2379,etcd-b', /"etcd-b" is not host:port/],
    ['a port out of range', 'etcd://127.0.0.1:70000', /is not host:port/],
  ])('etcd:// with %s is InvalidArgument (etcd.test.ts opens a real one)', async (_, url, message) => {
    const err = await failure(openStorage(url));
    expect(err.code).toBe('InvalidArgument');
    expect(err.message).toMatch(message);
  });

  it.each([
    ['an unknown scheme', 'postgres://localhost/db', /unknown scheme/],
    ['no scheme', './data/state.db', /unknown scheme/],
    ['an empty URL', '', /expected one of memory:, sqlite:, etcd:/],
    ['sqlite: without a path', 'sqlite:', /needs a file path/],
    ['sqlite:// without a path', 'sqlite://', /needs a file path/],
    ['a NUL byte in the path', 'sqlite:/tmp/a\0b', /NUL/],
  ])('rejects %s with a clear InvalidArgument', async (_, url, message) => {
    const err = await failure(openStorage(url));
    expect(err.code).toBe('InvalidArgument');
    expect(err.message).toMatch(message);
    expect(() => parseStorageUrl(url)).toThrow(message);
  });

  it('rejects a compaction policy that makes no sense', async () => {
    const err = await failure(openStorage('memory:', { compaction: { intervalMs: 0 } }));
    expect(err.message).toMatch(/invalid compaction policy/);
  });

  it('a file that is not a database gives a clear error and is left untouched', async () => {
    const file = join(dir, 'corrupt.db');
    const junk = 'this is not a database '.repeat(200);
    writeFileSync(file, junk);
    const err = await failure(openStorage(`sqlite:${file}`));
    expect(err.code).toBe('Unavailable');
    expect(err.message).toContain(file);
    expect(err.message).toMatch(/not a SQLite database/);
  });

  it('a path that cannot be created gives a clear error', async () => {
    const blocker = join(dir, 'plain-file');
    writeFileSync(blocker, 'x');
    const err = await failure(openStorage(`sqlite:${join(blocker, 'sub', 'state.db')}`));
    expect(err.code).toBe('Unavailable');
    expect(err.message).toMatch(/cannot open SQLite storage at .*plain-file/);
  });

  it('a directory in place of the file gives a clear error', async () => {
    const err = await failure(openStorage(`sqlite:${dir}`));
    expect(err.message).toMatch(/cannot open SQLite storage/);
  });

  it('a file in use by another store is refused until that store closes', async () => {
    const file = join(dir, 'locked.db');
    const first = SqliteStorage.open(file);
    await first.create('/registry/pods/ns/a', enc('1'));
    const err = await failure(() => SqliteStorage.open(file, { busyTimeoutMs: 50 }));
    expect(err.message).toMatch(/locked: is another cluster-api process using it/);
    expect(dec((await first.get('/registry/pods/ns/a'))!.value)).toBe('1');
    await first.close();
    const second = SqliteStorage.open(file);
    expect(await second.count('/registry/pods/')).toBe(1);
    await second.close();
  });
});
