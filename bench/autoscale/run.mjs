#!/usr/bin/env node
/**
 * Knative-style autoscaling on the local cluster (`cluster-api serve`, its node running function
 * pods as processes), through the gateway. Prints tables, never asserts.
 *
 *   npm run build && node bench/autoscale/run.mjs [--services 4] [--cycles 4] [--step-seconds 15] [--container-runtime process|oci]
 *
 * 1. Scale from zero → first answer: `--services` Knative Services with min-scale 0 and a 6 s
 *    window (config-autoscaler's grace 6 s), idle until the autoscaler took each to 0 pods; then one
 *    request each, in turn, timed at the client from send to the end of the answer (the revision
 *    at zero: the activator holds it, pokes the autoscaler, forwards once the new pod is ready),
 *    with when each step of the way shows in the API (watched); then 20 requests to the same, now
 *    warm, revision (gateway + pod: the floor). `--cycles` times.
 * 2. A load step on a revision with containerConcurrency 5 (min-scale 1, max-scale 10): 1 client
 *    looping for 5 s, then 50 for `--step-seconds`, each request holding 100 ms: time from the step to
 *    the autoscaler's first panic decision, to the Deployment asking for its peak and to that many
 *    ready pods, failed requests, latency percentiles during the step, and the replicas over time;
 *    with Knative's default panic window (6 s) and with `--short-panic-window` (the annotation
 *    `panic-window-percentage`).
 * 3. A ramp: clients 0 → `--ramp-peak` → 0 over `--ramp-seconds` on a revision with min-scale 0,
 *    then idle until it is at zero pods; failed requests, and replicas over time charted into
 *    bench/autoscale/ramp.svg (svg.mjs).
 * 4. Idle cost: `--idle-revisions` revisions kept warm (one idle pod each) and at zero: function
 *    pods' RSS and CPU, serve's own RSS and CPU.
 *
 * `--parts` picks among step, ramp, idle (all by default); `--dist` runs another build of cluster-api.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { KubeClient, Resources, resourceType } from '../../packages/kube-client/dist/index.js';
import { functionImage } from '../lib/function-image.mjs';
import { descendantsRssMiB, listeningLine, spawnUntil } from '../lib/process.mjs';
import { median, percentile } from '../lib/stats.mjs';
import { idleCost, loadStep, ramp, StepHeader } from './load.mjs';

const { values: args } = parseArgs({ options: { services: { type: 'string', default: '4' }, cycles: { type: 'string', default: '4' }, 'step-seconds': { type: 'string', default: '15' }, 'container-runtime': { type: 'string', default: 'process' }, parts: { type: 'string', default: 'step,ramp,idle' }, dist: { type: 'string', default: 'packages/cluster-api/dist' }, 'short-panic-window': { type: 'string', default: '2' }, 'ramp-seconds': { type: 'string', default: '120' }, 'ramp-peak': { type: 'string', default: '40' }, 'idle-revisions': { type: 'string', default: '8' }, 'idle-seconds': { type: 'string', default: '20' } } });
const repo = fileURLToPath(new URL('../../', import.meta.url));
const cli = join(repo, args.dist, 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'bench-autoscale-'));
const KService = resourceType('serving.knative.dev/v1', 'Service', 'services');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ms = (n) => `${Math.round(n)} ms`;

await functionImage(join(repo, 'bench/autoscale/fn'), join(dir, 'data', 'images'), 'scale:bench', dir, { runtime: 'bundle' });
const env = { ...process.env, CLUSTER_API_CLUSTER_CIDR: process.env.CLUSTER_API_CLUSTER_CIDR ?? `127.${64 + Math.floor(Math.random() * 64)}.0.0/16` };
const { child: server, log } = await spawnUntil(process.execPath, [cli, 'serve', '--port', '0', '--data-dir', join(dir, 'data'), '--storage', 'memory:', '--node-name', 'bench', '--container-runtime', args['container-runtime']], { ready: listeningLine, env });
const gateway = new URL(/"gateway":"(http:\/\/[^"]+)"/.exec(log)[1]);
const kube = KubeClient.fromKubeconfig({ kubeconfig: join(dir, 'data', 'kubeconfig.yaml') });

/** One request through the gateway with `host`; resolves to [status, ms]. */
const send = (host, path = '/') => new Promise((resolve) => {
  const t0 = performance.now();
  const req = request({ host: gateway.hostname, port: gateway.port, path, headers: { host }, agent: false }, (res) => {
    res.resume().on('end', () => resolve([res.statusCode, performance.now() - t0]));
  });
  req.on('error', () => resolve([0, performance.now() - t0])).end();
});

