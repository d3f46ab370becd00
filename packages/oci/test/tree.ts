import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

/** Every path under a directory → file text, `-> target` for symlinks, `dir` for directories. */
export function readTree(root: string, rel = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(join(root, rel)).sort()) {
    const path = rel ? `${rel}/${name}` : name;
    const st = lstatSync(join(root, path));
    if (st.isSymbolicLink()) out[path] = `-> ${readlinkSync(join(root, path))}`;
    else if (st.isDirectory()) Object.assign(out, { [path]: 'dir' }, readTree(root, path));
    else out[path] = readFileSync(join(root, path), 'utf8');
  }
  return out;
}
