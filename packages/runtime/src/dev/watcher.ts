/**
 * Follows the files a function is made of. The set changes with every build (an import added or
 * removed), so the watcher is told the new set instead of watching the whole tree: node_modules
 * and build output never wake it. Bursts of events (an editor's write + rename) become one change.
 */
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
  const watcher: FSWatcher = watch([...watched], { ignoreInitial: true, atomic: true });
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    const changed = [...pending];
    pending = new Set();
    onChange(changed);
  };
  watcher.on('all', (_event, path) => {
    pending.add(path);
    timer ??= setTimeout(flush, SETTLE_MS);
  });
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return {
    follow(next) {
      const nextSet = new Set(next);
      const added = [...nextSet].filter((f) => !watched.has(f));
      const removed = [...watched].filter((f) => !nextSet.has(f));
      if (added.length) watcher.add(added);
      if (removed.length) watcher.unwatch(removed);
      watched = nextSet;
    },
    async close() {
      if (timer) clearTimeout(timer);
      await watcher.close();
    },
  };
}