const ksvc = (name, annotations, containerConcurrency) => ({
  apiVersion: 'serving.knative.dev/v1', kind: 'Service', metadata: { name, namespace: 'default' },
  spec: { template: { metadata: { annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`autoscaling.knative.dev/${k}`, v])) }, spec: { ...(containerConcurrency ? { containerConcurrency } : {}), containers: [{ image: 'scale:bench' }] } } },
});
const deployment = (name) => kube.get(Resources.deployments, `${name}-00001-deployment`, { namespace: 'default' }).catch(() => undefined);
async function until(what, check, timeoutMs = 180_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(100);
  }
}
const Phases = ['Deployment asks 1', 'pod created', 'pod bound', 'pod running', 'answered', 'pod ready', 'in Endpoints'];

/** When each step of a revision's way up from zero shows in the API, in ms from `stop()`'s request start (the watches open first). */
function watchColdStart(service) {
  const abort = new AbortController();
  const marks = {};
  let t0 = performance.now();
  const mark = (k) => { marks[k] ??= performance.now(); };
  const follow = async (type, on) => {
    const listed = await kube.list(type, { namespace: 'default' });
    const events = kube.watch(type, { namespace: 'default', resourceVersion: listed.metadata.resourceVersion, signal: abort.signal });
    return { events, on };
  };
  const ours = (o) => o.metadata?.labels?.['serving.knative.dev/service'] === service;
  const started = Promise.all([
    follow(Resources.deployments, (o) => ours(o) && o.spec?.replicas > 0 && mark('Deployment asks 1')),
    follow(Resources.pods, (o) => {
      if (!ours(o)) return;
      mark('pod created');
      if (o.spec?.nodeName) mark('pod bound');
      if (o.status?.phase === 'Running') mark('pod running');
      if (o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) mark('pod ready');
    }),
    follow(Resources.endpoints, (o) => ours(o) && o.subsets?.some((x) => x.addresses?.length) && mark('in Endpoints')),
  ]).then((watches) => {
    for (const { events, on } of watches) (async () => { for await (const e of events) on(e.object); })().catch(() => undefined);
    t0 = performance.now();
  });
  return {
    started,
    /** Waits (at most `ms`) until step `k` shows. */
    async reached(k, ms = 5000) {
      for (const end = performance.now() + ms; marks[k] === undefined && performance.now() < end;) await sleep(10);
    },
    stop() {
      abort.abort();
      return Object.fromEntries(Object.entries(marks).map(([k, at]) => [k, at - t0]));
    },
  };
}

