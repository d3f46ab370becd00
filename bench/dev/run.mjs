// `node bench/dev/run.mjs`: the inner loop and the deployed cold start, measured as a user meets them.
//
// 1. Reload latency of `func-runtime dev`: from the moment a file is saved to the first response
//    served by the new code (polled over HTTP), for a small TypeScript function and for one that
//    imports 50 local modules (the edited one is a leaf, so the whole graph is rebuilt).
// 2. Cold start, spawn → first 200, of the same hello function served four ways, rounds interleaved:
//    the production bundle (`func-runtime build` → `func-runtime dist/`), the unbundled source
//    (ESM, and TypeScript transformed on load), and faas-js-runtime 4.
// Prints tables; never asserts. Flags: --edits N (20), --cold N (10).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuMs } from '../lib/process.mjs';
import { median } from '../lib/stats.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(repo, 'packages/runtime/dist/cli.js');
const FAAS = join(repo, 'node_modules/faas-js-runtime/bin/cli.js');
const { values: flags } = parseArgs({ options: { edits: { type: 'string', default: '20' }, cold: { type: 'string', default: '10' } } });
const EDITS = Number(flags.edits);
const COLD = Number(flags.cold);
const DEADLINE_MS = 30_000;

const live = new Set();
process.on('exit', () => { for (const c of live) c.kill('SIGKILL'); });
process.on('SIGINT', () => process.exit(130));

function node(args, opts = {}) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  live.add(child);
  child.out = '';
  child.stdout.on('data', (d) => (child.out += d));
  child.stderr.on('data', (d) => (child.out += d));
  child.exited = new Promise((resolve) => child.on('exit', (code) => { live.delete(child); resolve(code); }));
  return child;
}

async function stop(child) {
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 5000);
  await child.exited;
  clearTimeout(t);
}

