#!/usr/bin/env node
/**
 * The serving gateway's cost, on the local cluster (`cluster-api serve`, its node running function
 * pods as processes). Prints tables, never asserts.
 *
 *   npm run build && node bench/gateway/run.mjs [--rounds 6] [--seconds 3] [--connections 8] [--readies 7] [--profile DIR] [--baseline-cli PATH]
 *
 * 1. Overhead per request: one Knative Service (min-scale 1) with `bench/autoscale/fn`; keep-alive
 *    clients (`--connections` at once) call its pod directly (its Endpoints' address) and through a
 *    gateway of its own process (`cluster-api gateway`, the Route's Host), in interleaved rounds
 *    of `--seconds` each (the order turned each round): requests/s, p50/p99, and the CPU time of
 *    the pod and of the proxy process per request (/proc). The floor beside it: the least a Node.js
 *    HTTP/1.1 proxy does (node:http's server, a keep-alive Agent, `pipe` both ways; a process of its
 *    own) to the same pod; and the byte pipe — the least any Node.js hop costs (a net server, `data`
 *    events and `write` both ways, no HTTP at all). `--profile DIR`: the gateway runs under
 *    `--cpu-prof` and writes its profile there on exit. `--baseline-cli PATH`: a second gateway,
 *    from another build's `cli.js` (an earlier commit's), measured in the same rounds.
 * 2. ksvc apply → Ready → first answer: `--readies` Knative Services created one after another,
 *    each timed from the create until its Ready condition (polled) and until the first 200 through
 *    serve's gateway with its Host.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { KubeClient, Resources, resourceType } from '../../packages/kube-client/dist/index.js';
import { functionImage } from '../lib/function-image.mjs';
import { cpuMs, listeningLine, spawnUntil } from '../lib/process.mjs';
import { median, percentile } from '../lib/stats.mjs';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '6' }, seconds: { type: 'string', default: '3' }, connections: { type: 'string', default: '8' }, readies: { type: 'string', default: '7' }, profile: { type: 'string' }, 'baseline-cli': { type: 'string' } } });
const repo = fileURLToPath(new URL('../../', import.meta.url));
const cli = join(repo, 'packages/cluster-api/dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'bench-gateway-'));
const KService = resourceType('serving.knative.dev/v1', 'Service', 'services');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const fixed = (n, d = 2) => n.toFixed(d);
const children = new Set();
const cleanup = () => {
  for (const c of children) c.kill('SIGTERM');
};
process.on('exit', cleanup);
process.on('SIGINT', () => process.exit(130));

await functionImage(join(repo, 'bench/autoscale/fn'), join(dir, 'data', 'images'), 'hello:bench', dir, { runtime: 'bundle' });
const env = { ...process.env, CLUSTER_API_CLUSTER_CIDR: process.env.CLUSTER_API_CLUSTER_CIDR ?? `127.${64 + Math.floor(Math.random() * 64)}.0.0/16` };
// Pods as processes (what the tests run; `bench/oci` measures the sandboxed runtime).
const serve = await spawnUntil(process.execPath, [cli, 'serve', '--port', '0', '--data-dir', join(dir, 'data'), '--storage', 'memory:', '--node-name', 'bench', '--container-runtime', 'process'], { ready: listeningLine, env, children });
const { log } = serve;
const serveGateway = new URL(/"gateway":"(http:\/\/[^"]+)"/.exec(log)[1]);
const kubeconfig = join(dir, 'data', 'kubeconfig.yaml');
const kube = KubeClient.fromKubeconfig({ kubeconfig });
const profile = args.profile ? ['--cpu-prof', '--cpu-prof-dir', args.profile] : [];
const gw = await spawnUntil(process.execPath, [...profile, cli, 'gateway', '--kubeconfig', kubeconfig, '--port', '0'], { ready: /"msg":"listening","gateway":"(http:\/\/[^"]+)"/, children });
const gateway = new URL(gw.match[1]);
/** The floor: a proxy that only forwards, to the pod named by its argument. */
const floorProxy = `const http = require('node:http');
const [ip, port] = process.argv[1].split(':');
const agent = new http.Agent({ keepAlive: true });
const s = http.createServer((req, res) => {
  const up = http.request({ host: ip, port, method: req.method, path: req.url, headers: req.headers, agent }, (r) => { res.writeHead(r.statusCode, r.headers); r.pipe(res); });
  up.on('error', () => res.destroy());
  req.pipe(up);
}).listen(0, '127.0.0.1', () => console.error('"floor":"http://127.0.0.1:' + s.address().port + '"'));`;
/** The byte pipe: no HTTP at all, each connection piped to one of its own to the pod (the least a Node.js hop costs). */
const pipeProxy = `const net = require('node:net');
const [host, port] = process.argv[1].split(':');
const s = net.createServer({ noDelay: true }, (c) => {
  const u = net.connect({ port: Number(port), host, noDelay: true });
  c.on('data', (d) => u.write(d)); u.on('data', (d) => c.write(d));
  c.on('error', () => u.destroy()); u.on('error', () => c.destroy());
  c.on('end', () => u.end()); u.on('end', () => c.end());
}).listen(0, '127.0.0.1', () => console.error('"pipe":"http://127.0.0.1:' + s.address().port + '"'));`;

