/**
 * Follows the files a function is made of. The set changes with every build (an import added or
 * removed), so the watcher is told the new set instead of watching the whole tree: node_modules
 * and build output never wake it. It watches the directories that hold those files, one level
 * deep, so a file that does not exist yet (a new .env) is seen when it appears, and an editor's
 * save by rename is seen too. Bursts of events (write + rename) become one change.
 */
import { dirname, join } from 'node:path';
import type { FSWatcher } from 'chokidar';

export interface SourceWatcher {
  /** Replaces the watched set with these absolute paths. */
  follow(files: Iterable<string>): void;
  close(): Promise<void>;
}

/** Events closer together than this are one save. Small: every millisecond is reload latency. */
const SETTLE_MS = 8;

export async function watchSources(files: Iterable<string>, onChange: (changed: string[]) => void): Promise<SourceWatcher> {
  const { watch } = await import('chokidar');
  let watched = new Set(files);
  const dirs = new Set([...watched].map((f) => dirname(f)));
  const watcher: FSWatcher = watch([...dirs], { ignoreInitial: true, atomic: true, depth: 0 });
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    const changed = [...pending];
    pending = new Set();
    onChange(changed);
  };
  const seen = (path: string) => {
    if (!watched.has(path)) return;
    pending.add(path);
    timer ??= setTimeout(flush, SETTLE_MS);
  };
  watcher.on('all', (_event, path) => seen(path));
  // chokidar drops a `change` that follows another on the same file within 50 ms; the raw fs.watch
  // events are not throttled, and a dropped save would leave the old code serving for good.
  watcher.on('raw', (_event, name, details) => {
    const dir = (details as { watchedPath?: string }).watchedPath;
    if (dir && typeof name === 'string') seen(watched.has(dir) ? dir : join(dir, name));
  });
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return {
    follow(next) {
      watched = new Set(next);
      const added = [...new Set([...watched].map((f) => dirname(f)))].filter((d) => !dirs.has(d));
      for (const d of added) dirs.add(d);
      if (added.length) watcher.add(added);
    },
    async close() {
      if (timer) clearTimeout(timer);
      await watcher.close();
    },
  };
}
