import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { SqliteStorage } from '../../storage/sqlite/sqlite.js';
import { createRegistry } from '../index.js';
import { coreKinds } from '../kinds/index.js';
import { testKinds } from './kind-tester.js';

// The same suite over a real SQLite file for the spec's core kinds (the groups share their code path).
const dir = mkdtempSync(join(tmpdir(), 'registry-kinds-'));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

testKinds(coreKinds, {
  storage: () => SqliteStorage.open(join(dir, `kinds-${n++}.db`)),
  registry: (s) => createRegistry(s),
});
