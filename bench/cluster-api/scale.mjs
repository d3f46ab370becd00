// Many pods on one node, with `serve`'s parts all on (embedded node agent with its default 110 pods,
// scheduler, controllers, broker): `--pods` Pods created by `--clients` parallel clients, most of them
// unschedulable; then the server's CPU while they wait, and the API's latency meanwhile. What
// kube-scheduler's queue promises: pods that fit nowhere cost nothing until the cluster changes.
//
//   node bench/cluster-api/scale.mjs [--pods 2000] [--clients 20] [--seconds 60]
//
// Phases: create (all pods posted), settle (until the server's CPU over 5 s falls under 10 % of a
// core, at most --settle-seconds: the scheduler's first try of every pod, its conditions and events,
// the agent starting 110), then quiet (--seconds, the measured window). A probe opens a new
// connection twice a second and sends a GET of one pod (every tenth time also a LIST of the first 500)
// throughout; its latencies are reported per phase. Also used by run.mjs for its "parts on" rows.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { cpuMs, rssMiB } from '../lib/process.mjs';
import { percentile } from '../lib/stats.mjs';
import { httpClient } from './http-client.mjs';
import { defaultCli, inParallel, podBody, startServer } from './server.mjs';

const pause = (ms) => new Promise((r) => setTimeout(r, ms));
const SettleWindowMs = 5000;
const SettledBelow = 0.1;
/** Run simulated by the agent (no registry in the name, so no pull), as `nginx` would be. */
const SimulatedImage = 'bench/app:1.0';

/**
 * Latency probe: every 500 ms a new connection sends a GET of one pod, and every tenth time a LIST of
 * the first 500 after it (a LIST of 500 pods costs the server ~20 ms); samples tagged with the phase.
 */
function probe(server, podName, phase) {
  const samples = [];
  let stopped = false;
  const done = (async () => {
    for (let tick = 0; !stopped; tick++) {
      const call = httpClient(server.url, { token: server.token, connections: 1 });
      const paths = [['get', `/api/v1/namespaces/scale/pods/${podName}`], ...(tick % 10 === 0 ? [['list', '/api/v1/namespaces/scale/pods?limit=500']] : [])];
      try {
        for (const [kind, path] of paths) {
          const t0 = performance.now();
          const r = await call('GET', path);
          samples.push({ phase: phase(), kind, ms: performance.now() - t0, ok: r.status === 200 });
        }
      } catch {
        samples.push({ phase: phase(), kind: 'error', ms: Number.NaN, ok: false });
      } finally {
        call.close();
      }
      await pause(500);
    }
  })();
  return { samples, stop: () => ((stopped = true), done) };
}

