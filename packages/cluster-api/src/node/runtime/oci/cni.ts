/**
 * A pod's network, as a CRI runtime sets it up: a named network namespace per pod (pause-less: a
 * bind mount under /run/netns, made by `ip netns add`, shared by the pod's containers) wired by the
 * CNI plugins, invoked as the CNI spec says (CNI_COMMAND ADD/DEL, CNI_CONTAINERID, CNI_NETNS,
 * CNI_IFNAME, CNI_PATH in the environment, the network config as JSON on stdin, cniVersion 1.0.0):
 * `loopback` for lo, `bridge` (a bridge of this node's own, the gateway on the host) with
 * `host-local` IPAM over the node's pod CIDR for eth0, and `portmap` for hostPorts.
 */
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PortMapping {
  hostPort: number;
  containerPort: number;
  protocol: string;
}

export interface CniOptions {
  cniPath: string;
  /** The network's name (also the prefix of the pods' namespace names). */
  name: string;
  /** The node's bridge (at most 15 characters). */
  bridge: string;
  /** host-local's data directory. */
  ipamDir: string;
}

/** An error a plugin answered (its `msg`), or the plugin's failure. */
export class CniError extends Error {
  override readonly name = 'CniError';
}

function plugin(opts: CniOptions, type: string, command: 'ADD' | 'DEL', id: string, netns: string, ifname: string, config: Record<string, unknown>): Promise<Record<string, unknown>> {
  const env = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', CNI_COMMAND: command, CNI_CONTAINERID: id, CNI_NETNS: netns, CNI_IFNAME: ifname, CNI_PATH: opts.cniPath };
  return new Promise((resolve, reject) => {
    const child = spawn(join(opts.cniPath, type), [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.once('error', (e) => reject(new CniError(`CNI plugin ${type}: ${e.message}`)));
    child.once('close', (code) => {
      const text = Buffer.concat(out).toString();
      let answer: Record<string, unknown> = {};
      try {
        answer = text.trim() ? JSON.parse(text) : {};
      } catch {
        /* not JSON: reported below by the exit code */
      }
      if (code === 0) return resolve(answer);
      reject(new CniError(`CNI plugin ${type} ${command} failed: ${String(answer.msg ?? (Buffer.concat(err).toString().trim() || `exit code ${code}`))}${answer.details ? ` (${String(answer.details)})` : ''}`));
    });
    child.stdin.end(JSON.stringify({ cniVersion: '1.0.0', name: opts.name, type, ...config }));
  });
}

export class PodNetworks {
  constructor(private readonly opts: CniOptions) {}

  netnsName(id: string): string {
    return `${this.opts.name}-${id.slice(0, 12)}`;
  }

  private bridgeConfig(cidr: string) {
    return { bridge: this.opts.bridge, isGateway: true, isDefaultGateway: true, ipMasq: false, hairpinMode: true, ipam: { type: 'host-local', ranges: [[{ subnet: cidr }]], dataDir: this.opts.ipamDir } };
  }

  private portmapConfig(ports: PortMapping[], prevResult?: Record<string, unknown>) {
    return { capabilities: { portMappings: true }, snat: true, runtimeConfig: { portMappings: ports }, ...(prevResult ? { prevResult } : {}) };
  }

  /** A namespace for the pod, lo up, eth0 on the node's bridge with an address of `cidr`, hostPorts mapped: the pod's IP and the namespace's path. */
  async add(id: string, cidr: string, ports: PortMapping[]): Promise<{ ip: string; netns: string }> {
    const name = this.netnsName(id);
    await run('ip', ['netns', 'add', name]);
    const netns = `/run/netns/${name}`;
    try {
      await plugin(this.opts, 'loopback', 'ADD', id, netns, 'lo', {});
      const result = await plugin(this.opts, 'bridge', 'ADD', id, netns, 'eth0', this.bridgeConfig(cidr));
      const address = (result.ips as { address?: string }[] | undefined)?.[0]?.address;
      if (!address) throw new CniError('CNI plugin bridge ADD gave the pod no address');
      if (ports.length) await plugin(this.opts, 'portmap', 'ADD', id, netns, 'eth0', this.portmapConfig(ports, result));
      return { ip: address.split('/')[0]!, netns };
    } catch (err) {
      await this.del(id, cidr, ports).catch(() => undefined);
      throw err;
    }
  }

  /** Undoes add (each step tolerates what is already gone, as CNI DEL must). */
  async del(id: string, cidr: string, ports: PortMapping[]): Promise<void> {
    const name = this.netnsName(id);
    const netns = `/run/netns/${name}`;
    if (ports.length) await plugin(this.opts, 'portmap', 'DEL', id, netns, 'eth0', this.portmapConfig(ports)).catch(() => undefined);
    await plugin(this.opts, 'bridge', 'DEL', id, netns, 'eth0', this.bridgeConfig(cidr)).catch(() => undefined);
    await run('ip', ['netns', 'del', name]).catch(() => undefined);
  }

  /** The namespaces of this network on the host. */
  private async namespaces(): Promise<string[]> {
    const { stdout } = await run('ip', ['netns', 'list']).catch(() => ({ stdout: '' }));
    return stdout.split('\n').map((line) => line.split(' ')[0] ?? '').filter((name) => name.startsWith(`${this.opts.name}-`));
  }

  /** Removes the namespaces of this network but those of the sandboxes in `keep` (what an earlier run left unrecorded). */
  async prune(keep: ReadonlySet<string>): Promise<void> {
    const kept = new Set([...keep].map((id) => this.netnsName(id)));
    for (const name of await this.namespaces()) if (!kept.has(name)) await run('ip', ['netns', 'del', name]).catch(() => undefined);
  }

  /** Removes every namespace of this network, and the bridge. */
  async clear(): Promise<void> {
    await this.prune(new Set());
    await run('ip', ['link', 'del', this.opts.bridge]).catch(() => undefined);
  }
}
