/**
 * Where a process finds its mounts. A process shares the node's filesystem, so each container gets
 * a mount root, `<pod dir>/root/<container>`, in which every mount's path is a symlink to its
 * volume on the node: `/etc/config` is `$FUNC_MOUNT_ROOT/etc/config`. The container learns the root
 * from `FUNC_MOUNT_ROOT`, and env values and arguments that name a path under a mount are rewritten
 * to the same path under the root, so `CONFIG=/etc/config/app.yaml` just works.
 */
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize } from 'node:path';
import type { Mount } from '../cri.js';

export interface MountRoot {
  root: string;
  /** A path as the container would name it → where it is on the node (unchanged when under no mount). */
  hostPath(path: string): string;
}

/** Builds the container's mount root from scratch (a restart sees the same links). */
export function mountRoot(dir: string, mounts: readonly Mount[]): MountRoot {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const m of mounts) {
    const link = join(dir, m.containerPath);
    mkdirSync(dirname(link), { recursive: true });
    rmSync(link, { recursive: true, force: true });
    symlinkSync(m.hostPath, link);
  }
  const paths = mounts.map((m) => m.containerPath);
  const under = (p: string) => paths.some((m) => p === m || p.startsWith(m.endsWith('/') ? m : `${m}/`));
  return { root: dir, hostPath: (p) => (isAbsolute(p) && under(normalize(p)) ? join(dir, p) : p) };
}
