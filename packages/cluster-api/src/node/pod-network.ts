/**
 * Pod IPs. On Linux every address of 127.0.0.0/8 is the loopback interface's, so each pod gets an
 * address of its own from the node's `spec.podCIDR` (a block of the cluster's loopback CIDR, handed
 * out by the node IPAM controller) and its function listens on `podIP:PORT`: two pods may both use
 * 8080, and nothing needs setting up. Addresses go round-robin, as host-local IPAM hands them out, so
 * a freed one is not reused at once. Elsewhere (macOS has only 127.0.0.1 on lo0) the `shared` mode
 * gives every pod the node's IP and each function container a free port of its own instead of the
 * one it asks for; what connects to a pod goes through the node agent, which knows the mapping.
 */
import { createServer } from 'node:net';

export type NetworkMode = 'loopback' | 'shared';

export const defaultNetworkMode = (): NetworkMode => (process.platform === 'linux' ? 'loopback' : 'shared');

const toInt = (ip: string): number => ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
const toIp = (n: number): string => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');

export function parseCidr(cidr: string): { base: number; size: number } {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr);
  const bits = Number(m?.[5]);
  if (!m || m.slice(1, 5).some((o) => Number(o) > 255) || bits > 32) throw new Error(`invalid CIDR ${JSON.stringify(cidr)}`);
  const size = 2 ** (32 - bits);
  return { base: toInt(`${m[1]}.${m[2]}.${m[3]}.${m[4]}`) - (toInt(`${m[1]}.${m[2]}.${m[3]}.${m[4]}`) % size), size };
}

/** A free TCP port on `host` (the kernel's pick). */
export const freePort = (host: string): Promise<number> => new Promise((resolve, reject) => {
  const s = createServer().once('error', reject).listen(0, host, () => {
    const { port } = s.address() as { port: number };
    s.close(() => resolve(port));
  });
});

/** Whether something on this machine already listens on `host:port` (another cluster's pod, a developer's server). */
const taken = (host: string, port: number): Promise<boolean> => new Promise((resolve) => {
  const s = createServer().once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'EADDRINUSE'))
    .listen({ port, host, exclusive: true }, () => s.close(() => resolve(false)));
});

/** How long an address found in use by something else is skipped. */
const ForeignHoldMs = 60_000;

export class PodNetwork {
  private readonly byUid = new Map<string, string>();
  /** Addresses of the range something outside this node was listening on, and until when they are skipped. */
  private readonly foreign = new Map<string, number>();
  private readonly ports = new Map<string, Map<number, number>>();
  private range?: { base: number; size: number };
  /** The node's pod CIDR, once known. */
  cidr?: string;
  private cursor = 1;
  private cidrSet!: () => void;
  /** Resolves once the node has a pod CIDR (always at once in shared mode). */
  readonly ready: Promise<void>;

  constructor(readonly mode: NetworkMode, readonly hostIP: string) {
    this.ready = new Promise((resolve) => (this.cidrSet = resolve));
    if (mode === 'shared') this.cidrSet();
  }

  setCidr(cidr: string): void {
    if (this.range) return;
    this.range = parseCidr(cidr);
    this.cidr = cidr;
    this.cidrSet();
  }

  /** The pod's IP (the same one again for the same uid). */
  allocate(uid: string): string {
    const had = this.byUid.get(uid);
    if (had) return had;
    if (this.mode === 'shared') return this.hostIP;
    const { base, size } = this.range!;
    const used = new Set(this.byUid.values());
    const now = Date.now();
    const n = size - 2;
    for (let i = 0; i < n; i++) {
      const offset = ((this.cursor - 1 + i) % n) + 1;
      const ip = toIp(base + offset);
      if (used.has(ip) || (this.foreign.get(ip) ?? 0) > now) continue;
      this.cursor = (offset % n) + 1;
      this.byUid.set(uid, ip);
      return ip;
    }
    throw new Error(`no pod IP left in ${toIp(base)}/${32 - Math.log2(size)}`);
  }

  /**
   * The pod's IP, checked first (loopback mode): an address where something on this machine already
   * listens on one of `ports` (another cluster's pod on the same range, any server) is skipped for a
   * while and the next one taken, so a pod never starts on an address it cannot bind.
   */
  async allocateFree(uid: string, ports: readonly number[]): Promise<string> {
    if (this.mode === 'shared' || this.byUid.has(uid)) return this.allocate(uid);
    for (let tries = 0; tries < 64; tries++) {
      const ip = this.allocate(uid);
      const busy = await Promise.all(ports.map((p) => taken(ip, p)));
      if (!busy.includes(true)) return ip;
      this.foreign.set(ip, Date.now() + ForeignHoldMs);
      this.byUid.delete(uid);
    }
    return this.allocate(uid);
  }

  release(uid: string): void {
    this.byUid.delete(uid);
    this.ports.delete(uid);
  }

  /** Shared mode: the node port standing for a pod's container port (made on first use). */
  async hostPort(uid: string, containerPort: number): Promise<number> {
    if (this.mode === 'loopback') return containerPort;
    const ports = this.ports.get(uid) ?? new Map<number, number>();
    this.ports.set(uid, ports);
    if (!ports.has(containerPort)) ports.set(containerPort, await freePort(this.hostIP));
    return ports.get(containerPort)!;
  }

  /** Where a connection to `podIP:port` of this pod really goes. */
  target(uid: string, port: number): { host: string; port: number } | undefined {
    const ip = this.byUid.get(uid) ?? (this.mode === 'shared' ? this.hostIP : undefined);
    if (!ip) return undefined;
    return { host: ip, port: this.mode === 'shared' ? (this.ports.get(uid)?.get(port) ?? port) : port };
  }
}
