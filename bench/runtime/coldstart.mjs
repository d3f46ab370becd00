// Cold start: from spawn to the first 200 on the hello function, timed with process.hrtime in the
// harness (on the load core) while the server starts alone on its core. Runs are interleaved across
// frameworks, like the throughput rounds.
import { join } from 'node:path';
import { repoRoot, serverEnv } from './frameworks.mjs';
import { SERVER_CPU, cpuSeconds, freePort, spawnPinned, stop, waitForReply } from './procs.mjs';
import { requestOf, scenarios } from './scenarios.mjs';
import { median } from '../lib/stats.mjs';

const hello = scenarios.find((s) => s.id === 'hello');
const TIMEOUT_MS = 15000;

/**
 * @returns {Promise<Record<string, {ok: boolean, reason?: string, medianMs?: number, minMs?: number,
 *   maxMs?: number, cpuMs?: number, runs?: number[], cpuRuns?: number[]}>>}
 */
export async function runColdStarts(fws, count, ctx) {
  const runs = Object.fromEntries(fws.map((fw) => [fw.id, []]));
  const cpu = Object.fromEntries(fws.map((fw) => [fw.id, []]));
  const results = {};
  for (const fw of fws) {
    const missing = fw.missing();
    if (missing) results[fw.id] = { ok: false, reason: missing };
  }
  for (let i = 0; i < count; i++) {
    for (const fw of fws) {
      if (results[fw.id]) continue;
      const r = await coldStartOnce(fw, ctx);
      if (r.ok) {
        runs[fw.id].push(r.ms);
        cpu[fw.id].push(r.cpuMs);
      }
      else results[fw.id] = { ok: false, reason: r.reason };
    }
  }
  for (const fw of fws) {
    if (results[fw.id]) continue;
    const ms = runs[fw.id];
    const cpuMs = median(cpu[fw.id]);
    results[fw.id] = { ok: true, medianMs: median(ms), minMs: Math.min(...ms), maxMs: Math.max(...ms), cpuMs, runs: ms, cpuRuns: cpu[fw.id] };
    ctx.say(`  ${fw.id.padEnd(20)} median ${median(ms).toFixed(1)} ms (min ${Math.min(...ms).toFixed(1)}, max ${Math.max(...ms).toFixed(1)}), CPU ${cpuMs.toFixed(0)} ms`);
  }
  return results;
}

async function coldStartOnce(fw, ctx) {
  const port = await freePort();
  const logFile = join(ctx.logDir, `${fw.id}-coldstart.log`);
  const t0 = process.hrtime.bigint();
  const child = spawnPinned(SERVER_CPU, [...(fw.nodeFlags ?? []), ...fw.args('hello', port)], { env: serverEnv(), cwd: repoRoot, logFile });
  const ready = await waitForReply(child, port, requestOf(hello), TIMEOUT_MS, (res) => res.status === 200);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  // CPU time to the first reply: unlike wall time, it does not grow when other processes hold the core.
  const cpuMs = ready.ok ? cpuSeconds(child.pid) * 1000 : NaN;
  await stop(child);
  if (!ready.ok) return { ok: false, reason: `failed to start: ${ready.reason}` };
  const problems = hello.verify(ready.res, fw);
  return problems.length ? { ok: false, reason: `wrong first reply: ${problems.join('; ')}` } : { ok: true, ms, cpuMs };
}
