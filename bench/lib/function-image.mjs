// A function image built as the node agent runs it: the source bundled by `func-runtime build`,
// the runtime as its layer — its npm closure, or bundled into one file as `build --image` ships it
// — tagged in an OCI image layout.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildFunctionImage, ImageLayout, nodePackageEntries } from '../../packages/oci/dist/index.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../', import.meta.url));

/** Builds the function in `source` into `layoutDir` as `tag` (`name:version`), bundling it under `work`. */
export async function functionImage(source, layoutDir, tag, work, { runtime = 'closure' } = {}) {
  const bundle = join(work, `bundle-${tag.replace(/[^\w.-]/g, '_')}`);
  await run(process.execPath, [join(repo, 'packages/runtime/dist/cli.js'), 'build', source, '--outdir', bundle]);
  const layout = await ImageLayout.open(layoutDir);
  await buildFunctionImage(layout, { bundleDir: bundle, runtime: runtime === 'bundle' ? await bundled(work) : await closure(), name: tag.split(':')[0], tag });
}

async function closure() {
  const exclude = (rel, pkg) => (pkg === '@func/runtime' && /^(src|test|scripts)(\/|$)/.test(rel)) || (pkg === 'esbuild' && rel === '') || pkg.startsWith('@esbuild/');
  return { entries: await nodePackageEntries('@func/runtime', repo, { exclude }), cli: 'node_modules/@func/runtime/dist/cli.js' };
}

async function bundled(work) {
  const { runtimeLayer } = await import(join(repo, 'packages/runtime/dist/image/runtime-layer.js'));
  return runtimeLayer(join(work, 'runtime-layer-cache'));
}
