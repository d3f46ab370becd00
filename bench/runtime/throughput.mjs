// Throughput of one scenario: every framework's server up at once (idle ones cost nothing), one
// warm-up each, then rounds interleaved A B C D, D C B A, … so that drift on a shared machine
// spreads over all frameworks instead of landing on one. With `processes` > 1 the rounds are
// spread over that many fresh sets of servers, each started, warmed up and checked again: two
// processes of one build can differ by several per cent (code and heap placement, JIT decisions),
// and one process per framework would carry its luck into the whole result.
import { occupyServerCore } from './contention.mjs';
import { runLoad } from './load.mjs';
import { SLICE_MS, measureInSlices } from './slices.mjs';
import { cpuSeconds, fileSize, rssKiB, stop } from './procs.mjs';
import { startServer, verify } from './servers.mjs';
import { median } from '../lib/stats.mjs';

/** How many of `rounds` the process set `i` of `processes` measures: as even as can be, the first ones one more. */
export function roundsOf(i, rounds, processes) {
  return Math.floor(rounds / processes) + (i < rounds % processes ? 1 : 0);
}

/**
 * @typedef {{ok: boolean, reason?: string, rps?: number, p99Ms?: number, reqPerCpuS?: number,
 *   busy?: number, rounds?: object[], rssKiB?: number, non2xx?: number, errors?: number,
 *   timeouts?: number, logBytes?: number}} ScenarioResult
 * @returns {Promise<Record<string, ScenarioResult>>}
 */
export async function runScenario(scenario, fws, opts, ctx) {
  const results = {};
  const measured = new Map(fws.map((fw) => [fw.id, { rounds: [], slices: [], rss: undefined, logBytes: 0 }]));
  const processes = Math.min(opts.processes ?? 1, opts.rounds);
  let round = 0;
  for (let i = 0; i < processes; i++) {
    const count = roundsOf(i, opts.rounds, processes);
    await runProcessSet(scenario, fws.filter((fw) => !results[fw.id]), opts, ctx, { set: i, first: round + 1, count }, results, measured);
    round += count;
  }
  for (const fw of fws) if (!results[fw.id]) results[fw.id] = summary(measured.get(fw.id));
  return results;
}

/**
 * One set of servers: started, warmed up, `count` interleaved rounds, CPU per request in slices
 * (slices.mjs), the reply checked again, stopped.
 */
async function runProcessSet(scenario, fws, opts, ctx, { set, first, count }, results, measured) {
  const up = [];
  for (const fw of fws) {
    const s = await startServer(fw, scenario, ctx.logDir);
    if (!s.ok) {
      results[fw.id] = { ok: false, reason: s.reason };
      ctx.say(`  ${fw.id}: ${s.reason}`);
      continue;
    }
    up.push({ fw, ...s, rounds: measured.get(fw.id).rounds });
  }
  const release = scenario.contended && up.length > 0 ? await occupyServerCore() : undefined;
  try {
    for (const s of up) await warmUp(s, scenario, opts, ctx, results, measured.get(s.fw.id));
    const running = up.filter((s) => !results[s.fw.id]);
    for (let round = first; round < first + count; round++) {
      // Every other round in reverse order (A B C, C B A, …): a framework is not always measured
      // right after the same one, nor always first after a warm-up.
      const order = round % 2 === 0 ? [...running].reverse() : running;
      for (const s of order) await measureRound(s, scenario, opts, ctx, round, results);
    }
    if (opts.cpuSeconds > 0 && opts.loader === 'wrk') await measureCpu(running.filter((s) => !results[s.fw.id]), scenario, opts, ctx, set, results, measured);
    for (const s of running) await check(s, scenario, results);
  } finally {
    await release?.();
    await Promise.all(up.map((s) => stop(s.child)));
  }
  for (const s of up) measured.get(s.fw.id).logBytes = fileSize(s.logFile);
}

