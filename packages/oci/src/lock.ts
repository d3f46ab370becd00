import { open, rm, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** A lock older than this is taken to be left by a process that died holding it. */
const STALE_MS = 30_000;

/**
 * Runs `fn` while holding an exclusive lock file (O_EXCL create), so processes sharing an image
 * layout serialise their read-modify-write of index.json.
 */
export async function withLock<T>(path: string, fn: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 2; ; wait = Math.min(wait * 2, 100)) {
    try {
      const handle = await open(path, 'wx');
      await handle.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = await stat(path).then((s) => Date.now() - s.mtimeMs, () => 0);
      if (age > STALE_MS) await rm(path, { force: true });
      else if (Date.now() > deadline) throw new Error(`Timed out waiting for the lock ${path}; remove it if no other process is writing`);
      else await sleep(wait);
    }
  }
  try {
    return await fn();
  } finally {
    await rm(path, { force: true });
  }
}
