/**
 * Archive entries from a directory on disk. Only what affects how the files run is kept: content,
 * the executable bit (→ 0755, else 0644), symlink targets. Owners, times and other mode bits are
 * the build machine's state and would make the digest differ between machines.
 */
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
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
  const walk = async (rel: string): Promise<void> => {
    const names = (await readdir(join(dir, rel))).sort();
    await Promise.all(names.map(async (name) => {
      const path = rel ? `${rel}/${name}` : name;
      if (options.exclude?.(path)) return;
      const target = posix.join(options.prefix, path);
      const st = await lstat(join(dir, path));
      if (st.isDirectory()) {
        out.push({ path: target, type: 'dir' });
        await walk(path);
      } else if (st.isSymbolicLink()) {
        out.push({ path: target, type: 'symlink', linkname: await readlink(join(dir, path)) });
      } else if (st.isFile()) {
        out.push({ path: target, type: 'file', mode: st.mode & 0o111 ? 0o755 : 0o644, data: await readFile(join(dir, path)) });
      }
      // Sockets, FIFOs and devices have no place in a function image: left out.
    }));
  };
  await walk('');
  return out;
}
