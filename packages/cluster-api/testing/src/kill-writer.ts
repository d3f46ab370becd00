/**
 * The child process of the kill -9 test (src/storage/sqlite/durability.test.ts), run from the build:
 *
 *   node testing/dist/kill-writer.js <file> [burst]
 *
 * It opens a SQLite store and writes
 * without pause, printing one line per acknowledged write: `<revision> <key> <value>`. The parent
 * kills it with SIGKILL mid-burst and checks that every printed write survived.
 *
 * Writes go out in concurrent bursts so that several share one group commit, as under real load;
 * one key is updated over and over to check values at past revisions too.
 */
import { SqliteStorage } from '../../dist/storage/sqlite/sqlite.js';

const COUNTER = '/registry/durability/counter';

async function main(args: readonly string[]): Promise<void> {
  const [file, burstArg] = args;
  if (!file) throw new Error('usage: kill-writer <file> [burst]');
  const burst = Number(burstArg ?? 20);
  const storage = SqliteStorage.open(file);
  const enc = new TextEncoder();
  let counter = await storage.create(COUNTER, enc.encode('0'));
  process.stdout.write('ready\n');
  for (let round = 1; ; round++) {
    const writes = Array.from({ length: burst }, async (_, i) => {
      const key = `/registry/durability/k${round}-${i}`;
      const value = `v${round}-${i}`;
      const kv = await storage.create(key, enc.encode(value));
      process.stdout.write(`${kv.modRevision} ${key} ${value}\n`);
    });
    const value = String(round);
    writes.push(
      storage.update(COUNTER, enc.encode(value), counter.modRevision).then((kv) => {
        counter = kv;
        process.stdout.write(`${kv.modRevision} ${COUNTER} ${value}\n`);
      }),
    );
    await Promise.all(writes);
  }
}

await main(process.argv.slice(2));
