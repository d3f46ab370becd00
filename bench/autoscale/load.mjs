// The autoscale bench's parts under load (run.mjs starts the cluster and hands them `ctx`): a load
// step, a 2-minute ramp up and down to zero (charted), and what idle revisions cost warm vs at zero.
import { writeFileSync } from 'node:fs';
import { cpuMs, descendants, rssMiB } from '../lib/process.mjs';
import { median, percentile } from '../lib/stats.mjs';
import { lineChart } from './svg.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ms = (n) => (Number.isFinite(n) ? `${Math.round(n)} ms` : '-');

/**
 * Closed-loop clients on `host`: `set(n)` keeps n of them sending (each sends its next request when
 * its previous answered); statuses and latencies of every request answered are kept.
 */
function clients(ctx, host, path) {
  let wanted = 0;
  let running = true;
  const loops = new Map();
  const answers = [];
  const loop = async (index) => {
    while (running && index < wanted) {
      const at = performance.now();
      const [status, t] = await ctx.send(host, path);
      answers.push({ at, status, t });
    }
    loops.delete(index);
  };
  return {
    answers,
    set(n) {
      wanted = n;
      for (let i = 0; i < n; i++) if (!loops.has(i)) loops.set(i, loop(i));
    },
    async stop() {
      running = false;
      await Promise.all(loops.values());
    },
  };
}

/** The revision's Deployment sampled every `everyMs`: asked (spec.replicas) and ready, with `extra()` beside. */
function sampler(ctx, service, everyMs, extra = () => ({})) {
  const samples = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const d = await ctx.deployment(service);
      samples.push({ at: performance.now(), want: d?.spec?.replicas ?? 0, ready: d?.status?.readyReplicas ?? 0, ...extra() });
      await sleep(everyMs);
    }
  })();
  return { samples, stop: async () => { running = false; await done; } };
}

/** The autoscaler's decisions for `revision` (its log lines "autoscaler scaled" on serve's stderr), each with when it was read. */
function decisions(ctx, revision) {
  const seen = [];
  let rest = '';
  const onData = (chunk) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop();
    for (const line of lines) {
      if (!line.includes('"autoscaler scaled"') || !line.includes(`"${revision}"`)) continue;
      try {
        const e = JSON.parse(line);
        if (e.revision === revision) seen.push({ at: performance.now(), from: e.from, to: e.to, panic: e.panic, reason: e.reason });
      } catch { /* not ours */ }
    }
  };
  ctx.server.stderr.on('data', onData);
  return { seen, stop: () => ctx.server.stderr.off('data', onData) };
}

/**
 * A load step: a revision with containerConcurrency 5 (min-scale 1, max-scale 10, `annotations`
 * beside), 1 client for 5 s, then 50 for `seconds`, each request holding 100 ms.
 */
export async function loadStep(ctx, { name, seconds, annotations = {}, label }) {
  await ctx.kube.create(ctx.KService, ctx.ksvc(name, { 'min-scale': '1', 'max-scale': '10', ...annotations }, 5));
  await ctx.readyKsvc(name);
  const pool = clients(ctx, `${name}.default.localhost`, '/?ms=100');
  const watch = sampler(ctx, name, 50);
  const log = decisions(ctx, `default/${name}-00001`);
  pool.set(1);
  await sleep(5000);
  const stepAt = performance.now();
  pool.set(50);
  await sleep(seconds * 1000);
  await pool.stop();
  await watch.stop();
  log.stop();
  await ctx.kube.delete(ctx.KService, name, { namespace: 'default' });
  const during = watch.samples.filter((s) => s.at >= stepAt);
  const peak = Math.max(...during.map((s) => s.want));
  const wantAt = during.find((s) => s.want === peak)?.at;
  const readyAt = during.find((s) => s.ready >= peak)?.at;
  const after = pool.answers.filter((a) => a.at >= stepAt);
  const ok = after.filter((a) => a.status === 200).map((a) => a.t);
  const panicAt = log.seen.find((d) => d.at >= stepAt && d.panic)?.at;
  const series = [];
  for (let t = 0; t <= seconds * 1000; t += 1000) {
    const s = [...during].reverse().find((x) => x.at - stepAt <= t);
    if (s) series.push(`${t / 1000}s ${s.want}/${s.ready}`);
  }
  return {
    row: `| ${label} | ${peak} | ${panicAt ? ms(panicAt - stepAt) : '-'} | ${wantAt ? ms(wantAt - stepAt) : '-'} | ${readyAt ? ms(readyAt - stepAt) : 'not reached'} | ${after.length} | ${after.length - ok.length} | ${ms(median(ok))} | ${ms(percentile(ok, 99))} |`,
    decisions: log.seen.filter((d) => d.at >= stepAt - 1000).map((d) => `${((d.at - stepAt) / 1000).toFixed(2)}s ${d.from}→${d.to}${d.panic ? ' (panic)' : ''}`).join(', '),
    series: series.join(', '),
  };
}
export const StepHeader = '| panic window | desired at peak | step → panic | step → asked for the peak | step → that many ready | requests | failed | p50 | p99 |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|';

/**
 * The ramp: a revision with containerConcurrency 5, min-scale 0, max-scale 10 and a `window`
 * stable window; clients 0 → `peak` over half of `seconds` and back to 0, then idle until it is at 0
 * pods. Replicas asked/ready and clients sampled every 250 ms, charted into `svgPath`.
 */
