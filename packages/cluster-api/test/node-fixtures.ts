/**
 * What the node agent tests share: real function images (a real `func-runtime build` bundle of an
 * example plus the runtime's npm closure, built with @func/oci into an OCI layout, as
 * packages/oci/test/function-image.test.ts builds them), a client for a served cluster API, and a
 * poll that waits for a condition rather than a duration.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { KubeClient, type KubeObject } from '@func/kube-client';
import { buildFunctionImage, ImageLayout, nodePackageEntries, type RuntimeLayer } from '@func/oci';

const run = promisify(execFile);
export const repo = fileURLToPath(new URL('../../../', import.meta.url));
const runtimeCli = join(repo, 'packages/runtime/dist/cli.js');

const excludeSources = (rel: string, pkg: string) =>
  (pkg === '@func/runtime' && (/^(src|test|scripts)(\/|$)/.test(rel) || rel.endsWith('.tsbuildinfo') || /\.test\.(js|d\.ts|js\.map|d\.ts\.map)$/.test(rel))) ||
  (pkg === 'esbuild' && rel === '') || pkg.startsWith('@esbuild/');

let runtime: Promise<RuntimeLayer> | undefined;
const bundles = new Map<string, Promise<string>>();
const work = mkdtempSync(join(tmpdir(), 'node-images-'));

/** A `func-runtime build` of a directory (an example name, or a path), once per process. */
export function bundle(source: string): Promise<string> {
  const dir = source.includes('/') ? source : join(repo, 'examples', source);
  let b = bundles.get(dir);
  if (!b) {
    const out = join(work, `bundle-${bundles.size}`);
    b = run(process.execPath, [runtimeCli, 'build', dir, '--outdir', out]).then(() => out);
    bundles.set(dir, b);
  }
  return b;
}

/** A function image of `source` tagged `tag` in the layout at `layoutDir` (a node's `<data-dir>/images`). */
export async function functionImage(layoutDir: string, source: string, tag: string): Promise<string> {
  runtime ??= nodePackageEntries('@func/runtime', repo, { exclude: excludeSources }).then((entries) => ({ entries, cli: 'node_modules/@func/runtime/dist/cli.js' }));
  const layout = await ImageLayout.open(layoutDir);
  const image = await buildFunctionImage(layout, { bundleDir: await bundle(source), runtime: await runtime, name: tag.split(':')[0]!.split('/').pop()!, tag });
  return image.digest;
}

/** A client of a plain-HTTP cluster API (tests' in-process servers). */
export const plainClient = (url: string): KubeClient =>
  new KubeClient({ server: url, insecureSkipTlsVerify: false, credentials: {}, namespace: 'default', context: 'test', files: [] });

/** Polls `probe` until it returns a value (not undefined/false), or fails after `timeoutMs` with the last value seen. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)?.slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export type Obj = KubeObject & { spec?: any; status?: any };
