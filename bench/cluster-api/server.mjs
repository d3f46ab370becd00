// What the cluster-api benches share: the Pod they write, starting a server process (a build of
// `cluster-api serve`, or the bare node:http ceiling) pinned to a core, and its CPU from /proc.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../', import.meta.url));
export const defaultCli = join(root, 'packages/cluster-api/dist/cli.js');

/** Whether `taskset` can pin here; it execs node in place, so the child's pid stays the server's (its /proc CPU is the server's). */
export const canPin = (cpu) => cpu !== 'none' && cpus().length > 1 && spawnSync('taskset', ['-V']).status === 0;

/** A Pod of about 2 KiB, as JSON, the padding in an annotation. */
export function podBody(name) {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'bench', shard: String(name.length % 7) }, annotations: { pad: '' } },
    spec: { containers: [{ name: 'app', image: 'registry.example/bench/app:1.0', ports: [{ containerPort: 8080 }], env: [{ name: 'MODE', value: 'bench' }] }] },
  };
  pod.metadata.annotations.pad = 'x'.repeat(Math.max(0, 2048 - JSON.stringify(pod).length));
  return JSON.stringify(pod);
}

/**
 * Starts `cli serve` on plain HTTP (storage 'bare': the bare node:http server instead), pinned to
 * `cpu` when given; resolves once it listens, with its URL and admin token (`token`: the admin's of a
 * token file passed in `env`). `children` tracks the process so a deadline can kill it.
 */
export function startServer({ cli = defaultCli, storage, dataDir, cpu, env, nodeFlags = [], children, token: given }) {
  const argv = storage === 'bare'
    ? [join(root, 'bench/cluster-api/bare-server.mjs')]
    : [...nodeFlags, cli, 'serve', '--port', '0', '--insecure-http', '--data-dir', dataDir, '--storage', storage];
  const [cmd, args] = cpu !== undefined ? ['taskset', ['-c', String(cpu), process.execPath, ...argv]] : [process.execPath, argv];
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], env: env ?? process.env });
  children?.add(child);
  child.once('exit', () => children?.delete(child));
  let err = '';
  return new Promise((resolve, reject) => {
    const onData = (d) => {
      err += d;
      const m = /"msg":"listening","url":"([^"]+)"/.exec(err);
      if (!m) return;
      child.stderr.off('data', onData);
      child.stderr.resume();
      const token = given ?? (storage === 'bare' ? 'none' : readFileSync(join(dataDir, 'admin.token'), 'utf8').trim());
      resolve({ child, url: new URL(m[1]), token });
    };
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
}

export async function inParallel(n, concurrency, op) {
  let next = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, async () => { while (next < n) await op(next++); }));
  return performance.now() - start;
}

/**
 * CPU the server process spent (user + system, ms) from /proc: unlike throughput, this hardly moves
 * with what else runs on the machine, so `1e6 / (µs per request)` is what one idle core could serve.
 */
export function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}
