#!/usr/bin/env node
/**
 * Source → image → running function, as `func-runtime build --image` and `func-runtime deploy` do
 * it, on the http template. Prints tables (medians of interleaved rounds), never asserts.
 *
 *   npm run build && node bench/deploy/run.mjs [--rounds 5]
 *
 * 1. The runtime layer: the runtime's npm closure without esbuild (what bench/oci measured) against
 *    the runtime bundled into one file (what `build --image` ships): layer size and files, image
 *    build in a fresh process (cold: empty layout; rebuild: after an edit), unpack, and the unpacked
 *    image's cold start to its first 200 — each as the node agent would run it.
 * 2. `func-runtime build --image` as a user runs it (a whole CLI process): cold (no cache, empty
 *    layout) and after an edit.
 * 3. Deploy to the embedded cluster (`cluster-api serve` with its node agent): source → image →
 *    applied → first 200 through the printed URL; and a redeploy after an edit → first 200 of the new
 *    version. Skipped when the cluster runs no node (the node agent is not there).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { listeningLine, spawnUntil } from '../lib/process.mjs';
import { median } from '../lib/stats.mjs';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(repo, 'packages/runtime/dist/cli.js');
const CLUSTER = join(repo, 'packages/cluster-api/dist/cli.js');
const oci = join(repo, 'packages/oci/dist/index.js');
const layerModule = join(repo, 'packages/runtime/dist/image/runtime-layer.js');
const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1]) || 5;
const work = mkdtempSync(join(tmpdir(), 'bench-deploy-'));
const range = (xs) => `${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))}`;
const env = { ...process.env, XDG_CACHE_HOME: join(work, 'cache'), KUBECONFIG: '' };

/** The http template rendered by this repo's create-func (no install: the bundle needs none). */
async function template(name) {
  await run(process.execPath, [join(repo, 'packages/create-func/bin/create-func.js'), join(work, name), '--template', 'http', '--no-install'], { cwd: work });
  return join(work, name);
}

const edit = (dir, i) => {
  const file = join(dir, 'src/index.ts');
  writeFileSync(file, readFileSync(file, 'utf8').replace(/Hello, \$\{name\}!( \(edit \d+\))?/, `Hello, \${name}! (edit ${i})`));
};

// ---- 1. closure vs bundle, in fresh processes ----
const imageScript = (kind, layout, bundleDir) => `
  import { ImageLayout, buildFunctionImage, nodePackageEntries } from ${JSON.stringify(oci)};
  const t0 = performance.now();
  const layout = await ImageLayout.open(${JSON.stringify(layout)});
  let runtime;
  if (${JSON.stringify(kind)} === 'closure') {
    const leftOut = (rel, pkg) => (pkg === '@func/runtime' && (/^(src|test|scripts)(\\/|$)/.test(rel) || rel.endsWith('.tsbuildinfo'))) || (rel === '' && (pkg === 'esbuild' || pkg.startsWith('@esbuild/') || pkg === 'chokidar' || pkg === 'pino-pretty' || pkg === '@func/oci' || pkg === '@func/kube-client'));
    runtime = { entries: await nodePackageEntries('@func/runtime', ${JSON.stringify(repo)}, { exclude: leftOut }), cli: 'node_modules/@func/runtime/dist/cli.js' };
  } else {
    const { runtimeLayer } = await import(${JSON.stringify(layerModule)});
    runtime = await runtimeLayer(${JSON.stringify(join(work, 'cache'))});
  }
  const image = await buildFunctionImage(layout, { bundleDir: ${JSON.stringify(bundleDir)}, runtime, name: 'bench', tag: 'bench' });
  const t1 = performance.now();
  console.log(JSON.stringify({ build: t1 - t0, files: runtime.entries.filter((e) => e.type === 'file').length, layer: image.manifest.layers[0].size, digest: image.digest }));`;

async function buildIn(kind, layout, bundleDir) {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', imageScript(kind, layout, bundleDir)], { cwd: repo, env });
  return JSON.parse(stdout);
}

async function unpackAndStart(layout, digest, root) {
  const { ImageLayout, unpackImage } = await import(oci);
  const t0 = performance.now();
  const config = await unpackImage(await ImageLayout.open(layout), digest, root);
  const unpacked = performance.now() - t0;
  const port = 20000 + Math.floor(Math.random() * 20000);
  const started = performance.now();
  const child = spawn(process.execPath, [join(root, config.config.Entrypoint[1]), join(root, config.config.Cmd[0])], { env: { PATH: process.env.PATH, PORT: String(port), FUNC_HOST: '127.0.0.1' }, stdio: 'ignore' });
  let first;
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/?name=bench`).then((r) => r.status === 200, () => false);
    if (ok) { first = performance.now() - started; break; }
    if (performance.now() - started > 20_000) throw new Error('the unpacked image never answered');
    await new Promise((r) => setTimeout(r, 5));
  }
  await new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); });
  return { unpacked, first };
}

async function layers() {
  const dir = await template('layer-fn');
  const bundleDir = join(work, 'layer-bundle');
  const results = { closure: { cold: [], rebuild: [], unpack: [], start: [] }, bundle: { cold: [], rebuild: [], unpack: [], start: [] } };
  const facts = {};
  for (let i = 0; i < rounds; i++) {
    for (const kind of i % 2 ? ['bundle', 'closure'] : ['closure', 'bundle']) {
      rmSync(join(work, 'cache'), { recursive: true, force: true });
      await run(process.execPath, [CLI, 'build', dir, '--outdir', bundleDir], { env });
      const layout = join(work, `layout-${kind}-${i}`);
      const cold = await buildIn(kind, layout, bundleDir);
      writeFileSync(join(bundleDir, 'edit.txt'), `edit ${i}`);
      const again = await buildIn(kind, layout, bundleDir);
      const started = await unpackAndStart(layout, again.digest, join(work, `root-${kind}-${i}`));
      Object.assign(results[kind], { cold: [...results[kind].cold, cold.build], rebuild: [...results[kind].rebuild, again.build], unpack: [...results[kind].unpack, started.unpacked], start: [...results[kind].start, started.first] });
      facts[kind] = { files: cold.files, layer: cold.layer };
    }
  }
  console.log(`\n### 1. Runtime layer: npm closure vs one bundled file (http template, ${rounds} interleaved rounds, Node ${process.version})\n`);
  console.log('| runtime layer | files | layer (gzip) | image build, cold | rebuild after an edit | unpack | unpacked image: spawn → first 200 |');
  console.log('|---|--:|--:|--:|--:|--:|--:|');
  for (const kind of ['closure', 'bundle']) {
    const r = results[kind];
    const cell = (xs) => `${Math.round(median(xs))} ms (${range(xs)})`;
    console.log(`| ${kind === 'closure' ? 'npm closure without esbuild, chokidar, pino-pretty' : 'one bundled file (what ships)'} | ${facts[kind].files} | ${(facts[kind].layer / 1024 / 1024).toFixed(2)} MiB | ${cell(r.cold)} | ${cell(r.rebuild)} | ${cell(r.unpack)} | ${cell(r.start)} |`);
  }
  console.log('\nImage builds run in a fresh Node process (module load included); the bundle\'s cold build includes bundling the runtime (no cache).');
}

