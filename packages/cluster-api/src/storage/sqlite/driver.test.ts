import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { driverPackage, loadDriver, sqliteDriver } from './driver.js';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-driver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the better-sqlite3 that serves this Node', () => {
  it('is release 13 on Node 22 and later, release 12 on Node 20', () => {
    const pkg = JSON.parse(readFileSync(createRequire(import.meta.url).resolve(`${driverPackage}/package.json`), 'utf8'));
    const nodeMajor = Number(process.versions.node.split('.')[0]);
    expect(Number(pkg.version.split('.')[0])).toBe(nodeMajor >= 22 ? 13 : 12);
    const db = new (sqliteDriver())(join(dir, 'a.db'));
    expect(db.prepare('SELECT 1 + 1 AS two').get()).toEqual({ two: 2 });
    db.close();
  });

  it('names the missing package, what builds it and the way out', () => {
    expect(() => loadDriver('better-sqlite3-nosuch')).toThrow(/better-sqlite3-nosuch is not installed .*C\+\+ compiler.*Node 22 or later/);
  });
});
