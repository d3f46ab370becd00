/**
 * `func-runtime build`: the production bundle. One ES module holding the function and every
 * dependency, so the image needs no node_modules for it and Node resolves and reads one file at
 * start-up instead of hundreds (cold start is what every scale-from-zero pays). Identifiers are
 * kept (whitespace and syntax are minified) so stack traces name real functions even without
 * source maps; the linked source map points them at the original files.
 */
import { copyFileSync, existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { ResolvedEntry } from '../loader.js';
import { formatProblem, fromEsbuildFailure } from './build-error.js';
import { externalNativeAddons } from './esbuild-plugins.js';

export class BuildError extends Error {
  override name = 'StartError';
}

export interface BuildResult {
  /** The bundle `func-runtime <outdir>` serves. */
  file: string;
  bytes: number;
  /** Packages left out of the bundle (native addons): they must be installed next to it. */
  externals: string[];
}

/** The bundle's own package.json makes `func-runtime <outdir>` pick the bundle, whatever else is there. */
const BUNDLE_NAME = 'index.mjs';

/**
 * What makes CommonJS dependencies work inside one ES module: they call require (builtins, dynamic
 * names) and read __dirname, which an ES module lacks. esbuild renames any `require` the code
 * declares itself, so this one cannot clash. Shared with the image's runtime bundle.
 */
export const NODE_ESM_BUNDLE = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'silent',
  banner: { js: `import { createRequire as __funcCreateRequire } from 'node:module'; const require = __funcCreateRequire(import.meta.url);` },
  define: { __dirname: 'import.meta.dirname', __filename: 'import.meta.filename' },
} as const;

const inside = (child: string, parent: string): boolean => child === parent || child.startsWith(parent + sep);

/** Refuses an output directory that would overwrite the project (its package.json, its sources). */
export function checkOutdir(entry: ResolvedEntry, outdir: string): string {
  const out = resolve(outdir);
  if (inside(entry.dir, out) || inside(entry.file, out)) {
    throw new BuildError(`The output directory ${out} holds the function's own files (${relative(out, entry.file) || entry.file}); building there would overwrite them. Choose a separate directory, e.g. --outdir dist.`);
  }
  return out;
}

export async function buildBundle(entry: ResolvedEntry, outdir: string): Promise<BuildResult> {
  const out = checkOutdir(entry, outdir);
  const esbuild = await import('esbuild');
  const externals = new Set<string>();
  const file = join(out, BUNDLE_NAME);
  rmSync(file, { force: true });
  rmSync(`${file}.map`, { force: true });
  try {
    await esbuild.build({
      entryPoints: [entry.file],
      absWorkingDir: entry.dir,
      outfile: file,
      sourcemap: 'linked',
      legalComments: 'linked',
      ...NODE_ESM_BUNDLE,
      plugins: [externalNativeAddons(externals)],
    });
  } catch (err) {
    const problem = fromEsbuildFailure(err, entry.dir);
    throw new BuildError(`Cannot bundle ${entry.file}: ${formatProblem(problem, entry.dir)}. Fix it and run func-runtime build again.`);
  }
  writeFileSync(join(out, 'package.json'), `${JSON.stringify({ private: true, main: BUNDLE_NAME }, null, 2)}\n`);
  const yaml = join(entry.dir, 'func.yaml');
  if (existsSync(yaml)) copyFileSync(yaml, join(out, 'func.yaml'));
  return { file, bytes: statSync(file).size, externals: [...externals].sort() };
}
