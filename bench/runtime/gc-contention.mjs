// `node bench/runtime/gc-contention.mjs`: why the tail grows when another process shares the server's
// core. Each server runs the JSON echo pinned to core 0 beside a busy process, under the bench's load,
// with every garbage-collection pause recorded (gc-observer.mjs); rounds are interleaved across servers.
// Prints, per server, the median over rounds of the load's p99 and of the minor-GC pause percentiles.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { occupyServerCore } from './contention.mjs';
import { frameworks, repoRoot, singleThreadedGcFramework } from './frameworks.mjs';
import { bodyFileFor, runLoad } from './load.mjs';
import { installCleanup, killAll, pinSelf, stop } from './procs.mjs';
import { scenarios } from './scenarios.mjs';
import { startServer } from './servers.mjs';
import { median } from '../lib/stats.mjs';

const { values: v } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '6' }, scenario: { type: 'string', default: 'echo' } } });
const scenario = scenarios.find((s) => s.id === v.scenario);
const observer = join(repoRoot, 'bench', 'runtime', 'gc-observer.mjs');
const fws = [frameworks.find((f) => f.id === 'func-runtime'), singleThreadedGcFramework(), ...frameworks.filter((f) => f.id === 'faas-js-runtime' || f.id === 'node-http')];
const fmt = (n) => (n === undefined || Number.isNaN(n) ? 'n/a' : n.toFixed(2));

async function main() {
  installCleanup();
  pinSelf();
  const tmp = mkdtempSync(join(tmpdir(), 'func-gc-'));
  process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
  const bodyFile = bodyFileFor(tmp, scenario);
  const servers = [];
  for (const fw of fws) {
    const file = join(tmp, `${fw.id}.json`);
    process.env.GC_PAUSES_FILE = file;
    const s = await startServer({ ...fw, nodeFlags: [...(fw.nodeFlags ?? []), '--import', observer] }, scenario, join(repoRoot, 'bench', 'results', 'logs'));
    if (!s.ok) throw new Error(`${fw.id}: ${s.reason}`);
    servers.push({ fw, file, ...s, rounds: [] });
  }
  const release = await occupyServerCore();
  try {
    for (let round = 0; round < Number(v.rounds); round++) {
      for (const s of servers) {
        const load = { port: s.port, scenario, bodyFile, connections: 50 };
        await runLoad('wrk', { ...load, seconds: 2 });
        s.child.kill('SIGUSR2'); // discards the warm-up's pauses
        await new Promise((r) => setTimeout(r, 200));
        const r = await runLoad('wrk', { ...load, seconds: Number(v.seconds) });
        s.child.kill('SIGUSR2');
        await new Promise((resolve) => setTimeout(resolve, 300));
        const gc = JSON.parse(readFileSync(s.file, 'utf8'));
        s.rounds.push({ p99Ms: r.p99Ms, rps: r.rps, minor: gc.minor });
        process.stderr.write(`round ${round + 1} ${s.fw.id.padEnd(18)} p99 ${fmt(r.p99Ms)} ms; minor GC ${gc.minor?.count ?? 0} pauses, p50 ${fmt(gc.minor?.p50)} ms, p99 ${fmt(gc.minor?.p99)} ms, max ${fmt(gc.minor?.max)} ms\n`);
      }
    }
  } finally {
    await release();
    await Promise.all(servers.map((s) => stop(s.child)));
  }
  const m = (s, f) => median(s.rounds.map(f).filter((x) => x !== undefined));
  const lines = [`| ${scenario.label}, core shared (medians of ${v.rounds} rounds of ${v.seconds} s) | req/s | p99 ms | minor GC pauses/s | minor GC p50 ms | minor GC p99 ms | minor GC max ms | GC ms per s |`, '|---|--:|--:|--:|--:|--:|--:|--:|'];
  for (const s of servers) {
    lines.push(`| ${s.fw.label} | ${Math.round(m(s, (r) => r.rps))} | ${fmt(m(s, (r) => r.p99Ms))} | ${fmt(m(s, (r) => (r.minor?.count ?? 0) / Number(v.seconds)))} | ${fmt(m(s, (r) => r.minor?.p50))} | ${fmt(m(s, (r) => r.minor?.p99))} | ${fmt(m(s, (r) => r.minor?.max))} | ${fmt(m(s, (r) => (r.minor?.totalMs ?? 0) / Number(v.seconds)))} |`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((err) => {
  process.stderr.write(`gc-contention: ${err.message}\n`);
  killAll('SIGKILL');
  process.exit(1);
});