async function warmUp(s, scenario, opts, ctx, results, measured) {
  try {
    await runLoad(opts.loader, loadArgs(s, scenario, opts, ctx, opts.warmup));
    // RSS after warm-up, of the first process set.
    measured.rss ??= rssKiB(s.child.pid);
  } catch (err) {
    results[s.fw.id] = { ok: false, reason: `warm-up failed: ${err.message}` };
  }
}

async function measureRound(s, scenario, opts, ctx, round, results) {
  if (results[s.fw.id]) return;
  try {
    // Discarded: the round starts from this server's own steady load, whoever ran before it.
    if (opts.prime > 0) await runLoad(opts.loader, loadArgs(s, scenario, opts, ctx, opts.prime));
    const cpu0 = cpuSeconds(s.child.pid);
    const r = await runLoad(opts.loader, loadArgs(s, scenario, opts, ctx, opts.duration));
    const cpu = cpuSeconds(s.child.pid) - cpu0;
    // Requests per CPU-second of the server: on a shared machine other processes take wall time
    // from the server's core but change the CPU cost of one request much less: the steadier ratio.
    Object.assign(r, { cpuS: cpu, reqPerCpuS: cpu > 0 ? r.requests / cpu : NaN, busy: cpu / opts.duration });
    s.rounds.push(r);
    ctx.say(
      `  round ${round} ${s.fw.id.padEnd(20)} ${fmt(r.rps)} req/s  p99 ${r.p99Ms.toFixed(2).padStart(7)} ms  ` +
        `${fmt(r.reqPerCpuS)} req/CPU-s  server busy ${Math.round(r.busy * 100)} %${r.non2xx ? `  non-2xx ${r.non2xx}` : ''}`,
    );
  } catch (err) {
    results[s.fw.id] = { ok: false, reason: `load failed in round ${round}: ${err.message}` };
  }
}

async function measureCpu(servers, scenario, opts, ctx, set, results, measured) {
  if (servers.length === 0) return;
  const cpu = await measureInSlices(servers, scenario, { seconds: opts.cpuSeconds, connections: opts.connections }, ctx);
  const line = [];
  for (const s of servers) {
    const r = cpu.get(s.fw.id);
    if (r.error) {
      results[s.fw.id] = { ok: false, reason: `CPU slices failed: ${r.error}` };
      continue;
    }
    measured.get(s.fw.id).slices.push({ set, us: r.us, requests: r.requests });
    line.push(`${s.fw.id} ${r.us.toFixed(2)} µs`);
  }
  ctx.say(`  CPU per request in ${SLICE_MS} ms slices, process set ${set + 1}: ${line.join(', ')}`);
}

/** Checks the reply once more: a server that breaks under load must not keep its numbers. */
async function check(s, scenario, results) {
  if (results[s.fw.id]) return;
  const problems = s.child.exitInfo ? ['server exited during the run'] : await verify(s.fw, scenario, s.port);
  if (problems.length > 0) results[s.fw.id] = { ok: false, reason: `wrong reply after load: ${problems.join('; ')}` };
}

/** Medians over every round of every process set; CPU per request from the slices where they ran. */
function summary({ rounds, slices, rss, logBytes }) {
  return {
    ok: true,
    cpuUs: slices.length > 0 ? median(slices.map((x) => x.us)) : undefined,
    slices,
    rps: median(rounds.map((r) => r.rps)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    reqPerCpuS: median(rounds.map((r) => r.reqPerCpuS)),
    busy: median(rounds.map((r) => r.busy)),
    rssKiB: rss,
    non2xx: rounds.reduce((n, r) => n + r.non2xx, 0),
    errors: rounds.reduce((n, r) => n + r.errors, 0),
    timeouts: rounds.reduce((n, r) => n + r.timeouts, 0),
    rounds,
    logBytes,
  };
}

function loadArgs(s, scenario, opts, ctx, seconds) {
  return { port: s.port, scenario, bodyFile: ctx.bodyFiles[scenario.id], connections: opts.connections, seconds };
}

function fmt(n) {
  return Math.round(n).toLocaleString('en-US').padStart(7);
}
