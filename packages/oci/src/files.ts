/**
 * Archive entries from a directory on disk. Only what affects how the files run is kept: content,
 * the executable bit (→ 0755, else 0644), symlink targets. Owners, times and other mode bits are
 * the build machine's state and would make the digest differ between machines. Synchronous reads:
 * for thousands of small files (a node_modules tree) they take half the time of promise-based ones,
 * and a build has nothing else to do meanwhile.
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, posix } from 'node:path';
import type { TarEntry } from './tar.js';

export interface DirectoryOptions {
  /** Where the directory's contents go in the image, e.g. `app/fn` (no leading slash). */
  prefix: string;
  /** Paths relative to the directory (slash-separated) to leave out; a directory excludes its subtree. */
  exclude?: (relativePath: string) => boolean;
}

export async function entriesFromDirectory(dir: string, options: DirectoryOptions): Promise<TarEntry[]> {
  const out: TarEntry[] = [];
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      if (options.exclude?.(path)) continue;
      const target = posix.join(options.prefix, path);
      const st = lstatSync(join(dir, path));
      if (st.isDirectory()) {
        out.push({ path: target, type: 'dir' });
        walk(path);
      } else if (st.isSymbolicLink()) {
        out.push({ path: target, type: 'symlink', linkname: readlinkSync(join(dir, path)) });
      } else if (st.isFile()) {
        out.push({ path: target, type: 'file', mode: st.mode & 0o111 ? 0o755 : 0o644, data: readFileSync(join(dir, path)) });
      }
      // Sockets, FIFOs and devices have no place in a function image: left out.
    }
  };
  walk('');
  return out;
}
