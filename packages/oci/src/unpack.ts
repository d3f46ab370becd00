/**
 * Unpacking an image into a directory a process can run from: layers applied in order, whiteouts
 * (`.wh.<name>`, `.wh..wh..opq`) honoured as the image-spec says (they hide only lower layers),
 * each layer checked against its digest and diff_id. Anything that could reach outside the
 * directory, and device files, fail the unpack; the half-written directory is removed.
 */
import { chmod, link, lstat, mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { DigestMismatchError } from './digest.js';
import { HashingSink } from './hashing-sink.js';
import { resolveImage } from './image-source.js';
import type { ImageLayout } from './layout.js';
import { layerCompression } from './media-types.js';
import { archiveParts, resolveInRoot, symlinkEscapes, UnsafeArchiveError } from './safe-path.js';
import { type ReadEntry, readTar } from './tar-reader.js';
import type { Descriptor, Digest, ImageConfig, Platform } from './types.js';

const WHITEOUT = '.wh.';
const OPAQUE = '.wh..wh..opq';

export interface UnpackOptions {
  platform?: Platform;
}

/** Unpacks a tag or digest from the layout into `dest` (absent or empty); returns the image config. */
export async function unpackImage(layout: ImageLayout, ref: string | Descriptor, dest: string, options: UnpackOptions = {}): Promise<ImageConfig> {
  const image = await resolveImage(layout, ref, options.platform);
  const existing = await readdir(dest).catch(() => []);
  if (existing.length > 0) throw new Error(`Cannot unpack into ${dest}: the directory is not empty`);
  await mkdir(dest, { recursive: true });
  try {
    for (const [i, layer] of image.manifest.layers.entries()) {
      await applyLayer(layout, layer, image.config.rootfs.diff_ids[i], dest);
    }
  } catch (err) {
    await rm(dest, { recursive: true, force: true });
    throw err;
  }
  return image.config;
}

/** Applies one layer blob from the layout onto `root`. */
export async function applyLayer(layout: ImageLayout, layer: Descriptor, diffId: Digest | undefined, root: string): Promise<void> {
  const compressedHash = new HashingSink();
  const diffHash = new HashingSink();
  const stages = layerCompression(layer.mediaType) === 'gzip' ? [compressedHash, createGunzip(), diffHash] : [compressedHash, diffHash];
  const tail = pipeline([layout.blobStream(layer.digest), ...stages], () => {}) as unknown as NodeJS.ReadableStream & AsyncIterable<Buffer> & { destroy(): void };
  const created = new Set<string>();
  try {
    for await (const entry of readTar(tail)) await applyEntry(root, entry, created);
  } finally {
    tail.destroy();
  }
  const [compressed, uncompressed] = [compressedHash.digest(), diffHash.digest()];
  if (compressed !== layer.digest) throw new DigestMismatchError(layer.digest, compressed, `layer ${layer.digest}`);
  if (diffId && uncompressed !== diffId) throw new DigestMismatchError(diffId, uncompressed, `the uncompressed layer ${layer.digest} (diff_id)`);
}

async function removeChildren(dir: string, keep: Set<string>, prefix: string): Promise<void> {
  for (const name of await readdir(dir).catch(() => [])) {
    const rel = prefix ? `${prefix}/${name}` : name;
    if (!keep.has(rel)) await rm(join(dir, name), { recursive: true, force: true });
  }
}

async function applyEntry(root: string, entry: ReadEntry, created: Set<string>): Promise<void> {
  const parts = archiveParts(entry.path);
  if (parts.length === 0) return;
  const name = parts[parts.length - 1]!;
  const parentParts = parts.slice(0, -1);
  const parent = await resolveInRoot(root, parentParts);
  const relParent = parentParts.join('/');
  if (name === OPAQUE) return removeChildren(parent, created, relParent);
  if (name.startsWith(WHITEOUT)) {
    const hidden = name.slice(WHITEOUT.length);
    const rel = relParent ? `${relParent}/${hidden}` : hidden;
    if (!created.has(rel)) await rm(join(parent, hidden), { recursive: true, force: true });
    return;
  }
  await mkdir(parent, { recursive: true });
  const target = join(parent, name);
  created.add(parts.join('/'));
  await writeEntry(root, entry, relative(root, target).split(sep), target);
}

/** `parts`: where the entry really lands under the root (symlinks on the way resolved). */
async function writeEntry(root: string, entry: ReadEntry, parts: string[], target: string): Promise<void> {
  const existing = await lstat(target).catch(() => undefined);
  // A later layer replaces what a lower one had, except a directory onto a directory (merged).
  if (existing && !(existing.isDirectory() && entry.type === 'dir')) await rm(target, { recursive: true, force: true });
  const mode = entry.mode & 0o1777;
  switch (entry.type) {
    case 'dir':
      if (existing?.isDirectory()) return;
      await mkdir(target, { mode: mode | 0o700 });
      // The umask does not decide an image's modes (a 1777 /tmp stays writable by every user).
      if ((mode | 0o700) & 0o7022) await chmod(target, mode | 0o700);
      return;
    case 'file':
      return writeFile(target, entry.data, { mode });
    case 'symlink':
      if (symlinkEscapes(parts, entry.linkname)) throw new UnsafeArchiveError(`Refusing symlink ${entry.path} -> ${entry.linkname}: it points outside the image root`);
      return symlink(entry.linkname, target);
    case 'hardlink': {
      const linkParts = archiveParts(entry.linkname);
      const source = join(await resolveInRoot(root, linkParts.slice(0, -1)), linkParts[linkParts.length - 1] ?? '');
      const st = await lstat(source).catch(() => undefined);
      if (!st?.isFile()) throw new UnsafeArchiveError(`Refusing hardlink ${entry.path} -> ${entry.linkname}: the target is not a file inside the image`);
      return link(source, target);
    }
    default:
      throw new UnsafeArchiveError(`Refusing ${entry.type === 'other' ? 'an unknown entry type' : `a ${entry.type} device`} at ${entry.path}: function images hold files, directories and links only`);
  }
}
