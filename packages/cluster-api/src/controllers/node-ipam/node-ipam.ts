/**
 * Node IPAM, as kube-controller-manager's range allocator (--allocate-node-cidrs): a Node gets a
 * block of the cluster's pod CIDR (`--cluster-cidr`, blocks of `--node-cidr-mask-size` bits) in
 * spec.podCIDR / spec.podCIDRs, the lowest block no other node holds. The default cluster CIDR is a
 * loopback range (127.64.0.0/10, /20 per node: 1024 nodes of 4094 pods), so on Linux every pod IP is
 * an address of the node's loopback interface and needs no network set-up (src/node/pod-network.ts).
 * Only nodes of this project's agents get one (containerRuntimeVersion `func://…`): a Node made by
 * hand or by another kubelet brings its own pod network.
 */
import type { KubeObject } from '../../api/meta.js';
import type { ApiClient } from '../../client/interface.js';
import { objectKey, splitKey } from '../context.js';
import { ignoreRaces, SystemContext, type Controller, type ControllerOptions } from '../shared.js';
import { startReconciler } from '../reconciler.js';

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

  /** A node without a pod CIDR gets the first free block (one node at a time: blocks are chosen from all nodes). */
  const reconcile = async (key: string): Promise<void> => {
    const { items } = await nodes.list(SystemContext, {});
    const node = items.find((n) => n.metadata.name === splitKey(key).name);
    if (!node || cidrOf(node) || !ours(node)) return;
    const used = new Set(items.map((n) => cidrOf(n) ?? '').filter(Boolean));
    let chosen: string | undefined;
    for (let next = 0; (chosen = block(cidr, mask, next)) && used.has(chosen); next++);
    if (!chosen) return opts.log?.({ level: 'warn', controller: 'node-ipam', msg: `no pod CIDR left in ${cidr} for node ${node.metadata.name}` });
    const spec = { ...(node.spec as object), podCIDR: chosen, podCIDRs: [chosen] };
    await nodes.update(SystemContext, node.metadata.name!, { ...node, spec } as KubeObject).catch(ignoreRaces);
  };

  const unallocated = (node: KubeObject, _old: unknown, type: string) => (type !== 'DELETED' && !cidrOf(node) && ours(node) ? [objectKey(node)] : []);
  return startReconciler('node-ipam-controller', reconcile, [{ watch: nodes, keys: unallocated }], { log: opts.log, workers: 1 });
};
