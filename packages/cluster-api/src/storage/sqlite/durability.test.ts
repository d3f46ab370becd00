import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStorage } from './sqlite.js';

const dir = mkdtempSync(join(tmpdir(), 'cluster-api-kill9-'));
let child: ChildProcess | undefined;
afterAll(() => {
  child?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** The writer (testing/src/kill-writer.ts) runs from the build (npm test builds first), in a process of its own. */
function writerScript(): string {
  const writer = fileURLToPath(new URL('../../../testing/dist/kill-writer.js', import.meta.url));
  if (!existsSync(writer)) throw new Error(`${writer} is missing: build first (npx tsc -b)`);
  return writer;
}

interface Ack {
  readonly revision: number;
  readonly key: string;
  readonly value: string;
}

/** Runs the writer until it has acknowledged `count` writes, then kills it with SIGKILL. */
function runAndKill(script: string, file: string, count: number): Promise<Ack[]> {
  return new Promise((resolve, reject) => {
    const acks: Ack[] = [];
    let buffered = '';
    let stderr = '';
    child = spawn(process.execPath, [script, file, '25'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      buffered += d.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        const [rev, key, value] = line.split(' ');
        if (key !== undefined && value !== undefined) acks.push({ revision: Number(rev), key, value });
      }
      if (acks.length >= count) child!.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(acks);
      else reject(new Error(`writer exited by itself (code ${code}): ${stderr}`));
    });
  });
}

describe('sqlite durability', () => {
  it('every write acknowledged before kill -9 is there after reopening, with its value', async () => {
    const script = writerScript();
    const file = join(dir, 'state.db');
    const acks = await runAndKill(script, file, 3000);
    expect(acks.length).toBeGreaterThanOrEqual(3000);
    const storage = SqliteStorage.open(file);
    try {
      const current = await storage.currentRevision();
      for (const ack of acks) {
        // At the acknowledged revision the key holds exactly the acknowledged value.
        const kv = await storage.get(ack.key, { revision: ack.revision });
        expect(kv && { rev: kv.modRevision, value: new TextDecoder().decode(kv.value) }, ack.key).toEqual({ rev: ack.revision, value: ack.value });
        expect(current).toBeGreaterThanOrEqual(ack.revision);
      }
      const revisions = new Set(acks.map((a) => a.revision));
      expect(revisions.size).toBe(acks.length);
      // The reopened store keeps working where the killed one stopped.
      const next = await storage.create('/registry/durability/after', new TextEncoder().encode('x'));
      expect(next.modRevision).toBe(current + 1);
    } finally {
      await storage.close();
    }
  });
});
