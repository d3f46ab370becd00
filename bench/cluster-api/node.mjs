/**
 * Pods that run: `cluster-api serve` (its embedded scheduler and node agent) on SQLite, a function
 * image (examples/hello built by func-runtime, packaged by @func/oci) in its image store. Measures:
 *
 * 1. one pod at a time, created → Running and Ready, median of --rounds, interleaved: a function pod
 *    Ready as the kubelet counts it (no probe: running), one with a readiness probe on the runtime's
 *    /health/readiness (period 1 s: Ready = serving), and a simulated nginx pod (kwok's floor);
 *    plus created → first HTTP answer from the function;
 * 2. --burst function pods created at once → all Ready (with the readiness probe), then the disk the
 *    node's unpacked image and the containers' roots take, the resident
 *    memory of each idle function process (VmRSS, from /proc), and the latency of listing their
 *    PodMetrics (metrics.k8s.io, once the built-in metrics API has two scrapes of them: up to 30 s);
 * 3. --simulated nginx pods created at once → all Running and Ready.
 *
 *   npm run build && node bench/cluster-api/node.mjs [--rounds 15] [--burst 100] [--simulated 1000] [--container-runtime process|oci]
 *
 * Prints a table; asserts nothing. Targets (issue 21): function pod ≤ 500 ms median, 100 pods ≤ 30 s,
 * 1,000 simulated ≤ 10 s.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { KubeClient, Resources, resourceType } from '../../packages/kube-client/dist/index.js';
import { nodeKey } from '../../packages/cluster-api/dist/node/runtime/oci/runtime.js';
import { functionImage } from '../lib/function-image.mjs';
import { listeningLine, spawnUntil } from '../lib/process.mjs';
import { median } from '../lib/stats.mjs';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '15' }, burst: { type: 'string', default: '100' }, simulated: { type: 'string', default: '1000' }, 'container-runtime': { type: 'string', default: 'process' } } });
const repo = fileURLToPath(new URL('../../', import.meta.url));
const cli = join(repo, 'packages/cluster-api/dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'bench-node-'));
const oci = args['container-runtime'] === 'oci';
/** The oci node's cgroups are /func-<key>/… (its data dir is serve's <data-dir>/agent). */
const ociKey = nodeKey(join(dir, 'data', 'agent'));
const ms = (n) => `${Math.round(n)} ms`;

const image = () => functionImage(join(repo, 'examples/hello'), join(dir, 'data', 'images'), 'hello:bench', dir);

async function serve() {
  const argv = [cli, 'serve', '--port', '0', '--data-dir', join(dir, 'data'), '--node-name', 'bench', '--max-pods', '2000', '--container-runtime', args['container-runtime']];
  return (await spawnUntil(process.execPath, argv, { ready: listeningLine })).child;
}

const ready = (p) => p.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

/** Resolves when every named pod is Ready, watching from before they are created. */
async function allReady(kube, names, create) {
  const want = new Set(names);
  const abort = new AbortController();
  const listed = await kube.list(Resources.pods, { namespace: 'default' });
  const watch = kube.watch(Resources.pods, { namespace: 'default', resourceVersion: listed.metadata.resourceVersion, signal: abort.signal });
  const started = performance.now();
  const creating = create();
  for await (const e of watch) {
    if (ready(e.object) && want.delete(e.object.metadata.name) && want.size === 0) break;
  }
  abort.abort();
  await creating;
  return performance.now() - started;
}

