#!/usr/bin/env node
/**
 * Function image build and push times (@func/oci): a real `func-runtime build` bundle of
 * examples/hello plus the runtime package with its production dependencies. Rounds are interleaved;
 * the table shows medians. Prints, never asserts.
 *
 *   node bench/oci/run.mjs [--rounds 7]
 *
 * Scenarios (each round in a fresh Node process, as `func-runtime build --image` would run):
 *   cold build   empty layout: both layers tarred, hashed, gzip'd and written
 *   rebuild      the layout already holds an image with the runtime layer (a redeploy after an edit)
 *   push (first) everything to a local docker-registry
 *   push (again) after an edit: only the bundle layer, config and manifest go up
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { spawnUntil } from '../lib/process.mjs';
import { median } from '../lib/stats.mjs';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../', import.meta.url));
const oci = join(repo, 'packages/oci/dist/index.js');
const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 7;
const work = mkdtempSync(join(tmpdir(), 'bench-oci-'));

await run(process.execPath, [join(repo, 'packages/runtime/dist/cli.js'), 'build', join(repo, 'examples/hello'), '--outdir', join(work, 'bundle')]);

// `lean`: the runtime layer without esbuild (func-runtime needs it to build, not to serve a bundle).
const script = (layoutDir, tag, push, lean = false) => `
  import { ImageLayout, buildFunctionImage, nodePackageEntries, pushImage } from ${JSON.stringify(oci)};
  const sources = (rel, pkg) => pkg === '@func/runtime' && (/^(src|test|scripts)(\\/|$)/.test(rel) || rel.endsWith('.tsbuildinfo'));
  const exclude = (rel, pkg) => sources(rel, pkg) || (${lean} && rel === '' && (pkg === 'esbuild' || pkg.startsWith('@esbuild/')));
  const t0 = performance.now();
  const layout = await ImageLayout.open(${JSON.stringify(layoutDir)});
  const runtime = { entries: await nodePackageEntries('@func/runtime', ${JSON.stringify(repo)}, { exclude }), cli: 'node_modules/@func/runtime/dist/cli.js' };
  const image = await buildFunctionImage(layout, { bundleDir: ${JSON.stringify(join(work, 'bundle'))}, runtime, name: 'hello', tag: ${JSON.stringify(tag)} });
  const t1 = performance.now();
  let pushed = 0;
  if (${JSON.stringify(push)}) { await pushImage(layout, ${JSON.stringify(tag)}, ${JSON.stringify(push)}); pushed = performance.now() - t1; }
  const size = image.manifest.layers.reduce((n, l) => n + l.size, 0);
  console.log(JSON.stringify({ build: t1 - t0, push: pushed, size }));`;

async function measure(layoutDir, tag, push = '', lean = false) {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script(layoutDir, tag, push, lean)], { cwd: repo });
  return JSON.parse(stdout);
}

async function startRegistry() {
  const dir = mkdtempSync(join(work, 'registry-'));
  writeFileSync(join(dir, 'config.yml'), `version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: ${dir}/data\nhttp:\n  addr: 127.0.0.1:0\n  secret: bench\n`);
  const { child, match } = await spawnUntil('/usr/bin/docker-registry', ['serve', join(dir, 'config.yml')], { ready: /listening on (127\.0\.0\.1:\d+)/, stdout: 'pipe' });
  return { host: match[1], child };
}

const results = { cold: [], rebuild: [], pushFirst: [], pushAgain: [], leanCold: [], leanRebuild: [] };
let leanSize = 0;
let size = 0;
const registry = await startRegistry().catch(() => undefined);
try {
  for (let i = 0; i < rounds; i++) {
    const layout = join(work, `layout-${i}`);
    const first = await measure(layout, 'v1', registry ? `${registry.host}/bench/r${i}:v1` : '');
    results.cold.push(first.build);
    if (registry) results.pushFirst.push(first.push);
    size = first.size;
    writeFileSync(join(work, 'bundle', 'edit.txt'), `edit ${i}`);
    const again = await measure(layout, 'v2', registry ? `${registry.host}/bench/r${i}:v2` : '');
    results.rebuild.push(again.build);
    if (registry) results.pushAgain.push(again.push);
    rmSync(join(work, 'bundle', 'edit.txt'));
    const lean = await measure(join(work, `lean-${i}`), 'v1', '', true);
    results.leanCold.push(lean.build);
    leanSize = lean.size;
    writeFileSync(join(work, 'bundle', 'edit.txt'), `edit ${i}`);
    results.leanRebuild.push((await measure(join(work, `lean-${i}`), 'v2', '', true)).build);
    rmSync(join(work, 'bundle', 'edit.txt'));
  }
} finally {
  registry?.child.kill('SIGTERM');
}
const row = (name, xs) => `| ${name} | ${xs.length ? `${median(xs).toFixed(0)} ms` : 'n/a (no docker-registry)'} | ${xs.length ? `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)} ms` : ''} |`;
console.log(`\nFunction image (examples/hello + @func/runtime with production dependencies, ${(size / 1024 / 1024).toFixed(1)} MiB compressed), ${rounds} rounds, Node ${process.version}\n`);
console.log('| step | median | range |\n|---|---|---|');
console.log(row('cold build (empty layout)', results.cold));
console.log(row('rebuild after an edit (runtime layer in the layout)', results.rebuild));
console.log(row(`cold build, runtime layer without esbuild (${(leanSize / 1024 / 1024).toFixed(1)} MiB)`, results.leanCold));
console.log(row('rebuild after an edit, runtime layer without esbuild', results.leanRebuild));
console.log(row('push to a local docker-registry (all layers)', results.pushFirst));
console.log(row('push again after an edit (bundle layer only)', results.pushAgain));
rmSync(work, { recursive: true, force: true });