/** Pods bound and pods the scheduler marked Unschedulable, from a paged LIST (off every measured window). */
async function census(call) {
  let cont = '';
  const out = { bound: 0, unschedulable: 0, running: 0, total: 0 };
  do {
    const r = await call('GET', `/api/v1/namespaces/scale/pods?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
    const page = JSON.parse(r.body);
    for (const p of page.items) {
      out.total++;
      if (p.spec.nodeName) out.bound++;
      if (p.status?.phase === 'Running') out.running++;
      if (p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'False')) out.unschedulable++;
    }
    cont = page.metadata.continue ?? '';
  } while (cont);
  return out;
}

/**
 * One run: a fresh data directory and `serve` (SQLite, everything on), `pods` Pods, then the windows.
 * `say` reports progress; `children` lets a deadline kill the server.
 */
export async function measureScale({ cli = defaultCli, pods, clients, seconds, settleSeconds = 300, cpu, children, nodeFlags = [], say = () => undefined }) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-cluster-api-scale-'));
  const server = await startServer({ cli, storage: `sqlite:${join(dir, 'state.db')}`, dataDir: join(dir, 'data'), cpu, children, nodeFlags, flags: [] });
  const pid = server.child.pid;
  const call = httpClient(server.url, { token: server.token, connections: clients });
  let phase = 'create';
  const probes = [];
  try {
    const expect = (want, r, what) => { if (r.status !== want) throw new Error(`${what}: HTTP ${r.status} ${r.body.toString().slice(0, 200)}`); };
    for (let i = 0; ; i++) {
      const nodes = JSON.parse((await call('GET', '/api/v1/nodes')).body);
      if (nodes.items?.length) break;
      if (i > 600) throw new Error('the embedded node never registered');
      await pause(100);
    }
    expect(201, await call('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'scale' } })), 'namespace');
    const names = Array.from({ length: pods }, (_, i) => `pod-${String(i).padStart(6, '0')}`);
    expect(201, await call('POST', '/api/v1/namespaces/scale/pods', podBody(names[0], SimulatedImage)), 'create');
    probes.push(probe(server, names[0], () => phase));
    say(`scale: creating ${pods} pods with ${clients} clients`);
    const cpu0 = cpuMs(pid);
    const createMs = await inParallel(pods - 1, clients, async (i) => expect(201, await call('POST', '/api/v1/namespaces/scale/pods', podBody(names[i + 1], SimulatedImage)), 'create'));
    const createCpuMs = cpuMs(pid) - cpu0;

    phase = 'settle';
    say('scale: settling');
    const settleStart = performance.now();
    const settleCpu0 = cpuMs(pid);
    for (;;) {
      const c0 = cpuMs(pid);
      await pause(SettleWindowMs);
      const share = (cpuMs(pid) - c0) / SettleWindowMs;
      if (share < SettledBelow || performance.now() - settleStart > settleSeconds * 1000) break;
    }
    const settleMs = performance.now() - settleStart;
    const settleCpuMs = cpuMs(pid) - settleCpu0;

    phase = 'quiet';
    say(`scale: measuring ${seconds} s`);
    const quietCpu0 = cpuMs(pid);
    const quietStart = performance.now();
    await pause(seconds * 1000);
    const quietMs = performance.now() - quietStart;
    const quietCpuMs = cpuMs(pid) - quietCpu0;
    phase = 'after';
    await probes[0].stop();
    const rss = rssMiB(pid);
    // The creating clients' connections sat idle past the server's keep-alive timeout: a new one.
    const fresh = httpClient(server.url, { token: server.token, connections: 1 });
    const counts = await census(fresh).finally(() => fresh.close());

    const samples = probes[0].samples;
    const latency = (ph, kind) => {
      const ms = samples.filter((s) => s.phase === ph && s.kind === kind && s.ok).map((s) => s.ms);
      return { n: ms.length, p50: percentile(ms, 50), p99: percentile(ms, 99), max: percentile(ms, 100) };
    };
    const failed = samples.filter((s) => !s.ok).length;
    return {
      pods, clients, seconds,
      createsPerSec: ((pods - 1) / createMs) * 1000, createCpuMs,
      settleMs, settleCpuShare: settleCpuMs / settleMs,
      quietCpuShare: quietCpuMs / quietMs,
      rssMiB: rss, counts, probeFailures: failed,
      latency: Object.fromEntries(['create', 'settle', 'quiet'].map((ph) => [ph, { get: latency(ph, 'get'), list: latency(ph, 'list') }])),
    };
  } finally {
    for (const p of probes) await p.stop();
    call.close();
    server.child.kill('SIGTERM');
    await new Promise((r) => (server.child.exitCode !== null ? r() : server.child.once('exit', r)));
    rmSync(dir, { recursive: true, force: true });
  }
}

const pctOf = (share) => `${(share * 100).toFixed(1)} %`;
const ms = (v) => (Number.isFinite(v) ? `${v.toFixed(v < 10 ? 1 : 0)} ms` : '–');

/** The markdown rows of one or more runs. */
export function renderScale(runs) {
  const lines = [
    '| pods (clients) | creates/s | settle | CPU while settling | **CPU over the next minute** | GET p50 / p99 (quiet) | LIST 500 p50 / p99 (quiet) | GET p50 / p99 (during creates) | bound / Unschedulable | RSS |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of runs) {
    const q = r.latency.quiet;
    const c = r.latency.create;
    lines.push(`| ${r.pods.toLocaleString('en-US')} (${r.clients}) | ${Math.round(r.createsPerSec).toLocaleString('en-US')}/s | ${(r.settleMs / 1000).toFixed(0)} s | ${pctOf(r.settleCpuShare)} | **${pctOf(r.quietCpuShare)}** of a core (${r.seconds} s) | ${ms(q.get.p50)} / ${ms(q.get.p99)} | ${ms(q.list.p50)} / ${ms(q.list.p99)} | ${ms(c.get.p50)} / ${ms(c.get.p99)} | ${r.counts.bound} / ${r.counts.unschedulable} | ${r.rssMiB.toFixed(0)} MiB |`);
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values: opts } = parseArgs({
    options: {
      pods: { type: 'string', default: '2000' },
      clients: { type: 'string', default: '20' },
      seconds: { type: 'string', default: '60' },
      'settle-seconds': { type: 'string', default: '300' },
      cli: { type: 'string', default: defaultCli },
      // A directory for the server's --cpu-prof profile (written when it stops).
      'server-prof': { type: 'string' },
    },
  });
  const run = await measureScale({
    cli: opts.cli, pods: Number(opts.pods), clients: Number(opts.clients), seconds: Number(opts.seconds),
    settleSeconds: Number(opts['settle-seconds']),
    nodeFlags: opts['server-prof'] ? ['--cpu-prof', '--cpu-prof-dir', opts['server-prof']] : [], say: (m) => process.stderr.write(`${m}\n`),
  });
  process.stdout.write(`${renderScale([run])}\n\n${JSON.stringify(run)}\n`);
}
