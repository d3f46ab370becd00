/**
 * Whether this node can stack image layers with overlayfs, found once per directory by doing it:
 * two lower layers (the upper one with overlayfs's whiteout, a 0/0 character device, and an opaque
 * directory, `trusted.overlay.opaque=y`) and an upper layer mounted in a temporary directory under
 * the one given (the filesystem the layers and the containers' writable layers live on: overlayfs
 * refuses some, such as an overlay itself). It needs root (mount, mknod, trusted.* attributes),
 * coreutils' `mknod` and attr's `setfattr`; where anything fails the node copies images instead.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const checked = new Map<string, Promise<boolean>>();

async function tryOverlay(dir: string): Promise<boolean> {
  await mkdir(dir, { recursive: true });
  const t = await mkdtemp(join(dir, '.overlay-check-'));
  const [l1, l2, upper, work, merged] = ['l1', 'l2', 'upper', 'work', 'merged'].map((d) => join(t, d)) as [string, string, string, string, string];
  let mounted = false;
  try {
    for (const d of [join(l1, 'd'), join(l2, 'd'), upper, work, merged]) await mkdir(d, { recursive: true });
    await writeFile(join(l1, 'gone'), 'lower');
    await writeFile(join(l1, 'd', 'hidden'), 'lower');
    await run('mknod', [join(l2, 'gone'), 'c', '0', '0']);
    await run('setfattr', ['-n', 'trusted.overlay.opaque', '-v', 'y', join(l2, 'd')]);
    await run('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${l2}:${l1},upperdir=${upper},workdir=${work}`, merged]);
    mounted = true;
    await writeFile(join(merged, 'written'), 'upper');
    return !existsSync(join(merged, 'gone')) && existsSync(join(merged, 'd')) && !existsSync(join(merged, 'd', 'hidden')) && existsSync(join(upper, 'written'));
  } catch {
    return false;
  } finally {
    if (mounted) await run('umount', [merged]).catch(() => undefined);
    await rm(t, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** True when overlayfs stacks layers (whiteouts and opaque directories as it marks them) under `dir`. */
export function overlaySupported(dir: string): Promise<boolean> {
  let p = checked.get(dir);
  if (!p) checked.set(dir, (p = tryOverlay(dir)));
  return p;
}
