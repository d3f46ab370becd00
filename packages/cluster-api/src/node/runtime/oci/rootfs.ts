/**
 * A container's root filesystem: an overlay whose lower layers are the image's layers as the node
 * unpacked them (once per diff_id, shared read-only by every image and container that has them) and
 * whose upper layer is the container's own (`<bundle>/upper`, removed with the bundle); where the
 * node found overlayfs not to work (the image store's overlay()) a copy of the image unpacked whole.
 * Volumes for an fsGroup are given to that group as the kubelet does (group-owned, group
 * read/write, setgid directories).
 */
import { execFile } from 'node:child_process';
import { chownSync, chmodSync, cpSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { Mount } from '../cri.js';
import type { RootfsImage } from '../image-store.js';

const run = promisify(execFile);

/**
 * `<bundle>/rootfs`: the overlay of the image's layers (topmost first in lowerdir, as overlayfs
 * lists them; named relative to their directory, so the mount's options, at most a page, hold
 * dozens of layers), or the copy.
 */
export async function mountRootfs(image: RootfsImage, bundle: string): Promise<void> {
  const rootfs = join(bundle, 'rootfs');
  if (!image.overlay) {
    mkdirSync(rootfs, { recursive: true });
    cpSync(image.layers[0]!, rootfs, { recursive: true, verbatimSymlinks: true });
    return;
  }
  for (const d of ['rootfs', 'upper', 'work']) mkdirSync(join(bundle, d), { recursive: true });
  const dir = dirname(image.layers[0]!);
  const lower = image.layers.map((l) => basename(l)).reverse().join(':');
  await run('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${lower},upperdir=${join(bundle, 'upper')},workdir=${join(bundle, 'work')}`, rootfs], { cwd: dir });
}

export async function unmountRootfs(bundle: string): Promise<void> {
  await run('umount', [join(bundle, 'rootfs')]).catch(() => undefined);
}

function giveToGroup(path: string, gid: number): void {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return;
  chownSync(path, st.uid, gid);
  chmodSync(path, st.isDirectory() ? (st.mode & 0o7777) | 0o2070 : (st.mode & 0o7777) | 0o060);
  if (st.isDirectory()) for (const name of readdirSync(path)) giveToGroup(join(path, name), gid);
}

/** The pod's own volumes (under its directory; hostPath volumes are left as they are) owned by the fsGroup. */
export function chownForFsGroup(mounts: readonly Mount[], podDir: string, gid: number): void {
  for (const m of mounts) if (m.hostPath.startsWith(`${podDir}/`)) giveToGroup(m.hostPath, gid);
}
