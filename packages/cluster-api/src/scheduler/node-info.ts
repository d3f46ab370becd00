/**
 * What the scheduler knows of a node while it decides (kube-scheduler's NodeInfo): the Node, the
 * pods assigned to it (bound, or assumed bound while the binding is in flight) and what they request,
 * counted as NodeResourcesFit counts it: a pod requests the larger of its containers' sum and any one
 * init container, CPU in millicores.
 */
import { resourceAmount } from '../api/quantity.js';
import type { Node, Pod } from '../node/types.js';

export type Resources = Record<string, number>;

export interface NodeInfo {
  node: Node;
  name: string;
  pods: Pod[];
  requested: Resources;
  allocatable: Resources;
  /** hostPort claims: `protocol/hostIP/port`. */
  ports: Set<string>;
}

const add = (into: Resources, from: Resources) => {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
};

const containerRequests = (c: { resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> } }): Resources => {
  // A limit without a request is also the request, as the API server defaults it.
  const given = { ...c.resources?.limits, ...c.resources?.requests };
  return Object.fromEntries(Object.entries(given).map(([k, q]) => [k, resourceAmount(k, q)]));
};

/** computePodResourceRequest: max(sum of containers, each init container) plus overhead. */
export function podRequests(pod: Pod): Resources {
  const sum: Resources = {};
  for (const c of pod.spec.containers ?? []) add(sum, containerRequests(c));
  for (const c of pod.spec.initContainers ?? []) {
    for (const [k, v] of Object.entries(containerRequests(c))) sum[k] = Math.max(sum[k] ?? 0, v);
  }
  const overhead = (pod.spec.overhead ?? {}) as Record<string, string>;
  add(sum, Object.fromEntries(Object.entries(overhead).map(([k, q]) => [k, resourceAmount(k, q)])));
  return sum;
}

export const hostPorts = (pod: Pod): string[] =>
  (pod.spec.containers ?? []).flatMap((c) => (c.ports ?? []).filter((p) => p.hostPort).map((p) => `${p.protocol ?? 'TCP'}/${(p as { hostIP?: string }).hostIP || '0.0.0.0'}/${p.hostPort}`));

const isTerminal = (pod: Pod) => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

export function nodeInfos(nodes: readonly Node[], pods: readonly Pod[], assumed: ReadonlyMap<string, { pod: Pod; node: string }>): NodeInfo[] {
  const byName = new Map<string, NodeInfo>();
  for (const node of nodes) {
    const allocatable = Object.fromEntries(Object.entries(node.status?.allocatable ?? node.status?.capacity ?? {}).map(([k, q]) => [k, resourceAmount(k, q)]));
    const name = node.metadata.name ?? '';
    byName.set(name, { node, name, pods: [], requested: { pods: 0 }, allocatable, ports: new Set() });
  }
  const place = (pod: Pod, nodeName: string) => {
    const info = byName.get(nodeName);
    if (!info || isTerminal(pod)) return;
    info.pods.push(pod);
    add(info.requested, { ...podRequests(pod), pods: 1 });
    for (const p of hostPorts(pod)) info.ports.add(p);
  };
  const seen = new Set<string>();
  for (const pod of pods) {
    const uid = pod.metadata.uid ?? '';
    const nodeName = pod.spec.nodeName || assumed.get(uid)?.node;
    if (nodeName) place(pod, nodeName), seen.add(uid);
  }
  for (const [uid, a] of assumed) if (!seen.has(uid)) place(a.pod, a.node);
  return [...byName.values()];
}
