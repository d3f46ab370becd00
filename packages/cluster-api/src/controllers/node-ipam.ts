/**
 * Node IPAM, as kube-controller-manager's range allocator (--allocate-node-cidrs): a Node gets a
 * block of the cluster's pod CIDR (`--cluster-cidr`, blocks of `--node-cidr-mask-size` bits) in
 * spec.podCIDR / spec.podCIDRs, the lowest block no other node holds. The default cluster CIDR is a
 * loopback range (127.64.0.0/10, /20 per node: 1024 nodes of 4094 pods), so on Linux every pod IP is
 * an address of the node's loopback interface and needs no network set-up (src/node/pod-network.ts).
 * Only nodes of this project's agents get one (containerRuntimeVersion `func://…`): a Node made by
 * hand or by another kubelet brings its own pod network.
 */
import type { KubeObject } from '../api/meta.js';
import type { ApiClient } from '../client/interface.js';
import { follow, ignoreRaces, Loop, SystemContext, type Controller, type ControllerOptions } from './loop.js';

export const DefaultClusterCidr = '127.64.0.0/10';
export const DefaultNodeMaskSize = 20;

export interface IpamOptions extends ControllerOptions {
  clusterCidr?: string;
  nodeCidrMaskSize?: number;
}

const ours = (n: KubeObject) => String((n.status as { nodeInfo?: { containerRuntimeVersion?: string } } | undefined)?.nodeInfo?.containerRuntimeVersion ?? '').startsWith('func://');
const cidrOf = (n: KubeObject) => (n.spec as { podCIDR?: string } | undefined)?.podCIDR;

const toInt = (ip: string): number => ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
const toIp = (n: number): string => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');

/** The `index`th block of `mask` bits in `cidr`, or undefined past its end. */
export function block(cidr: string, mask: number, index: number): string | undefined {
  const [ip = '', bits = ''] = cidr.split('/');
  const size = 2 ** (32 - mask);
  const count = 2 ** (mask - Number(bits));
  if (index >= count) return undefined;
  return `${toIp(toInt(ip) - (toInt(ip) % 2 ** (32 - Number(bits))) + index * size)}/${mask}`;
}

export const startNodeIpam = (registry: ApiClient, opts: IpamOptions = {}): Controller => {
  const nodes = registry.find('', 'v1', 'nodes');
  if (!nodes) return { stop: async () => undefined };
  const cidr = opts.clusterCidr ?? DefaultClusterCidr;
  const mask = opts.nodeCidrMaskSize ?? DefaultNodeMaskSize;

  const pass = async (): Promise<void> => {
    const { items } = await nodes.list(SystemContext, {});
    const used = new Set(items.map((n) => cidrOf(n) ?? '').filter(Boolean));
    let next = 0;
    for (const node of items.filter((n) => !cidrOf(n) && ours(n))) {
      let chosen: string | undefined;
      while ((chosen = block(cidr, mask, next++)) && used.has(chosen));
      if (!chosen) return opts.log?.({ level: 'warn', controller: 'node-ipam', msg: `no pod CIDR left in ${cidr} for node ${node.metadata.name}` });
      used.add(chosen);
      const spec = { ...(node.spec as object), podCIDR: chosen, podCIDRs: [chosen] };
      await nodes.update(SystemContext, node.metadata.name!, { ...node, spec } as KubeObject).catch(ignoreRaces);
    }
  };

  const loop = new Loop('node-ipam', pass, { resyncMs: 30_000, debounceMs: 0, ...opts });
  const watch = follow(nodes, loop, (type, node) => {
    if (type !== 'DELETED' && !cidrOf(node) && ours(node)) loop.kick(0);
  });
  return { stop: async () => (watch.close(), await loop.stop()) };
};
