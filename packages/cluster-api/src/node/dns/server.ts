/**
 * The node's cluster DNS server (what CoreDNS is to a cluster, here one per node in the agent, on
 * the `kube-dns` Service's clusterIP): UDP and TCP on port 53 of that address, the cluster's zone
 * answered from the node's informers (records.ts), every other name forwarded over UDP to the
 * host's own nameservers (its /etc/resolv.conf), at most `MaxForwards` at once, SERVFAIL when they
 * do not answer in time. What is not a query is dropped.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createServer, isIPv6, type Server, type Socket } from 'node:net';
import { inZone, lookup, type ClusterView } from './records.js';
import { buildAnswer, errorAnswer, parseQuery, Rcode, type Query } from './wire.js';

export interface ClusterDnsOptions {
  /** Where it listens (port 53 of it). */
  address: string;
  port?: number;
  /** The cluster domain (`cluster.local`). */
  zone: string;
  view: ClusterView;
  /** Nameservers for names outside the zone (default: the host's /etc/resolv.conf), on `upstreamPort` (53). */
  upstreams?: string[];
  upstreamPort?: number;
  log?: (entry: Record<string, unknown>) => void;
}

const MaxForwards = 256;
const ForwardTimeoutMs = 2000;
const MaxTcpMessage = 65_535;

/** The `nameserver` lines of a resolv.conf. */
export function nameservers(text: string): string[] {
  return text.split('\n').map((l) => /^\s*nameserver\s+(\S+)/.exec(l)?.[1]).filter((s): s is string => !!s);
}

export class ClusterDns {
  private udp?: UdpSocket;
  private tcp?: Server;
  private readonly sockets = new Set<Socket>();
  private forwards = 0;
  private readonly upstreams: string[];

  constructor(private readonly opts: ClusterDnsOptions) {
    this.upstreams = opts.upstreams ?? (() => {
      try {
        return nameservers(readFileSync('/etc/resolv.conf', 'utf8'));
      } catch {
        return [];
      }
    })();
  }

  async start(): Promise<void> {
    const port = this.opts.port ?? 53;
    const udp = createSocket(isIPv6(this.opts.address) ? 'udp6' : 'udp4');
    udp.on('message', (msg, from) => void this.answer(msg).then((out) => out && udp.send(out, from.port, from.address)));
    udp.on('error', (err) => this.opts.log?.({ level: 'warn', msg: 'cluster dns', error: err.message }));
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(port, this.opts.address, () => (udp.off('error', reject), resolve()));
    });
    this.udp = udp;
    const tcp = createServer((s) => this.serveTcp(s));
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(port, this.opts.address, () => (tcp.off('error', reject), resolve()));
    });
    this.tcp = tcp;
  }

  /** The port it answers on (53 unless told otherwise; tests use 0). */
  get port(): number {
    return this.udp?.address().port ?? 0;
  }

  get tcpPort(): number {
    const a = this.tcp?.address();
    return a && typeof a === 'object' ? a.port : 0;
  }

  async stop(): Promise<void> {
    const { udp, tcp } = this;
    this.udp = this.tcp = undefined;
    udp?.close();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (tcp ? tcp.close(() => resolve()) : resolve()));
  }

  /** DNS over TCP: each message with its two-byte length, answered in order. */
  private serveTcp(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.setTimeout(10_000, () => socket.destroy());
    let pending = Buffer.alloc(0);
    let chain = Promise.resolve();
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2) {
        const n = pending.readUInt16BE(0);
        if (n === 0 || n > MaxTcpMessage) return void socket.destroy();
        if (pending.length < 2 + n) break;
        const msg = pending.subarray(2, 2 + n);
        pending = pending.subarray(2 + n);
        chain = chain.then(async () => {
          const out = await this.answer(msg);
          if (!out || socket.destroyed) return;
          const len = Buffer.alloc(2);
          len.writeUInt16BE(out.length);
          socket.write(Buffer.concat([len, out]));
        });
      }
    });
  }

  /** The answer to one message; undefined to drop it. */
  async answer(msg: Buffer): Promise<Buffer | undefined> {
    const q = parseQuery(msg);
    if (!q) return undefined;
    if (q.class !== 1) return errorAnswer(q, Rcode.NotImp);
    if (inZone(q.name, this.opts.zone)) {
      const found = lookup(this.opts.view, this.opts.zone, q.name, q.type);
      if (found.rcode >= 0) return buildAnswer(q, found.rcode, found.answers, true);
    }
    return this.forward(q, msg);
  }

  private async forward(q: Query, msg: Buffer): Promise<Buffer> {
    const upstream = this.upstreams[0];
    if (!upstream || this.forwards >= MaxForwards) return errorAnswer(q, Rcode.ServFail);
    this.forwards++;
    const socket = createSocket(isIPv6(upstream) ? 'udp6' : 'udp4');
    try {
      return await new Promise<Buffer>((resolve) => {
        const timer = setTimeout(() => resolve(errorAnswer(q, Rcode.ServFail)), ForwardTimeoutMs);
        socket.on('message', (reply) => {
          if (reply.length < 2 || reply.readUInt16BE(0) !== q.id) return;
          clearTimeout(timer);
          resolve(reply);
        });
        socket.on('error', () => (clearTimeout(timer), resolve(errorAnswer(q, Rcode.ServFail))));
        socket.send(msg, this.opts.upstreamPort ?? 53, upstream);
      });
    } finally {
      this.forwards--;
      socket.close();
    }
  }
}
