/**
 * The dev bundler: one incremental esbuild context per session. Each rebuild bundles the user's
 * own files (packages stay external) into a new file in a private temp directory, because Node
 * caches a module per URL: a new file is a new module, so the next import runs the new code while
 * modules already loaded (the old version, and every package) stay as they are.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BuildContext, Metafile } from 'esbuild';
import { fromEsbuildFailure, type SourceProblem } from './build-error.js';
import { externalPackagesByUrl, keepImportMetaOfSource } from './esbuild-plugins.js';

export type DevBuild =
  /** `hash` identifies the output: an unchanged hash means the same code (a save with no edit, a repeated event). */
  | { ok: true; url: string; inputs: string[]; hash: string }
  | { ok: false; problem: SourceProblem; inputs: string[] };

export interface DevBundler {
  build(): Promise<DevBuild>;
  dispose(): Promise<void>;
}

/** Absolute paths of the project's own files in a build (what the watcher must follow). */
function localInputs(meta: Metafile | undefined, cwd: string): string[] {
  if (!meta) return [];
  return Object.keys(meta.inputs)
    .filter((p) => !p.includes('node_modules/') && !p.includes(':'))
    .map((p) => resolve(cwd, p));
}

export async function createDevBundler(entryFile: string): Promise<DevBundler> {
  const esbuild = await import('esbuild');
  const outDir = mkdtempSync(join(tmpdir(), 'func-dev-'));
  const cwd = process.cwd();
  const entryUrl = pathToFileURL(entryFile).href;
  const ctx: BuildContext<{ write: false; metafile: true }> = await esbuild.context({
    entryPoints: [entryFile],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node.split('.')[0]}`,
    write: false,
    metafile: true,
    outfile: join(outDir, 'bundle.mjs'),
    sourcemap: 'inline',
    sourcesContent: false,
    logLevel: 'silent',
    absWorkingDir: cwd,
    // CommonJS code in the bundle calls `require` for packages (left external); bind it to the entry so
    // they resolve from the project. esbuild renames a `require` the code declares, so this cannot clash.
    banner: { js: `import { createRequire as __funcCreateRequire } from 'node:module'; const require = __funcCreateRequire(${JSON.stringify(entryUrl)});` },
    define: { __dirname: JSON.stringify(dirname(entryFile)), __filename: JSON.stringify(entryFile) },
    plugins: [externalPackagesByUrl(), keepImportMetaOfSource()],
  });
  // Also on an exit that skips dispose() (process.exit from a second Ctrl-C, a fatal error).
  const removeOutDir = () => rmSync(outDir, { recursive: true, force: true });
  process.once('exit', removeOutDir);
  let version = 0;
  let lastInputs: string[] = [entryFile];
  return {
    async build() {
      try {
        const result = await ctx.rebuild();
        lastInputs = localInputs(result.metafile, cwd);
        const output = result.outputFiles[0]!;
        const file = join(outDir, `v${++version}.mjs`);
        writeFileSync(file, output.contents);
        return { ok: true, url: pathToFileURL(file).href, inputs: lastInputs, hash: output.hash };
      } catch (err) {
        // A failed build has no metafile: keep following the last good files, plus the one at fault.
        const problem = fromEsbuildFailure(err, cwd);
        const inputs = problem.file && !lastInputs.includes(problem.file) ? [...lastInputs, problem.file] : lastInputs;
        return { ok: false, problem, inputs };
      }
    },
    async dispose() {
      await ctx.dispose();
      process.off('exit', removeOutDir);
      removeOutDir();
    },
  };
}