const readyKsvc = (name) => until(`${name} Ready`, async () => (await kube.get(KService, name, { namespace: 'default' }).catch(() => undefined))?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
const podsOf = async (name) => (await kube.list(Resources.pods, { namespace: 'default', labelSelector: `serving.knative.dev/service=${name}` })).items.filter((p) => !p.metadata.deletionTimestamp).length;

try {
  await until('the serving kinds', () => kube.list(KService, { namespace: 'default' }).then(() => true, () => false), 60_000);
  await kube.create(Resources.namespaces, { metadata: { name: 'knative-serving' } }).catch(() => undefined);
  await kube.create(Resources.configMaps, { metadata: { name: 'config-autoscaler', namespace: 'knative-serving' }, data: { 'scale-to-zero-grace-period': '6s' } });

  // ---- 1. scale from zero vs warm ----
  const names = Array.from({ length: Number(args.services) }, (_, i) => `cold-${i}`);
  for (const n of names) await kube.create(KService, ksvc(n, { 'min-scale': '0', window: '6s' }));
  for (const n of names) await readyKsvc(n);
  const cold = [];
  const warm = [];
  const phases = [];
  let failed = 0;
  for (let c = 0; c < Number(args.cycles); c++) {
    for (const n of names) await until(`${n} at zero`, async () => (await deployment(n))?.spec?.replicas === 0 && (await podsOf(n)) === 0);
    for (const n of names) {
      const timeline = watchColdStart(n);
      await timeline.started;
      const [status, t] = await send(`${n}.default.localhost`);
      // The activator may answer before the kubelet's Ready and the Endpoints show: they are watched on.
      await timeline.reached('in Endpoints');
      phases.push({ ...timeline.stop(), answered: t });
      if (status === 200) cold.push(t); else failed++;
      for (let i = 0; i < 20; i++) {
        const [s, w] = await send(`${n}.default.localhost`);
        if (s === 200) warm.push(w); else failed++;
      }
    }
  }
  console.log(`\n### 1. Scale from zero → first answer through the gateway (${cold.length} cold starts, ${warm.length} warm requests, ${args['container-runtime']} runtime, Node ${process.version})\n`);
  console.log('| revision | p50 | p99 | min | max |');
  console.log('|---|--:|--:|--:|--:|');
  console.log(`| at zero (activator holds, autoscaler poked, pod started, first answer) | ${ms(median(cold))} | ${ms(percentile(cold, 99))} | ${ms(Math.min(...cold))} | ${ms(Math.max(...cold))} |`);
  console.log(`| warm (gateway + pod) | ${ms(median(warm))} | ${ms(percentile(warm, 99))} | ${ms(Math.min(...warm))} | ${ms(Math.max(...warm))} |`);
  console.log(`\nfailed requests: ${failed}`);
  console.log(`cold starts, each (ms, in order): ${cold.map((x) => Math.round(x)).join(' ')}`);
  console.log('\nWhere a cold start goes (medians, ms from the request sent; each step as it shows in the API, watched; answered at the client):\n');
  console.log(`| ${Phases.join(' | ')} |`);
  console.log(`|${Phases.map(() => '--:').join('|')}|`);
  console.log(`| ${Phases.map((k) => { const xs = phases.map((p) => p[k]).filter((x) => x !== undefined); return xs.length ? Math.round(median(xs)) : '-'; }).join(' | ')} |`);
  // Every revision warm now (one pod each, idle): what keeping them so costs, against 0 at zero.
  await sleep(2000);
  // Process mode: the pods are node processes under serve running the bundled runtime.
  const rss = args['container-runtime'] === 'process' ? descendantsRssMiB(server.pid, 'func-runtime.mjs') : [];
  if (args['container-runtime'] !== 'process') console.log('\nidle RSS: measured in process mode only (oci pods run under conmon, outside serve\'s process tree)');
  else console.log(`\nidle function pods: ${rss.length}, RSS each ${rss.map((m) => m.toFixed(1)).join(', ')} MiB (median ${median(rss).toFixed(1)} MiB): ${names.length} revisions kept warm cost ${rss.reduce((a, b) => a + b, 0).toFixed(0)} MiB, at zero 0`);
  const metrics = await (await fetch(new URL('/metrics', gateway))).text();
  const counted = [...metrics.matchAll(/^activator_cold_start_seconds_count\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
  console.log(`the gateway counted ${counted} cold starts (activator_cold_start_seconds)`);
  for (const n of names) await kube.delete(KService, n, { namespace: 'default' });

  // ---- 2–4. under load, and idle ----
  const parts = new Set(args.parts.split(','));
  const ctx = { kube, server, send, ksvc, deployment, until, readyKsvc, podsOf, KService, Resources };
  if (parts.has('step')) {
    // Knative's panic window is 10 % of the stable window (60 s: 6 s); the short one its percentage for `--short-panic-window` seconds.
    const shortPct = String((Number(args['short-panic-window']) / 60) * 100);
    const runs = [
      await loadStep(ctx, { name: 'step', seconds: Number(args['step-seconds']), label: '6 s (Knative\'s default)' }),
      await loadStep(ctx, { name: 'step-short', seconds: Number(args['step-seconds']), label: `${args['short-panic-window']} s (panic-window-percentage ${Number(shortPct).toFixed(2)})`, annotations: { 'panic-window-percentage': shortPct } }),
    ];
    console.log(`\n### 2. Load step 1 → 50 clients, containerConcurrency 5, each request 100 ms (${args['step-seconds']} s; load average ${loadavg()[0].toFixed(1)})\n`);
    console.log(StepHeader);
    for (const r of runs) console.log(r.row);
    for (const r of runs) console.log(`\nreplicas asked/ready each second after the step: ${r.series}\nthe autoscaler's decisions (s from the step): ${r.decisions}`);
  }
  if (parts.has('ramp')) {
    const r = await ramp(ctx, { seconds: Number(args['ramp-seconds']), peak: Number(args['ramp-peak']), window: '10s', svgPath: join(repo, 'bench/autoscale/ramp.svg') });
    console.log(`\n### 3. Ramp 0 → ${args['ramp-peak']} → 0 clients over ${args['ramp-seconds']} s, then scale to zero (chart: bench/autoscale/ramp.svg)\n`);
    console.log(r.header);
    console.log(r.row);
  }
  if (parts.has('idle')) {
    const table = await idleCost(ctx, { count: Number(args['idle-revisions']), seconds: Number(args['idle-seconds']), marker: args['container-runtime'] === 'process' ? 'func-runtime.mjs' : 'func-runtime' });
    console.log(`\n### 4. Idle revisions: warm vs at zero (${args['idle-seconds']} s each, load average ${loadavg()[0].toFixed(1)})\n`);
    console.log(table);
  }
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
