// The bench measures one build of func-runtime from start to end: packages/runtime/dist is copied
// first, because the runtime's author may rebuild it while a run is in progress.
import { cpSync, existsSync, mkdirSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './frameworks.mjs';

const runtimeDir = join(repoRoot, 'packages', 'runtime');

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * Copies package.json and dist/ to `tmp`, with node_modules linked to the repository's (the runtime
 * has no node_modules of its own, so its imports resolve exactly as they do in place).
 * @returns {{cli: string, builtAt: string, moved: {from: string, to: string}} | null} null when there
 *   is no build to copy
 */
export function snapshotRuntime(tmp) {
  const dist = join(runtimeDir, 'dist');
  if (!existsSync(join(dist, 'cli.js'))) return null;
  const dir = join(tmp, 'func-runtime');
  mkdirSync(dir, { recursive: true });
  const builtAt = new Date(newestMtime(dist)).toISOString();
  cpSync(join(runtimeDir, 'package.json'), join(dir, 'package.json'));
  cpSync(dist, join(dir, 'dist'), { recursive: true });
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { cli: join(dir, 'dist', 'cli.js'), builtAt, moved: { from: dir, to: runtimeDir } };
}
