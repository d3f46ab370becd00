// `node bench/runtime/profile.mjs`: runs one framework under `node --cpu-prof` with the bench's load
// and prints where its CPU time goes (self time per function and per module), as markdown.
// Options: --framework ID (default func-runtime), --scenarios hello,cloudevent, --seconds N (10), --top N (15),
// --startup (also profile start-up to the first reply; --scenarios '' for start-up alone).
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { summarize } from './cpuprofile.mjs';
import { frameworks, repoRoot, useRuntimeCli } from './frameworks.mjs';
import { snapshotRuntime } from './snapshot.mjs';
import { bodyFileFor, runLoad, wrkAvailable } from './load.mjs';
import { machineInfo, runtimeCommit } from './machine.mjs';
import { installCleanup, pinSelf, stop } from './procs.mjs';
import { scenarios } from './scenarios.mjs';
import { startServer } from './servers.mjs';

const say = (m) => process.stderr.write(`${m}\n`);
const pct = (ms, total) => `${((ms / total) * 100).toFixed(1)} %`;

const hrUs = () => Number(process.hrtime.bigint() / 1000n);

/** Starts `fw` under --cpu-prof, runs `during(server)`, stops it gracefully and returns the profile path. */
async function withProfiler(fw, scenario, tmp, during, intervalUs = 1000) {
  const dir = join(tmp, `${scenario.id}-${Date.now()}`);
  const flags = ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', String(intervalUs)];
  const s = await startServer(fw, scenario, join(repoRoot, 'bench', 'results', 'logs'), flags);
  if (!s.ok) throw new Error(`${fw.id} ${scenario.id}: ${s.reason}`);
  let result;
  try {
    result = await during(s);
  } finally {
    // A graceful exit is what makes V8 write the profile.
    const exit = await stop(s.child, 10000);
    if (exit.signal === 'SIGKILL') throw new Error(`${fw.id} did not exit on SIGTERM within 10 s; no profile`);
  }
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`${fw.id} wrote no .cpuprofile (does it exit normally on SIGTERM?)`);
  return { file: join(dir, file), result };
}

/** Steady state: a warm-up, then only the samples taken during the measured load. */
async function profileScenario(fw, scenario, o, tmp) {
  const args = { scenario, bodyFile: bodyFileFor(tmp, scenario), connections: 50 };
  const { file, result } = await withProfiler(fw, scenario, tmp, async (s) => {
    await runLoad(o.loader, { ...args, port: s.port, seconds: 2 });
    const fromUs = hrUs();
    const load = await runLoad(o.loader, { ...args, port: s.port, seconds: o.seconds });
    return { load, window: { fromUs, toUs: hrUs() } };
  });
  const summary = summarize(file, repoRoot, { window: result.window, moved: o.moved });
  return { title: `${Math.round(result.load.rps).toLocaleString('en-US')} req/s under the profiler`, summary };
}

/** Start-up: everything from process start to the first correct reply (startServer waits for it). */
async function profileStartup(fw, o, tmp) {
  const hello = scenarios.find((s) => s.id === 'hello');
  // Start-up lasts a few hundred ms: sample every 100 µs instead of every 1 ms.
  const { file } = await withProfiler(fw, hello, tmp, async () => undefined, 100);
  return { title: 'start-up to the first reply (and exit)', summary: summarize(file, repoRoot, { moved: o.moved }) };
}

function render(fw, label, { title, summary }, top) {
  const t = summary.totalMs;
  const fns = summary.functions.slice(0, top).map((f) => `| ${pct(f.ms, t)} | \`${f.name}\` | ${f.where} |`);
  const mods = summary.modules.slice(0, 10).map((m) => `| ${pct(m.ms, t)} | ${m.module} |`);
  return [
    `#### ${fw.label}, ${label}: ${title}, ${(t / 1000).toFixed(2)} s sampled (idle excluded)`,
    '',
    '| self | function | where |',
    '|--:|---|---|',
    ...fns,
    '',
    '| self | module |',
    '|--:|---|',
    ...mods,
    '',
  ].join('\n');
}

async function main() {
  const { values: v } = parseArgs({
    options: {
      framework: { type: 'string', default: 'func-runtime' },
      scenarios: { type: 'string', default: 'hello,cloudevent' },
      seconds: { type: 'string', default: '10' },
      top: { type: 'string', default: '15' },
      startup: { type: 'boolean', default: false },
    },
  });
  const fw = frameworks.find((f) => f.id === v.framework);
  if (!fw) throw new Error(`--framework: unknown "${v.framework}"`);
  const picked = v.scenarios.split(',').filter(Boolean).map((id) => scenarios.find((s) => s.id === id) ?? id);
  const unknown = picked.filter((s) => typeof s === 'string');
  if (unknown.length) throw new Error(`--scenarios: unknown ${unknown.join(',')}`);
  const o = { seconds: Number(v.seconds), loader: wrkAvailable() ? 'wrk' : 'autocannon' };
  installCleanup();
  pinSelf();
  const tmp = mkdtempSync(join(tmpdir(), 'func-prof-'));
  process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
  const snapshot = snapshotRuntime(tmp);
  if (snapshot) useRuntimeCli(snapshot.cli);
  o.moved = snapshot?.moved;
  const out = [];
  try {
    for (const scenario of picked) {
      say(`profiling ${fw.id} on ${scenario.id} for ${o.seconds} s`);
      out.push(render(fw, scenario.label, await profileScenario(fw, scenario, o, tmp), Number(v.top)));
    }
    if (v.startup) {
      say(`profiling ${fw.id} start-up`);
      out.push(render(fw, 'cold start', await profileStartup(fw, o, tmp), Number(v.top)));
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const build = snapshot ? `func-runtime: commit ${runtimeCommit(repoRoot)}, build of ${snapshot.builtAt}. ` : '';
  const head = `${build}Node ${process.version}, ${machineInfo().cpuModel}; \`node bench/runtime/profile.mjs ${process.argv.slice(2).join(' ')}\`\n\n`;
  const md = head + out.join('\n');
  process.stdout.write(md);
  const dir = join(repoRoot, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `profile-${fw.id}-${new Date().toISOString().replace(/[:.]/g, '-')}.md`), md);
}

main().catch((err) => {
  say(`profile: ${err.message}`);
  process.exit(1);
});
