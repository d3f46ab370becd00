/**
 * `func-runtime build [path]`: bundle the function and its dependencies for production; with
 * `--image` (or `--registry`, `--push`), also make it an OCI image (image/build-image.ts).
 * esbuild and @func/oci are imported only when this command runs.
 */
import { relative, resolve } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { CommandError } from '../command-error.js';
import type { Exit } from '../lifecycle.js';
import { resolveEntry } from '../loader.js';
import { withImageFlags, type ImageFlags } from './deploy-flags.js';

interface BuildArgs extends ImageFlags {
  path: string;
  outdir?: string;
  kubeconfig?: string;
}

const shown = (path: string) => relative(process.cwd(), path) || path;

async function bundle(argv: BuildArgs): Promise<void> {
  const entry = resolveEntry(argv.path);
  const [{ buildBundle }, { typeCheck }, { refuseTypeErrors }, { steps }] = await Promise.all([import('../dev/build-bundle.js'), import('../dev/typecheck.js'), import('../image/build-image.js'), import('../deploy/progress.js')]);
  const progress = steps(process.stderr);
  const started = performance.now();
  const checking = argv.typecheck === false ? undefined : typeCheck(entry.dir);
  checking?.catch(() => undefined);
  const result = await progress.run('bundling', buildBundle(entry, resolve(argv.outdir ?? resolve(entry.dir, 'dist'))));
  const check = await progress.run('type-checking', refuseTypeErrors(checking));
  if (check?.status === 'skipped') process.stdout.write(`func-runtime: not type-checked: ${check.reason}\n`);
  const ms = Math.round(performance.now() - started);
  process.stdout.write(`func-runtime: built ${shown(result.file)} (${(result.bytes / 1024).toFixed(1)} KiB) in ${ms} ms\n`);
  if (result.externals.length > 0) {
    process.stdout.write(`func-runtime: native addons left out of the bundle, install them next to it: ${result.externals.join(', ')}\n`);
  }
  process.stdout.write(`func-runtime: serve it with: func-runtime ${shown(resolve(result.file, '..'))}\n`);
}

const STORE_NOTE = { flag: '', env: ' (FUNC_IMAGES)', project: '' } as const;

async function image(argv: BuildArgs): Promise<void> {
  const started = performance.now();
  const [{ loadProject }, { resolveImageRequest }, { buildFunctionImageFromSource }, { steps }] = await Promise.all([
    import('../project.js'), import('../image/image-options.js'), import('../image/build-image.js'), import('../deploy/progress.js'), import('@func/kube-client'), import('@func/oci'), import('esbuild'),
  ]);
  const project = await loadProject(argv.path);
  const request = await resolveImageRequest(project, argv, { pushByDefault: false });
  const built = await buildFunctionImageFromSource(request, steps(process.stderr));
  if (built.typecheck?.status === 'skipped') process.stdout.write(`func-runtime: not type-checked: ${built.typecheck.reason}\n`);
  const ms = Math.round(performance.now() - started);
  process.stdout.write(`func-runtime: built ${built.ref} (${built.digest}) in ${ms} ms into ${shown(built.store)}${STORE_NOTE[request.storeSource]}\n`);
  if (built.pushed) {
    // Pushed: it runs wherever its registry is reachable; `deploy` would build it again.
    process.stdout.write(`func-runtime: pushed ${built.pushed.reference} (${built.pushed.uploaded} blobs uploaded, ${built.pushed.existing + built.pushed.mounted} already there)\n`);
    process.stdout.write(`func-runtime: run it from any pod spec or manifest as image: ${built.pushed.reference}\n`);
    return;
  }
  process.stdout.write(`func-runtime: deploy it with: func-runtime deploy${argv.path === '.' ? '' : ` ${argv.path}`}\n`);
}

export function buildCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, BuildArgs> {
  return {
    command: 'build [path]',
    describe: 'Bundle a function and its dependencies into one file for production; with --image, into an OCI image',
    builder: (y) =>
      withImageFlags(
        y.positional('path', { type: 'string', default: '.', describe: 'function file or directory' })
          .option('outdir', { type: 'string', describe: 'output directory of the bundle [default: dist/ in the function directory; .func/build with --image]' })
          .option('kubeconfig', { type: 'string', describe: 'kubeconfig whose local cluster\'s image store receives the image [default: KUBECONFIG, ~/.kube/config]' }),
      ) as unknown as Argv<BuildArgs>,
    handler: (argv) => {
      const wantsImage = argv.image !== undefined || argv.registry !== undefined || argv.push === true;
      if (wantsImage && argv.outdir !== undefined) return onError(new CommandError('--outdir applies to the bundle alone; an image build bundles into .func/build'));
      return (wantsImage ? image(argv) : bundle(argv)).then(() => exit(0), onError);
    },
  };
}
