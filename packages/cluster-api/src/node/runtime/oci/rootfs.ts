/**
 * A container's root filesystem: an overlay whose lower layer is the image as the node unpacked it
 * (once per digest, shared read-only by every container of that image) and whose upper layer is
 * the container's own; where overlayfs does not mount (some filesystems, some kernels) a copy of
 * the image instead. Volumes for an fsGroup are given to that group as the kubelet does
 * (group-owned, group read/write, setgid directories).
 */
import { execFile } from 'node:child_process';
import { chownSync, chmodSync, cpSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Mount } from '../cri.js';

const run = promisify(execFile);

/** `<bundle>/rootfs`: the overlay (or the copy) of the image at `image`. */
export async function mountRootfs(image: string, bundle: string): Promise<void> {
  const rootfs = join(bundle, 'rootfs');
  for (const d of ['rootfs', 'upper', 'work']) mkdirSync(join(bundle, d), { recursive: true });
  try {
    await run('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${image},upperdir=${join(bundle, 'upper')},workdir=${join(bundle, 'work')}`, rootfs]);
  } catch {
    cpSync(image, rootfs, { recursive: true, verbatimSymlinks: true });
  }
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
