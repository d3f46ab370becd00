// What the cluster-api benches share: the Pod they write, and starting a server process (a build of
// `cluster-api serve`, or the bare node:http ceiling) pinned to a core. Its CPU: ../lib/process.mjs.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { listeningLine, spawnUntil } from '../lib/process.mjs';

export const root = fileURLToPath(new URL('../../', import.meta.url));
export const defaultCli = join(root, 'packages/cluster-api/dist/cli.js');

/** Whether `taskset` can pin here; it execs node in place, so the child's pid stays the server's (its /proc CPU is the server's). */
export const canPin = (cpu) => cpu !== 'none' && cpus().length > 1 && spawnSync('taskset', ['-V']).status === 0;

/**
 * A Pod of about 2 KiB, as JSON, the padding in an annotation. The default image names a registry; a
 * node agent runs an image named without one (`bench/app:1.0`, as `nginx:1.27`) simulated, as kwok.
 */
export function podBody(name, image = 'registry.example/bench/app:1.0') {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'bench', shard: String(name.length % 7) }, annotations: { pad: '' } },
    spec: { containers: [{ name: 'app', image, ports: [{ containerPort: 8080 }], env: [{ name: 'MODE', value: 'bench' }] }] },
  };
  pod.metadata.annotations.pad = 'x'.repeat(Math.max(0, 2048 - JSON.stringify(pod).length));
  return JSON.stringify(pod);
}

/**
 * What a bench of the API turns off in `serve`: the embedded node agent, scheduler and broker (the
 * controllers stay, as before they were embedded). `scale.mjs` runs `serve` with all of them.
 */
export const apiOnly = ['--disable-agent', '--disable-scheduler', '--no-broker'];

/**
 * Starts `cli serve` on plain HTTP with `flags` (default: apiOnly) (storage 'bare': the bare node:http server instead), pinned to
 * `cpu` when given; resolves once it listens, with its URL and admin token (`token`: the admin's of a
 * token file passed in `env`). `children` tracks the process so a deadline can kill it.
 */
export async function startServer({ cli = defaultCli, storage, dataDir, cpu, env, nodeFlags = [], children, token: given, flags = apiOnly }) {
  const argv = storage === 'bare'
    ? [join(root, 'bench/cluster-api/bare-server.mjs')]
    : [...nodeFlags, cli, 'serve', '--port', '0', '--insecure-http', '--data-dir', dataDir, '--storage', storage, ...flags];
  const [cmd, args] = cpu !== undefined ? ['taskset', ['-c', String(cpu), process.execPath, ...argv]] : [process.execPath, argv];
  const { child, match } = await spawnUntil(cmd, args, { ready: listeningLine, env, children });
  const token = given ?? (storage === 'bare' ? 'none' : readFileSync(join(dataDir, 'admin.token'), 'utf8').trim());
  return { child, url: new URL(match[1]), token };
}

export async function inParallel(n, concurrency, op) {
  let next = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, async () => { while (next < n) await op(next++); }));
  return performance.now() - start;
}
