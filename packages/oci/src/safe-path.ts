/**
 * Paths inside an unpack root. Archive paths are checked lexically (no absolute path, no `..`);
 * existing symlinks on the way are followed as a chroot would (absolute targets start at the root),
 * and a resolution that would climb above the root is refused rather than clamped, so a crafted
 * layer can never make the unpacker write outside the directory it was given.
 */
import { lstat, readlink } from 'node:fs/promises';
import { join } from 'node:path';

export class UnsafeArchiveError extends Error {
  override name = 'UnsafeArchiveError';
}

const MAX_LINKS = 40;

/** The components of an archive path; refuses absolute paths and `..`. */
export function archiveParts(path: string): string[] {
  if (path.startsWith('/')) throw new UnsafeArchiveError(`Refusing absolute path ${JSON.stringify(path)} in a layer`);
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new UnsafeArchiveError(`Refusing path ${JSON.stringify(path)} in a layer: it contains ..`);
  return parts;
}

/** True when a symlink at `parts` with this target would point above the root. */
export function symlinkEscapes(parts: string[], target: string): boolean {
  if (target.startsWith('/')) return false;
  let depth = parts.length - 1;
  for (const p of target.split('/')) {
    if (p === '..') depth--;
    else if (p !== '' && p !== '.') depth++;
    if (depth < 0) return true;
  }
  return false;
}

/**
 * The real location (under `root`) of the directory `parts`, following symlinks inside the root.
 * Components that do not exist yet are kept as named (the caller creates them).
 */
export async function resolveInRoot(root: string, parts: string[]): Promise<string> {
  const pending = [...parts];
  const current: string[] = [];
  let links = 0;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (current.length === 0) throw new UnsafeArchiveError(`Refusing ${parts.join('/')}: a symlink on the way leads outside the image root`);
      current.pop();
      continue;
    }
    const full = join(root, ...current, part);
    const st = await lstat(full).catch(() => undefined);
    if (!st?.isSymbolicLink()) {
      current.push(part);
      continue;
    }
    if (++links > MAX_LINKS) throw new UnsafeArchiveError(`Refusing ${parts.join('/')}: too many levels of symlinks`);
    const target = await readlink(full);
    if (target.startsWith('/')) current.length = 0;
    pending.unshift(...target.split('/'));
  }
  return join(root, ...current);
}