export async function ramp(ctx, { seconds, peak, window, svgPath }) {
  const name = 'ramp';
  await ctx.kube.create(ctx.KService, ctx.ksvc(name, { 'min-scale': '0', 'max-scale': '10', window }, 5));
  await ctx.readyKsvc(name);
  const pool = clients(ctx, `${name}.default.localhost`, '/?ms=100');
  let current = 0;
  const watch = sampler(ctx, name, 250, () => ({ clients: current }));
  const start = performance.now();
  const half = (seconds * 1000) / 2;
  for (;;) {
    const t = performance.now() - start;
    if (t >= 2 * half) break;
    current = Math.round(peak * (t < half ? t / half : 2 - t / half));
    pool.set(current);
    await sleep(250);
  }
  current = 0;
  pool.set(0);
  const endAt = performance.now();
  await pool.stop();
  await ctx.until('ramp at zero pods', async () => (await ctx.deployment(name))?.spec?.replicas === 0 && (await ctx.podsOf(name)) === 0, 180_000);
  const zeroAt = performance.now();
  await sleep(1000);
  await watch.stop();
  await ctx.kube.delete(ctx.KService, name, { namespace: 'default' });
  const secs = (at) => (at - start) / 1000;
  const points = (k) => watch.samples.filter((s) => s.at >= start).map((s) => [secs(s.at), s[k]]);
  writeFileSync(svgPath, lineChart({
    title: `Ramp 0 → ${peak} → 0 clients over ${seconds} s (containerConcurrency 5, window ${window}), then scale to zero`,
    x: 's from the start of the ramp', left: 'pods', right: 'clients',
    series: [
      { name: 'pods asked (Deployment)', color: '#1f77b4', points: points('want') },
      { name: 'pods ready', color: '#2ca02c', points: points('ready') },
      { name: 'clients (right axis)', color: '#999', points: points('clients'), axis: 'right', dashed: true, width: 1.5 },
    ],
  }));
  const ok = pool.answers.filter((a) => a.status === 200).map((a) => a.t);
  const most = Math.max(...watch.samples.map((s) => s.want));
  return {
    header: '| requests | failed | p50 | p99 | most pods asked | last request → 0 pods |\n|--:|--:|--:|--:|--:|--:|',
    row: `| ${pool.answers.length} | ${pool.answers.length - ok.length} | ${ms(median(ok))} | ${ms(percentile(ok, 99))} | ${most} | ${((zeroAt - endAt) / 1000).toFixed(1)} s |`,
  };
}

/** CPU (ms per s) and RSS (MiB) over `seconds`: serve's own process, and its function pods (processes running `marker`). */
async function usage(ctx, seconds, marker) {
  const pid = ctx.server.pid;
  const pods0 = descendants(pid, marker);
  const cpu0 = new Map(pods0.map((p) => [p.pid, cpuMs(p.pid)]));
  const serve0 = cpuMs(pid);
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const elapsed = (performance.now() - t0) / 1000;
  const pods = descendants(pid, marker).filter((p) => cpu0.has(p.pid));
  const podCpu = pods.reduce((n, p) => n + (cpuMs(p.pid) - cpu0.get(p.pid)), 0);
  return {
    pods: pods.length,
    podRss: pods.map((p) => p.kb / 1024),
    podCpu: podCpu / elapsed,
    serveCpu: (cpuMs(pid) - serve0) / elapsed,
    serveRss: rssMiB(pid),
  };
}

/**
 * What `count` idle revisions cost kept warm (one pod each) and at zero: config-autoscaler's
 * enable-scale-to-zero false holds them at one pod, true lets them go to zero; each state measured
 * over `seconds` with no traffic.
 */
export async function idleCost(ctx, { count, seconds, marker }) {
  const setScaleToZero = (on) => ctx.kube.patch(ctx.Resources.configMaps, 'config-autoscaler', { data: { 'enable-scale-to-zero': String(on) } }, { namespace: 'knative-serving', type: 'merge' });
  const names = Array.from({ length: count }, (_, i) => `idle-${i}`);
  const measure = await usage(ctx, seconds, marker);
  const none = { ...measure };
  await setScaleToZero(false);
  for (const n of names) await ctx.kube.create(ctx.KService, ctx.ksvc(n, { 'min-scale': '0', window: '6s' }));
  for (const n of names) await ctx.readyKsvc(n);
  await sleep(5000);
  const warm = await usage(ctx, seconds, marker);
  await setScaleToZero(true);
  for (const n of names) await ctx.until(`${n} at zero`, async () => (await ctx.deployment(n))?.spec?.replicas === 0 && (await ctx.podsOf(n)) === 0);
  await sleep(2000);
  const zero = await usage(ctx, seconds, marker);
  for (const n of names) await ctx.kube.delete(ctx.KService, n, { namespace: 'default' });
  const row = (what, u) => `| ${what} | ${u.pods} | ${u.pods ? median(u.podRss).toFixed(1) : '-'} | ${u.podRss.reduce((a, b) => a + b, 0).toFixed(0)} | ${u.podCpu.toFixed(1)} | ${u.serveRss.toFixed(0)} | ${u.serveCpu.toFixed(1)} |`;
  return [
    '| state | function pods | RSS per pod (median, MiB) | pods\' RSS (MiB) | pods\' CPU (ms/s) | serve\'s RSS (MiB) | serve\'s CPU (ms/s) |',
    '|---|--:|--:|--:|--:|--:|--:|',
    row('no revision', none),
    row(`${count} revisions warm (1 idle pod each)`, warm),
    row(`the same ${count} at zero`, zero),
  ].join('\n');
}
