/**
 * The files of an installed npm package and its production dependencies, as archive entries under
 * `node_modules/` — one way to fill a function image's runtime layer. Dependencies are found as
 * Node resolves them (the package's own node_modules, then each parent's), workspace symlinks are
 * followed to the real directory, and the result is sorted, so the same install gives the same layer.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { entriesFromDirectory } from './files.js';
import type { TarEntry } from './tar.js';

export interface NodePackageOptions {
  /**
   * Paths inside a package (slash-separated, relative to it) to leave out, e.g. tests and sources;
   * called with '' for the package itself, to leave a whole package out.
   */
  exclude?: (relativePath: string, packageName: string) => boolean;
}

interface Found {
  name: string;
  dir: string;
}

async function findPackage(name: string, from: string, root: string): Promise<string | undefined> {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (await stat(join(candidate, 'package.json')).then(() => true, () => false)) return candidate;
    if (dir === root || dirname(dir) === dir) return undefined;
  }
}

async function dependencyNames(dir: string): Promise<string[]> {
  const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
  return [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {})];
}

/** The package and its production dependency closure, each with its path under node_modules/. */
async function closure(name: string, root: string): Promise<Map<string, Found>> {
  const out = new Map<string, Found>();
  const visit = async (pkg: string, from: string, placeAt: string): Promise<void> => {
    const found = await findPackage(pkg, from, root);
    if (!found || out.has(placeAt)) return;
    const real = await realpath(found);
    out.set(placeAt, { name: pkg, dir: real });
    for (const dep of await dependencyNames(real)) {
      // A dependency nested under `found` keeps its nesting; one found higher up is hoisted.
      const nested = await stat(join(found, 'node_modules', dep, 'package.json')).then(() => true, () => false);
      await visit(dep, found, nested ? `${placeAt}/node_modules/${dep}` : `node_modules/${dep}`);
    }
  };
  await visit(name, root, `node_modules/${name}`);
  return out;
}

/** Entries for `node_modules/<name>` and its production dependencies, found from `root`. */
export async function nodePackageEntries(name: string, root: string, options: NodePackageOptions = {}): Promise<TarEntry[]> {
  const found = await closure(name, root);
  const entries: TarEntry[] = [];
  for (const [placeAt, pkg] of [...found.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (options.exclude?.('', pkg.name)) continue;
    const exclude = (rel: string) => rel === 'node_modules' || rel.startsWith('node_modules/') || (options.exclude?.(rel, pkg.name) ?? false);
    entries.push({ path: placeAt, type: 'dir' }, ...(await entriesFromDirectory(pkg.dir, { prefix: placeAt, exclude })));
  }
  return entries;
}