async function until(what, check, timeoutMs = 180_000, everyMs = 100) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}
const ksvc = (name) => ({
  apiVersion: 'serving.knative.dev/v1', kind: 'Service', metadata: { name, namespace: 'default' },
  spec: { template: { metadata: { annotations: { 'autoscaling.knative.dev/min-scale': '1' } }, spec: { containers: [{ image: 'hello:bench' }] } } },
});
const isReady = (o) => o?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

/** One GET to `url` with `host`; resolves to its status (0: no answer). */
const get = (url, host, agent = false) => new Promise((resolve) => {
  request({ host: url.hostname, port: url.port, path: '/', headers: { host }, agent }, (res) => res.resume().on('end', () => resolve(res.statusCode)))
    .on('error', () => resolve(0)).end();
});

/** `connections` clients looping on keep-alive connections for `ms`: latencies (ms), requests, failures. */
async function load(url, host, ms) {
  const connections = Number(args.connections);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const latencies = [];
  let failed = 0;
  const end = performance.now() + ms;
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const status = await get(url, host, agent);
      if (status === 200) latencies.push(performance.now() - t0);
      else failed++;
    }
  }));
  agent.destroy();
  return { latencies, failed };
}

/** The pid of the pod process of `revision` (its environment names it), from /proc. */
function podPid(revision) {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`K_REVISION=${revision}`)) return Number(entry);
    } catch {
      /* gone, or not ours */
    }
  }
  return undefined;
}

