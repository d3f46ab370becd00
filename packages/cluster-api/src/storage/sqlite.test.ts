import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { SqliteStorage } from './sqlite.js';
import { storageConformance } from './testing/conformance.js';

const dir = mkdtempSync(join(tmpdir(), 'cluster-api-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

storageConformance('sqlite', async () => SqliteStorage.open(join(dir, `db-${++n}.sqlite`)));
