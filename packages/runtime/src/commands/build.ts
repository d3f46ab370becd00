/**
 * `func-runtime build [path]`: bundle the function and its dependencies for production.
 * esbuild is imported only when this command runs.
 */
import { relative, resolve } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import type { Exit } from '../lifecycle.js';
import { resolveEntry } from '../loader.js';

interface BuildArgs {
  path: string;
  outdir?: string;
}

async function build(argv: BuildArgs, exit: Exit): Promise<void> {
  const entry = resolveEntry(argv.path);
  const { buildBundle } = await import('../dev/build-bundle.js');
  const started = performance.now();
  const result = await buildBundle(entry, resolve(argv.outdir ?? resolve(entry.dir, 'dist')));
  const ms = Math.round(performance.now() - started);
  const shown = relative(process.cwd(), result.file) || result.file;
  process.stdout.write(`func-runtime: built ${shown} (${(result.bytes / 1024).toFixed(1)} KiB) in ${ms} ms\n`);
  if (result.externals.length > 0) {
    process.stdout.write(`func-runtime: native addons left out of the bundle, install them next to it: ${result.externals.join(', ')}\n`);
  }
  process.stdout.write(`func-runtime: serve it with: func-runtime ${relative(process.cwd(), resolve(result.file, '..')) || '.'}\n`);
  exit(0);
}

export function buildCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, BuildArgs> {
  return {
    command: 'build [path]',
    describe: 'Bundle a function and its dependencies into one file for production',
    builder: (y) =>
      y.positional('path', { type: 'string', default: '.', describe: 'function file or directory' })
        .option('outdir', { type: 'string', describe: 'output directory [default: dist/ in the function directory]' }) as unknown as Argv<BuildArgs>,
    handler: (argv) => build(argv, exit).catch(onError),
  };
}