const fnPod = (name, probe) => ({
  metadata: { name, labels: { bench: 'node' } },
  spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'fn', image: 'hello:bench', ...(probe ? { readinessProbe: { httpGet: { path: '/health/readiness', port: 8080 }, periodSeconds: 1 } } : {}) }] },
});
const nginxPod = (name) => ({ metadata: { name, labels: { bench: 'node' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } });

async function clear(kube) {
  await kube.raw({ method: 'DELETE', path: '/api/v1/namespaces/default/pods?labelSelector=bench%3Dnode', body: { gracePeriodSeconds: 0 } });
  for (let i = 0; i < 600; i++) {
    if ((await kube.list(Resources.pods, { namespace: 'default', labelSelector: 'bench=node' })).items.length === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Created → the function's first HTTP answer. */
async function firstAnswer(kube, name) {
  const started = performance.now();
  await kube.create(Resources.pods, fnPod(name, false));
  for (;;) {
    const p = await kube.get(Resources.pods, name);
    const ip = p.status?.podIP;
    if (ip && (await fetch(`http://${ip}:8080/`).then((r) => r.ok, () => false))) return performance.now() - started;
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** VmRSS (KiB) of each function process under the server (process mode: its children; oci: in its containers' cgroups). */
function functionRss(serverPid) {
  const out = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const ours = Number(/PPid:\s+(\d+)/.exec(status)?.[1]) === serverPid || (oci && readFileSync(`/proc/${pid}/cgroup`, 'utf8').includes(`/func-${ociKey}/`));
      if (ours && cmd.includes('/func/runtime/')) out.push(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]));
    } catch {
      /* gone */
    }
  }
  return out;
}

const server = await (async () => {
  await image();
  return serve();
})();
try {
  const kube = KubeClient.fromKubeconfig({ kubeconfig: join(dir, 'data', 'kubeconfig.yaml') });
  // Warm-up: the first function pod unpacks the image (once per digest), not counted.
  await allReady(kube, ['warm'], () => kube.create(Resources.pods, fnPod('warm', true)));
  await clear(kube);

  const rounds = Number(args.rounds);
  const times = { fn: [], probed: [], nginx: [], answer: [] };
  for (let i = 0; i < rounds; i++) {
    times.fn.push(await allReady(kube, [`fn-${i}`], () => kube.create(Resources.pods, fnPod(`fn-${i}`, false))));
    times.probed.push(await allReady(kube, [`probed-${i}`], () => kube.create(Resources.pods, fnPod(`probed-${i}`, true))));
    times.nginx.push(await allReady(kube, [`nginx-${i}`], () => kube.create(Resources.pods, nginxPod(`nginx-${i}`))));
    times.answer.push(await firstAnswer(kube, `answer-${i}`));
    await clear(kube);
  }

  const burst = Number(args.burst);
  const burstNames = Array.from({ length: burst }, (_, i) => `burst-${i}`);
  const burstMs = await allReady(kube, burstNames, () => Promise.all(burstNames.map((n) => kube.create(Resources.pods, fnPod(n, true)))));
  await new Promise((r) => setTimeout(r, 3000));
  const rss = functionRss(server.pid);
  // Disk of the node's unpacked images and containers' roots (-x: not into mounted overlays).
  const agentDir = join(dir, 'data', 'agent');
  const diskDirs = ['layers', 'rootfs', 'oci/containers'].map((d) => join(agentDir, d)).filter((d) => existsSync(d));
  const diskMiB = diskDirs.length ? Number(/(\d+)\s+total/.exec(execFileSync('du', ['-skx', '--total', ...diskDirs], { encoding: 'utf8' }))?.[1]) / 1024 : 0;
  const podMetrics = resourceType('metrics.k8s.io/v1beta1', 'PodMetrics', 'pods');
  for (let listed = 0; listed < burst; await new Promise((r) => setTimeout(r, 1000))) listed = (await kube.list(podMetrics, { namespace: 'default' })).items.length;
  const metricsList = [];
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    await kube.list(podMetrics, { namespace: 'default' });
    metricsList.push(performance.now() - t);
  }
  await clear(kube);

  const simulated = Number(args.simulated);
  const simNames = Array.from({ length: simulated }, (_, i) => `sim-${i}`);
  const simMs = await allReady(kube, simNames, async () => {
    for (let i = 0; i < simNames.length; i += 50) await Promise.all(simNames.slice(i, i + 50).map((n) => kube.create(Resources.pods, nginxPod(n))));
  });
  await clear(kube);

  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`\n## Pods that run (${new Date().toISOString()}, ${args['container-runtime']} runtime, load average ${load}, ${rounds} rounds)\n`);
  console.log('| measure | median | min | max | target |');
  console.log('|---|--:|--:|--:|---|');
  const row = (what, xs, target = '') => console.log(`| ${what} | ${ms(median(xs))} | ${ms(Math.min(...xs))} | ${ms(Math.max(...xs))} | ${target} |`);
  row('function pod created → Running + Ready (no probe: Ready when started)', times.fn, '≤ 500 ms');
  row('function pod created → Ready by its readiness probe (period 1 s)', times.probed);
  row('function pod created → first HTTP answer', times.answer);
  row('simulated nginx pod created → Running + Ready (kwok floor)', times.nginx);
  console.log(`| ${burst} function pods created at once → all Ready (probe) | ${ms(burstMs)} | | | ≤ 30 s |`);
  row(`PodMetrics list of ${burst} pods (metrics.k8s.io, built in)`, metricsList);
  console.log(`| RSS per idle function process (${rss.length} measured) | ${median(rss) / 1024 | 0} MiB median | ${Math.min(...rss) / 1024 | 0} MiB | ${Math.max(...rss) / 1024 | 0} MiB | |`);
  console.log(`| disk: the image unpacked + ${burst} containers' roots (layers/, rootfs/, oci/containers/) | ${diskMiB.toFixed(1)} MiB | | | |`);
  console.log(`| ${simulated} simulated pods created → all Running + Ready | ${ms(simMs)} | | | ≤ 10 s |`);
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
