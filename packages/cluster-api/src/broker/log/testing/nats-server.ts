/**
 * Real `nats-server` processes for tests and benchmarks (Debian's nats-server 2.9): one JetStream
 * server, or a JetStream cluster of several on loopback. Ports are free ones picked at start, stores
 * live in a temporary directory, and `stop()` kills every process and removes the directory.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';

export const NATS_SERVER = process.env.NATS_SERVER ?? 'nats-server';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface NatsNode {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  process: ChildProcess | undefined;
  output: string;
}

export interface NatsCluster {
  readonly nodes: NatsNode[];
  /** `nats://` URL naming every node, `?replicas=` the cluster size. */
  readonly url: string;
  /** SIGKILLs one node. */
  kill(node: NatsNode): void;
  /** Starts a killed node again on its ports and store. */
  restart(node: NatsNode): Promise<void>;
  stop(): Promise<void>;
}

function launch(node: NatsNode, config: string): void {
  const child = spawn(NATS_SERVER, ['-c', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  node.process = child;
  const keep = (d: Buffer) => {
    node.output = (node.output + d.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
}

/** Resolves once JetStream answers through `url` (a cluster has elected its meta leader). */
async function jetStreamReady(url: string, nodes: NatsNode[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const nc = await connect({ servers: url.replace(/^nats:\/\//, '').split('?')[0]!.split(',').map((h) => `nats://${h}`), timeout: 1000 });
      try {
        const jsm = await nc.jetstreamManager({ timeout: 2000 });
        await jsm.getAccountInfo();
        return;
      } finally {
        await nc.close();
      }
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`JetStream not ready after ${timeoutMs} ms: ${String(last)}\n${nodes.map((n) => n.output.slice(-2000)).join('\n')}`);
}

/** Starts `size` JetStream servers clustered on loopback (size 1: a single server, no cluster). */
export async function startNats(size = 1): Promise<NatsCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'broker-nats-'));
  const ports = await Promise.all(Array.from({ length: size * 2 }, freePort));
  const nodes: NatsNode[] = Array.from({ length: size }, (_, i) => ({ name: `n${i}`, port: ports[i]!, url: `nats://127.0.0.1:${ports[i]}`, process: undefined, output: '' }));
  const routes = ports.slice(size).map((p) => `nats://127.0.0.1:${p}`);
  const configs = nodes.map((node, i) => {
    const file = join(dir, `${node.name}.conf`);
    const cluster = size > 1 ? `cluster { name: kb, listen: 127.0.0.1:${ports[size + i]}, routes: [${routes.join(', ')}] }` : '';
    writeFileSync(file, `server_name: ${node.name}\nlisten: 127.0.0.1:${node.port}\njetstream { store_dir: "${join(dir, node.name)}", max_mem: 64MB, max_file: 2GB }\n${cluster}\n`);
    return file;
  });
  nodes.forEach((n, i) => launch(n, configs[i]!));
  const url = `nats://${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}?replicas=${size}`;
  const cluster: NatsCluster = {
    nodes,
    url,
    kill: (node) => {
      node.process?.kill('SIGKILL');
      node.process = undefined;
    },
    restart: async (node) => {
      launch(node, configs[nodes.indexOf(node)]!);
      await jetStreamReady(url, nodes);
    },
    stop: async () => {
      await Promise.all(
        nodes.map((n) => {
          const p = n.process;
          n.process = undefined;
          if (!p || p.exitCode !== null) return undefined;
          return new Promise((r) => {
            p.once('exit', r);
            p.kill('SIGKILL');
          });
        }),
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await jetStreamReady(url, nodes);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
