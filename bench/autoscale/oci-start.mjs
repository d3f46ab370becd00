#!/usr/bin/env node
/**
 * An oci pod's start through the runtime alone (no API server, no gateway): the function image of
 * bench/autoscale/fn started as the node agent starts it (runPodSandbox, createContainer,
 * startContainer) and polled on its pod IP until it answers, then removed. Two runtimes side by side,
 * one taking its networks from a pool (`--pool`, default 2) and one without (pool 0), their rounds
 * alternating, so both see the same machine. Prints medians of each step, never asserts.
 *
 *   npm run build && node bench/autoscale/oci-start.mjs [--rounds 15] [--pool 2]
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ociHost } from '../../packages/cluster-api/dist/node/runtime/oci/host.js';
import { OciRuntime } from '../../packages/cluster-api/dist/node/runtime/oci/runtime.js';
import { privatePodCidr } from '../../packages/cluster-api/dist/node/runtime/oci/pod-cidr.js';
import { ImageStore } from '../../packages/cluster-api/dist/node/runtime/image-store.js';
import { PodNetwork } from '../../packages/cluster-api/dist/node/pod-network.js';
import { functionImage } from '../lib/function-image.mjs';
import { median, percentile } from '../lib/stats.mjs';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '15' }, pool: { type: 'string', default: '2' } } });
const repo = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'bench-oci-start-'));
const host = ociHost();
await functionImage(join(repo, 'bench/autoscale/fn'), join(dir, 'images'), 'scale:bench', dir, { runtime: 'bundle' });
const images = new ImageStore({ layout: join(dir, 'images'), rootfs: join(dir, 'rootfs'), layers: join(dir, 'layers') });

function runtime(name, pool) {
  const network = new PodNetwork('loopback', '127.0.0.1');
  network.setCidr(privatePodCidr(join(dir, name)).replace(/\.0\.0\/16$/, '.0.0/24'));
  return { name, rt: new OciRuntime({ images, network, host, dataDir: join(dir, name), hostIP: '127.0.0.1', sandboxPool: pool }), times: {} };
}
const sides = [runtime('no-pool', 0), runtime(`pool-of-${args.pool}`, Number(args.pool))];
const answers = async (ip, log) => {
  for (const end = Date.now() + 10_000; Date.now() < end;) {
    const ok = await fetch(`http://${ip}:8080/`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`the function did not answer on ${ip}:8080: ${readFileSync(log, 'utf8').slice(-2000)}`);
};

/** One pod started until it answers, each step timed into `times`. */
async function startOne(side, i) {
  const { rt, times } = side;
  const name = `p${i}`;
  const podDir = join(dir, side.name, 'pods', name);
  mkdirSync(podDir, { recursive: true });
  const pod = { metadata: { name, namespace: 'default', uid: `uid-${i}` }, spec: { containers: [{ name: 'fn', image: 'scale:bench' }] } };
  const mark = (k, t0) => ((times[k] ??= []).push(performance.now() - t0), performance.now());
  const t0 = performance.now();
  let t = t0;
  const sandbox = await rt.runPodSandbox({ metadata: { name, namespace: 'default', uid: pod.metadata.uid, attempt: 0 }, hostname: name, logDirectory: join(podDir, 'logs'), podDir, labels: {}, annotations: {}, pod });
  t = mark('sandbox (network, /etc files)', t);
  const id = await rt.createContainer(sandbox, { metadata: { name: 'fn', attempt: 0 }, image: { image: 'scale:bench' }, envs: { KUBERNETES_SERVICE_HOST: '10.0.0.1', K_SERVICE: name }, mounts: [], logPath: join(podDir, 'logs', 'fn', '0.log'), container: pod.spec.containers[0] });
  t = mark('createContainer (overlay, config.json)', t);
  await rt.startContainer(id);
  t = mark('startContainer (conmon + runc create, runc start)', t);
  await answers(rt.podSandboxStatus(sandbox).network.ip, join(podDir, 'logs', 'fn', '0.log'));
  mark('function answers on the pod IP', t);
  mark('whole: sandbox → first answer', t0);
  await rt.removePodSandbox(sandbox);
}

try {
  for (const s of sides) {
    await s.rt.ready();
    await startOne(s, 0); // warms the image store and the node binary mounts; not counted
    for (const k of Object.keys(s.times)) s.times[k] = [];
  }
  for (let i = 1; i <= Number(args.rounds); i++) {
    for (const s of sides) {
      // Each pool is full again before its round: a pod arriving at an idle node.
      while (s.rt.pooledNetworks.length < Number(s.name === 'no-pool' ? 0 : args.pool)) await new Promise((r) => setTimeout(r, 5));
      await startOne(s, i);
    }
  }
  console.log(`\n### An oci pod's start through the runtime (${args.rounds} rounds each, alternating; p50 / p90; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')})\n`);
  console.log(`| step | ${sides.map((s) => s.name).join(' | ')} |`);
  console.log(`|---|${sides.map(() => '--:').join('|')}|`);
  for (const k of Object.keys(sides[0].times)) console.log(`| ${k} | ${sides.map((s) => `${median(s.times[k]).toFixed(1)} / ${percentile(s.times[k], 90).toFixed(1)} ms`).join(' | ')} |`);
} finally {
  for (const s of sides) await s.rt.close().catch((err) => console.error(err));
  rmSync(dir, { recursive: true, force: true });
}
