/**
 * Real etcd members for tests and benchmarks: `startEtcd({ members: 3 })` runs Debian's `etcd`
 * (3.4) on free loopback ports with its data in a temp dir, waits until the cluster serves, and can
 * kill (SIGKILL) and restart single members to inject faults. Every member is killed on `stop()`
 * and, as a last resort, when the process exits, so a failed test never leaves etcd running.
 *
 *   const etcd = await startEtcd({ members: 1 });
 *   const storage = await openStorage(etcd.url);     // etcd://127.0.0.1:port
 *   …
 *   await etcd.stop();
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface EtcdClusterOptions {
  readonly members?: number;
  /**
   * Where member data goes; default the OS temp dir. Tests that do not measure durability may pass
   * `/dev/shm` (tmpfs: fsync is free there; etcd 3.4 has no --unsafe-no-fsync).
   */
  readonly dataRoot?: string;
  /** etcd binary; default `$ETCD_BIN` or `etcd`. */
  readonly bin?: string;
  /** Serve clients over TLS with this certificate and require client certificates signed by caFile. */
  readonly tls?: { readonly certFile: string; readonly keyFile: string; readonly caFile: string };
}

export interface EtcdMember {
  readonly name: string;
  readonly clientPort: number;
  readonly peerPort: number;
  /** Plain-HTTP /health and /metrics, also when clients need TLS. */
  readonly metricsPort: number;
  /** Running right now. */
  readonly running: boolean;
  /** Process id while running (for CPU accounting in benchmarks). */
  readonly pid: number | undefined;
}

export interface EtcdCluster {
  /** `etcd://127.0.0.1:p1,127.0.0.1:p2,…` for `--storage`. */
  readonly url: string;
  readonly members: readonly EtcdMember[];
  readonly dataDir: string;
  /** SIGKILL one member (by index) and wait until it is gone. */
  kill(index: number): Promise<void>;
  /** Start a killed member again on its old ports and data; waits until it answers /health. */
  restart(index: number): Promise<void>;
  /** Index of the current leader as a running member reports it (etcd's maintenance status). */
  leader(): Promise<number>;
  /** Kill every member and delete the data. Idempotent. */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

/** A free loopback port (released before etcd binds it; the window is tiny on loopback). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

async function waitHealthy(child: Member, boundMs = 20_000): Promise<void> {
  const port = child.metricsPort;
  const deadline = Date.now() + boundMs;
  for (;;) {
    if (!child.running) throw new Error(`etcd ${child.name} exited during start-up:\n${child.log.slice(-2000)}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1_000) });
      if (res.ok && ((await res.json()) as { health?: string }).health === 'true') return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`etcd ${child.name} not healthy after ${boundMs} ms:\n${child.log.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Member name → id, from the members API of one member. */
async function memberIds(port: number): Promise<Map<string, string>> {
  const res = await fetch(`http://127.0.0.1:${port}/v3/cluster/member/list`, { method: 'POST', body: '{}' });
  const body = (await res.json()) as { members?: { ID: string; name: string }[] };
  return new Map((body.members ?? []).map((x) => [x.name, x.ID]));
}

interface Member extends EtcdMember {
  proc: ChildProcess | undefined;
  log: string;
  running: boolean;
  pid: number | undefined;
}

function launch(bin: string, m: Member, args: string[]): void {
  const proc = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  m.proc = proc;
  m.pid = proc.pid;
  m.running = true;
  live.add(proc);
  proc.stderr!.on('data', (d: Buffer) => {
    m.log = (m.log + d.toString()).slice(-20_000);
  });
  proc.once('exit', () => {
    live.delete(proc);
    if (m.proc === proc) m.running = false;
  });
  // No etcd binary (or not executable): say so instead of an uncaught 'error' event.
  proc.once('error', (err) => {
    live.delete(proc);
    m.log += `\ncannot run ${bin}: ${err.message} (install etcd, e.g. scripts/install-system-deps.sh, or set ETCD_BIN)`;
    if (m.proc === proc) m.running = false;
  });
}

export async function startEtcd(opts: EtcdClusterOptions = {}): Promise<EtcdCluster> {
  installExitHook();
  const n = opts.members ?? 1;
  const bin = opts.bin ?? process.env.ETCD_BIN ?? 'etcd';
  const dataDir = mkdtempSync(join(opts.dataRoot ?? tmpdir(), 'etcd-'));
  const members: Member[] = [];
  for (let i = 0; i < n; i++) {
    const [clientPort, peerPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
    members.push({ name: `m${i}`, clientPort, peerPort, metricsPort, proc: undefined, log: '', running: false, pid: undefined });
  }
  const initialCluster = members.map((m) => `${m.name}=http://127.0.0.1:${m.peerPort}`).join(',');
  // One token for all members: a cluster ID derived from different tokens would split the cluster.
  const token = `test-${process.pid}-${Date.now()}`;
  const scheme = opts.tls ? 'https' : 'http';
  const argsOf = (m: Member): string[] => [
    `--name=${m.name}`,
    `--data-dir=${join(dataDir, m.name)}`,
    `--listen-client-urls=${scheme}://127.0.0.1:${m.clientPort}`,
    `--advertise-client-urls=${scheme}://127.0.0.1:${m.clientPort}`,
    `--listen-metrics-urls=http://127.0.0.1:${m.metricsPort}`,
    ...(opts.tls ? [`--cert-file=${opts.tls.certFile}`, `--key-file=${opts.tls.keyFile}`, `--trusted-ca-file=${opts.tls.caFile}`, '--client-cert-auth'] : []),
    `--listen-peer-urls=http://127.0.0.1:${m.peerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${m.peerPort}`,
    `--initial-cluster=${initialCluster}`,
    '--initial-cluster-state=new',
    `--initial-cluster-token=${token}`,
    // Loopback: fast heartbeats so that a lost leader is noticed (and replaced) within a second.
    '--heartbeat-interval=50',
    '--election-timeout=500',
    '--logger=zap',
    '--log-level=error',
  ];
  let stopped = false;
  const cluster: EtcdCluster = {
    url: `etcd://${members.map((m) => `127.0.0.1:${m.clientPort}`).join(',')}`,
    members,
    dataDir,
    async kill(i) {
      const m = members[i]!;
      const proc = m.proc;
      if (!proc || !m.running) return;
      const gone = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGKILL');
      await gone;
    },
    async restart(i) {
      const m = members[i]!;
      if (m.running) return;
      launch(bin, m, argsOf(m));
      await waitHealthy(m);
    },
    async leader() {
      for (const m of members.filter((x) => x.running)) {
        const res = await fetch(`http://127.0.0.1:${m.clientPort}/v3/maintenance/status`, { method: 'POST', body: '{}' });
        const status = (await res.json()) as { leader?: string; header?: { member_id?: string } };
        const ids = await memberIds(m.clientPort);
        const index = members.findIndex((x) => ids.get(x.name) === status.leader);
        if (index >= 0) return index;
      }
      throw new Error('no running etcd member knows a leader');
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await Promise.all(members.map((_, i) => cluster.kill(i)));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  try {
    for (const m of members) launch(bin, m, argsOf(m));
    await Promise.all(members.map((m) => waitHealthy(m)));
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
