/**
 * Unpacking an image into a directory a process can run from: layers applied in order, whiteouts
 * (`.wh.<name>`, `.wh..wh..opq`) honoured as the image-spec says (they hide only lower layers),
 * each layer checked against its digest and diff_id. Anything that could reach outside the
 * directory, device files and whiteouts that name no single entry fail the unpack; the
 * half-written directory is removed.
 *
 * One layer can also be unpacked on its own as an overlayfs lower layer (unpackLayer): its
 * whiteouts become overlayfs's (a 0/0 character device for `.wh.<name>`, the
 * `trusted.overlay.opaque=y` attribute for `.wh..wh..opq`, written by coreutils' `mknod` and
 * attr's `setfattr`, which need root), so the layers stacked by an overlay mount show what
 * applying them in order would.
 */
import { execFile } from 'node:child_process';
import { chmod, link, lstat, mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { pipeline } from 'node:stream';
import { promisify } from 'node:util';
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
const run = promisify(execFile);

/** A layer's whiteouts as overlayfs marks them: entries to mark as whited out, directories to mark opaque (absolute paths). */
interface OverlayMarks {
  whiteouts: Map<string, string>;
  opaque: Set<string>;
}

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

/**
 * Unpacks the one layer `layer` (with `diffId`, its uncompressed digest, checked) into `dest`
 * (absent or empty) as an overlayfs lower layer: its whiteouts as overlayfs's. A failure removes `dest`.
 */
export async function unpackLayer(layout: ImageLayout, layer: Descriptor, diffId: Digest | undefined, dest: string): Promise<void> {
  const existing = await readdir(dest).catch(() => []);
  if (existing.length > 0) throw new Error(`Cannot unpack into ${dest}: the directory is not empty`);
  await mkdir(dest, { recursive: true, mode: 0o755 });
  try {
    const marks: OverlayMarks = { whiteouts: new Map(), opaque: new Set() };
    await applyLayer(layout, layer, diffId, dest, marks);
    // An entry of this layer under the whited-out name (a directory made for its children) stays.
    for (const path of marks.whiteouts.values()) if (!(await lstat(path).catch(() => undefined))) await run('mknod', ['-m', '000', path, 'c', '0', '0']);
    if (marks.opaque.size > 0) await run('setfattr', ['-n', 'trusted.overlay.opaque', '-v', 'y', ...marks.opaque]);
  } catch (err) {
    await rm(dest, { recursive: true, force: true });
    throw err;
  }
}

/** Applies one layer blob from the layout onto `root`; with `overlay`, whiteouts are collected there instead of applied. */
async function applyLayer(layout: ImageLayout, layer: Descriptor, diffId: Digest | undefined, root: string, overlay?: OverlayMarks): Promise<void> {
  const compressedHash = new HashingSink();
  const diffHash = new HashingSink();
  const stages = layerCompression(layer.mediaType) === 'gzip' ? [compressedHash, createGunzip(), diffHash] : [compressedHash, diffHash];
  const tail = pipeline([layout.blobStream(layer.digest), ...stages], () => {}) as unknown as NodeJS.ReadableStream & AsyncIterable<Buffer> & { destroy(): void };
  const created = new Set<string>();
  try {
    for await (const entry of readTar(tail)) await applyEntry(root, entry, created, overlay);
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

/** The entry a `.wh.<name>` whiteout hides: one name, neither `.`, `..` nor another whiteout. */
function whitedOut(path: string, name: string): string {
  const hidden = name.slice(WHITEOUT.length);
  if (hidden === '' || hidden === '.' || hidden === '..' || hidden.startsWith(WHITEOUT)) throw new UnsafeArchiveError(`Refusing whiteout ${JSON.stringify(path)} in a layer: it names no single entry`);
  return hidden;
}

async function applyEntry(root: string, entry: ReadEntry, created: Set<string>, overlay?: OverlayMarks): Promise<void> {
  const parts = archiveParts(entry.path);
  if (parts.length === 0) return;
  const name = parts[parts.length - 1]!;
  const parentParts = parts.slice(0, -1);
  const parent = await resolveInRoot(root, parentParts);
  const relParent = parentParts.join('/');
  if (name === OPAQUE) {
    if (!overlay) return removeChildren(parent, created, relParent);
    await mkdir(parent, { recursive: true, mode: 0o755 });
    overlay.opaque.add(parent);
    return;
  }
  if (name.startsWith(WHITEOUT)) {
    const hidden = whitedOut(entry.path, name);
    const rel = relParent ? `${relParent}/${hidden}` : hidden;
    if (created.has(rel)) return;
    if (!overlay) return rm(join(parent, hidden), { recursive: true, force: true });
    await mkdir(parent, { recursive: true, mode: 0o755 });
    overlay.whiteouts.set(rel, join(parent, hidden));
    return;
  }
  await mkdir(parent, { recursive: true, mode: 0o755 });
  const target = join(parent, name);
  created.add(parts.join('/'));
  overlay?.whiteouts.delete(parts.join('/'));
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
      // A directory the layer lists takes the layer's mode, also when it exists already (made for an
      // entry listed first, or by a lower layer); the umask does not decide an image's modes (a 1777
      // /tmp stays writable by every user).
      if (existing?.isDirectory()) return chmod(target, mode | 0o700);
      await mkdir(target, { mode: mode | 0o700 });
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