// ---- 2. the CLI ----
async function timed(args, cwd) {
  const t0 = performance.now();
  await run(process.execPath, [CLI, ...args], { cwd, env });
  return performance.now() - t0;
}

async function cli() {
  const dir = await template('cli-fn');
  const cold = [];
  const warm = [];
  for (let i = 0; i < rounds; i++) {
    rmSync(join(work, 'cache'), { recursive: true, force: true });
    const layout = join(work, `cli-layout-${i}`);
    cold.push(await timed(['build', '--image', 'localhost/cli-fn:latest', '--images', layout], dir));
    edit(dir, i);
    warm.push(await timed(['build', '--image', 'localhost/cli-fn:latest', '--images', layout], dir));
  }
  console.log(`\n### 2. \`func-runtime build --image\` (the whole command, a new process each time; ${rounds} rounds)\n`);
  console.log('| | median | range |\n|---|--:|--:|');
  console.log(`| cold: no runtime-layer cache, empty layout | ${Math.round(median(cold))} ms | ${range(cold)} ms |`);
  console.log(`| after an edit (cache and layout warm) | ${Math.round(median(warm))} ms | ${range(warm)} ms |`);
}

// ---- 3. deploy to the embedded cluster ----
async function startCluster() {
  const dataDir = join(work, 'cluster');
  const { child } = await spawnUntil(process.execPath, [CLUSTER, 'serve', '--port', '0', '--data-dir', dataDir], { ready: listeningLine, env });
  return { child, kubeconfig: join(dataDir, 'kubeconfig.yaml') };
}

async function firstAnswer(url, expected, deadline = 60_000) {
  const t0 = performance.now();
  for (;;) {
    const body = await fetch(url).then((r) => (r.status === 200 ? r.text() : ''), () => '');
    if (body.includes(expected)) return;
    if (performance.now() - t0 > deadline) throw new Error(`${url} never answered with ${expected}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function deployOnce(dir, kubeconfig, expected) {
  const t0 = performance.now();
  const { stdout } = await run(process.execPath, [CLI, 'deploy', dir], { env: { ...env, KUBECONFIG: kubeconfig } });
  const applied = performance.now() - t0;
  const url = /^\s+URL\s+(\S+)/m.exec(stdout)?.[1];
  if (!url) throw new Error(`deploy printed no URL:\n${stdout}`);
  await firstAnswer(`${url}?name=bench`, expected);
  return { total: performance.now() - t0, command: applied };
}

async function deploys() {
  const cluster = await startCluster();
  try {
    const nodes = await run('kubectl', ['--kubeconfig', cluster.kubeconfig, 'get', 'nodes', '-o', 'name'], { env }).then((r) => r.stdout.trim(), () => '');
    if (!nodes) {
      console.log('\n### 3. Deploy\n\nSkipped: this cluster-api serve runs no node agent, so nothing runs a pod.');
      return;
    }
    const first = [];
    const again = [];
    for (let i = 0; i < rounds; i++) {
      const dir = await template(`deploy-fn-${i}`);
      first.push(await deployOnce(dir, cluster.kubeconfig, 'Hello, bench!'));
      edit(dir, i);
      again.push(await deployOnce(dir, cluster.kubeconfig, `(edit ${i})`));
    }
    console.log(`\n### 3. Deploy to the embedded cluster (cluster-api serve + its node agent; ${rounds} rounds, a new function each round)\n`);
    console.log('| | deploy command | to the first 200 of that version |\n|---|--:|--:|');
    const cell = (xs) => `${Math.round(median(xs))} ms (${range(xs)})`;
    console.log(`| source → image → applied → first 200 | ${cell(first.map((r) => r.command))} | ${cell(first.map((r) => r.total))} |`);
    console.log(`| redeploy after an edit → first 200 of the new version | ${cell(again.map((r) => r.command))} | ${cell(again.map((r) => r.total))} |`);
  } finally {
    cluster.child.kill('SIGTERM');
  }
}

try {
  await layers();
  await cli();
  await deploys();
} finally {
  rmSync(work, { recursive: true, force: true });
}