function freePort() {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
function get(port, path = '/', keepAlive = true) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: keepAlive ? agent : false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Polls until `accept(reply)`; connection errors are retried at once (the cold-start number depends on it). */
async function until(port, accept, child, keepAlive) {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}: ${child.out}`);
    if (Date.now() > deadline) throw new Error(`no expected reply within ${DEADLINE_MS} ms: ${child.out.slice(-500)}`);
    try {
      const r = await get(port, '/', keepAlive);
      if (accept(r)) return r;
    } catch {
      // not listening yet
    }
  }
}

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- the functions, written into a scratch directory that sees the repo's node_modules ----

const work = mkdtempSync(join(os.tmpdir(), 'func-bench-dev-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

function project(name, files) {
  const dir = join(work, name);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

const version = (v) => `export const version: string = '${v}';\n`;
const small = project('small', {
  'package.json': '{ "type": "module", "main": "src/index.ts" }\n',
  'src/index.ts': "import { version } from './version.js';\nexport function handle(): string {\n  return version;\n}\n",
  'src/version.ts': version('r0'),
});
const wideFiles = {
  'package.json': '{ "type": "module", "main": "src/index.ts" }\n',
  'src/version.ts': version('r0'),
};
const mods = Array.from({ length: 50 }, (_, i) => `m${String(i).padStart(2, '0')}`);
for (const [i, m] of mods.entries()) {
  // Each module has a little real code, and the edited version module sits under one of them.
  const dep = i === 25 ? "import { version } from '../version.js';\n" : '';
  wideFiles[`src/mods/${m}.ts`] = `${dep}export function ${m}(x: number): number {\n  return x * ${i + 1} + ${i};\n}\nexport const ${m}Tag: string = ${i === 25 ? 'version' : `'${m}'`};\n`;
}
wideFiles['src/index.ts'] = `${mods.map((m) => `import { ${m}, ${m}Tag } from './mods/${m}.js';`).join('\n')}\n` +
  `const total = [${mods.join(', ')}].reduce((sum, f, i) => sum + f(i), 0);\n` +
  `export function handle(): string {\n  return [${mods.map((m) => `${m}Tag`).join(', ')}][25] + (total > 0 ? '' : '!');\n}\n`;
const wide = project('wide', wideFiles);

const hello = project('hello', {
  'package.json': '{ "type": "module", "main": "index.mjs" }\n',
  // One real dependency, as most functions have: what bundling saves grows with the import graph.
  'index.mjs': "import { stringify } from 'yaml';\nimport { greeting } from './greeting.mjs';\nconst banner = stringify({ greeting });\nexport function handle() {\n  return banner ? greeting : '';\n}\n",
  'greeting.mjs': "export const greeting = 'Hello, world!';\n",
  'index.ts': "import { stringify } from 'yaml';\nimport { greeting } from './greeting.mjs';\nconst banner: string = stringify({ greeting });\nexport function handle(): string {\n  return banner ? greeting : '';\n}\n",
});

// ---- 1. reload latency ----

async function reloadLatency(label, dir, edit) {
  const port = await freePort();
  const dev = node([CLI, 'dev', dir, '--port', String(port), '--host', '127.0.0.1', '--json', '--log-level', 'warn']);
  await until(port, (r) => r.body === 'r0', dev, true);
  const saveToReply = [];
  for (let i = 1; i <= EDITS; i++) {
    const v = `r${i}`;
    const t0 = performance.now();
    writeFileSync(edit, version(v));
    await until(port, (r) => r.body === v, dev, true);
    saveToReply.push(performance.now() - t0);
    await pause(100); // let the old version drain and retire before the next save
  }
  const internal = dev.out.split('\n').filter((l) => l.includes('"reloaded in')).map((l) => JSON.parse(l).ms);
  await stop(dev);
  return { label, saveToReply, internal };
}

// ---- 2. cold start ----

async function coldStartOnce(args, cwd) {
  const port = await freePort();
  const t0 = performance.now();
  const child = node(args(port), { cwd, env: { ...process.env, PORT: String(port), FUNC_PORT: String(port) } });
  await until(port, (r) => r.status === 200 && r.body === 'Hello, world!', child, false);
  const wall = performance.now() - t0;
  const cpu = cpuMs(child.pid);
  await stop(child);
  return { wall, cpu };
}

async function main() {
  const build = node([CLI, 'build', hello]);
  if ((await build.exited) !== 0) throw new Error(`build failed: ${build.out}`);
  const contenders = [
    ['func-runtime dist/ (bundle)', (p) => [CLI, join(hello, 'dist'), '--port', String(p)]],
    ['func-runtime index.mjs (source)', (p) => [CLI, join(hello, 'index.mjs'), '--port', String(p)]],
    ['func-runtime index.ts (TS source)', (p) => [CLI, join(hello, 'index.ts'), '--port', String(p)]],
    ['faas-js-runtime 4 index.mjs', (p) => [FAAS, join(hello, 'index.mjs'), '--port', String(p)]],
  ];
  const cold = new Map(contenders.map(([label]) => [label, { wall: [], cpu: [] }]));
  for (let round = 0; round < COLD; round++) {
    for (const [label, args] of contenders) {
      const r = await coldStartOnce(args, hello);
      cold.get(label).wall.push(r.wall);
      cold.get(label).cpu.push(r.cpu);
    }
  }

  const reloads = [
    await reloadLatency('small function (2 modules)', small, join(small, 'src/version.ts')),
    await reloadLatency('51 local modules (leaf edited)', wide, join(wide, 'src/version.ts')),
  ];

  const cpuModel = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model;
  console.log(`\n${new Date().toISOString()} · ${cpuModel} · ${os.cpus().length} cores · Node ${process.version} · load ${os.loadavg().map((n) => n.toFixed(1)).join(' ')}\n`);
  console.log(`Reload latency, func-runtime dev (${EDITS} edits each)\n`);
  console.log('| function | save → first new response, median | min | max | rebuild + swap (dev\'s own log), median |');
  console.log('|---|--:|--:|--:|--:|');
  for (const r of reloads) {
    console.log(`| ${r.label} | ${median(r.saveToReply).toFixed(0)} ms | ${Math.min(...r.saveToReply).toFixed(0)} ms | ${Math.max(...r.saveToReply).toFixed(0)} ms | ${median(r.internal).toFixed(0)} ms |`);
  }
  const ref = cold.get('faas-js-runtime 4 index.mjs');
  console.log(`\nCold start, spawn → first 200 (${COLD} interleaved rounds)\n`);
  console.log('| served as | wall, median | ratio to faas-js-runtime | CPU to first reply, median | ratio |');
  console.log('|---|--:|--:|--:|--:|');
  for (const [label, r] of cold) {
    const w = median(r.wall);
    const c = median(r.cpu);
    console.log(`| ${label} | ${w.toFixed(0)} ms | ${(w / median(ref.wall)).toFixed(2)} | ${c.toFixed(0)} ms | ${(c / median(ref.cpu)).toFixed(2)} |`);
  }
}

await main();
agent.destroy();