try {
  await until('the serving kinds', () => kube.list(KService, { namespace: 'default' }).then(() => true, () => false), 60_000);

  // 1. Overhead per request.
  await kube.create(KService, ksvc('hello'));
  await until('hello Ready', async () => isReady(await kube.get(KService, 'hello', { namespace: 'default' }).catch(() => undefined)));
  const ep = await until('hello-00001 Endpoints', async () => (await kube.get(Resources.endpoints, 'hello-00001', { namespace: 'default' }).catch(() => undefined))?.subsets?.[0]);
  const pod = new URL(`http://${ep.addresses[0].ip}:${ep.ports[0].port}`);
  const pid = podPid('hello-00001');
  const host = 'hello.default.localhost';
  const floor = await spawnUntil(process.execPath, ['-e', floorProxy, `${pod.hostname}:${pod.port}`], { ready: /"floor":"(http:\/\/[^"]+)"/, children });
  const floorUrl = new URL(floor.match[1]);
  const pipe = await spawnUntil(process.execPath, ['-e', pipeProxy, `${pod.hostname}:${pod.port}`], { ready: /"pipe":"(http:\/\/[^"]+)"/, children });
  const pipeUrl = new URL(pipe.match[1]);
  const baseline = args['baseline-cli'] && await spawnUntil(process.execPath, [args['baseline-cli'], 'gateway', '--kubeconfig', kubeconfig, '--port', '0'], { ready: /"msg":"listening","gateway":"(http:\/\/[^"]+)"/, children });
  const baselineUrl = baseline && new URL(baseline.match[1]);
  if (baselineUrl) await until('the baseline gateway routing hello', async () => (await get(baselineUrl, host)) === 200, 30_000);
  await until('the gateway routing hello', async () => (await get(gateway, host)) === 200, 30_000);
  const ms = Number(args.seconds) * 1000;
  // Warm-up, both ways.
  await load(pod, host, 1000);
  await load(gateway, host, 1000);
  await load(floorUrl, host, 1000);
  await load(pipeUrl, host, 1000);
  if (baselineUrl) await load(baselineUrl, host, 1000);
  const modes = {
    direct: { url: pod, rows: [] }, gateway: { url: gateway, rows: [], pid: gw.child.pid },
    ...(baselineUrl && { baseline: { url: baselineUrl, rows: [], pid: baseline.child.pid } }),
    floor: { url: floorUrl, rows: [], pid: floor.child.pid }, pipe: { url: pipeUrl, rows: [], pid: pipe.child.pid },
  };
  // Each round in another order (turned by one each time).
  const names = Object.keys(modes);
  for (let r = 0; r < Number(args.rounds); r++) {
    for (const name of names.map((_, i) => names[(i + r) % names.length])) {
      const proxyPid = modes[name].pid;
      const before = { pod: cpuMs(pid), proxy: proxyPid ? cpuMs(proxyPid) : 0 };
      const t0 = performance.now();
      const { latencies, failed } = await load(modes[name].url, host, ms);
      const seconds = (performance.now() - t0) / 1000;
      const n = latencies.length;
      modes[name].rows.push({
        rps: n / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), failed, n,
        podUs: ((cpuMs(pid) - before.pod) * 1000) / n, proxyUs: proxyPid ? ((cpuMs(proxyPid) - before.proxy) * 1000) / n : 0,
      });
    }
  }
  const summary = (rows) => ({
    rps: median(rows.map((x) => x.rps)), p50: median(rows.map((x) => x.p50)), p99: median(rows.map((x) => x.p99)),
    podUs: median(rows.map((x) => x.podUs)), proxyUs: median(rows.map((x) => x.proxyUs)),
    n: rows.reduce((a, x) => a + x.n, 0), failed: rows.reduce((a, x) => a + x.failed, 0),
  });
  const direct = summary(modes.direct.rows);
  const through = summary(modes.gateway.rows);
  const bare = summary(modes.floor.rows);
  const piped = summary(modes.pipe.rows);
  console.log(`\n## Gateway overhead per request (${args.rounds} interleaved rounds of ${args.seconds} s each way, ${args.connections} keep-alive connections; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')})\n`);
  console.log('| path | req/s | p50 | p99 | pod CPU/req | proxy CPU/req | CPU/req in all | requests (failed) |');
  console.log('|---|--:|--:|--:|--:|--:|--:|--:|');
  const rows = [['direct to the pod', direct], ['through the gateway', through], ...(modes.baseline ? [['through the baseline gateway (--baseline-cli)', summary(modes.baseline.rows)]] : []), ['through the floor proxy (node:http)', bare], ['through the byte pipe (no HTTP)', piped]];
  for (const [name, s] of rows) {
    console.log(`| ${name} | ${Math.round(s.rps)} | ${fixed(s.p50)} ms | ${fixed(s.p99)} ms | ${Math.round(s.podUs)} µs | ${Math.round(s.proxyUs)} µs | ${Math.round(s.podUs + s.proxyUs)} µs | ${s.n} (${s.failed}) |`);
  }
  // Per round, each gateway round beside the direct round of the same round: the ratios' medians.
  const pairs = modes.gateway.rows.map((g, i) => [g, modes.direct.rows[i]]);
  const cpuRatio = median(pairs.map(([g, d]) => (g.podUs + g.proxyUs) / d.podUs));
  const floorRatio = median(modes.gateway.rows.map((g, i) => g.proxyUs / modes.floor.rows[i].proxyUs));
  const pipeRatio = median(modes.gateway.rows.map((g, i) => g.proxyUs / modes.pipe.rows[i].proxyUs));
  const pipeCpu = median(modes.pipe.rows.map((p, i) => (p.podUs + p.proxyUs) / modes.direct.rows[i].podUs));
  const baselineRatio = modes.baseline && median(modes.gateway.rows.map((g, i) => g.proxyUs / modes.baseline.rows[i].proxyUs));
  const p99Added = median(pairs.map(([g, d]) => g.p99 - d.p99));
  const p50Added = median(pairs.map(([g, d]) => g.p50 - d.p50));
  console.log(`\nThrough the gateway vs direct, medians of the per-round pairs: CPU per request ${fixed(cpuRatio)}× (target ≤ 1.3×), p50 +${fixed(p50Added)} ms, p99 +${fixed(p99Added)} ms (target ≤ +1 ms), req/s ${fixed(through.rps / direct.rps)}×; the gateway's own CPU per request ${fixed(floorRatio)}× the floor proxy's, ${fixed(pipeRatio)}× the byte pipe's${baselineRatio ? `, ${fixed(baselineRatio)}× the baseline gateway's` : ''}; the byte pipe's CPU per request in all ${fixed(pipeCpu)}× direct.`);

  // 2. ksvc apply → Ready → first answer.
  const readies = [];
  for (let i = 0; i < Number(args.readies); i++) {
    const name = `ready-${i}`;
    const t0 = performance.now();
    await kube.create(KService, ksvc(name));
    await until(`${name} Ready`, async () => isReady(await kube.get(KService, name, { namespace: 'default' }).catch(() => undefined)), 60_000, 5);
    const ready = performance.now() - t0;
    await until(`${name} answering`, async () => (await get(serveGateway, `${name}.default.localhost`)) === 200, 30_000, 5);
    readies.push({ ready, answer: performance.now() - t0 });
    await kube.delete(KService, name, { namespace: 'default' });
  }
  console.log(`\n## ksvc create → Ready → first answer through serve's gateway (${args.readies} services, one after another; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')})\n`);
  console.log('| | median | min | max |');
  console.log('|---|--:|--:|--:|');
  for (const k of ['ready', 'answer']) {
    const v = readies.map((x) => x[k]);
    console.log(`| create → ${k === 'ready' ? 'Ready' : 'first 200'} | ${Math.round(median(v))} ms | ${Math.round(Math.min(...v))} ms | ${Math.round(Math.max(...v))} ms |`);
  }
} finally {
  // The gateway first (its profile is written on exit), then serve, which stops its pods; then its data.
  for (const c of [gw.child, serve.child]) {
    if (c.exitCode !== null) continue;
    c.kill('SIGTERM');
    // serve stops its pods first; past 20 s it is killed.
    const late = setTimeout(() => c.kill('SIGKILL'), 20_000);
    await new Promise((r) => (c.exitCode !== null ? r() : c.once('exit', r)));
    clearTimeout(late);
  }
  rmSync(dir, { recursive: true, force: true });
}
