/**
 * kube-scheduler's filter plugins that apply here, in its order; the first that refuses a node
 * decides that node's reasons, worded as kube-scheduler words them. `resolvable` says whether
 * preemption could help (Unschedulable) or not (UnschedulableAndUnresolvable), which is what the
 * "preemption: …" half of the FailedScheduling message reports.
 */
import { describeTaint, matchesTerms, toleratedBy, type NodeSelectorTerm, type Taint } from '../api/taints.js';
import type { Pod } from '../node/types.js';
import { hostPorts, podRequests, type NodeInfo } from './node-info.js';

export interface Refusal {
  reasons: string[];
  resolvable: boolean;
}

type Filter = (pod: Pod, info: NodeInfo) => Refusal | undefined;

const unresolvable = (reason: string): Refusal => ({ reasons: [reason], resolvable: false });

const nodeUnschedulable: Filter = (pod, info) => {
  if (!info.node.spec?.unschedulable) return undefined;
  const taint = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };
  return toleratedBy(pod.spec.tolerations, taint) ? undefined : unresolvable('node(s) were unschedulable');
};

const taintToleration: Filter = (pod, info) => {
  const taints = (info.node.spec?.taints ?? []) as Taint[];
  const untolerated = taints.find((t) => (t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !toleratedBy(pod.spec.tolerations, t));
  return untolerated ? unresolvable(`node(s) had untolerated taint ${describeTaint(untolerated)}`) : undefined;
};

const requiredTerms = (pod: Pod): NodeSelectorTerm[] | undefined => {
  const affinity = pod.spec.affinity as { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] } } } | undefined;
  return affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
};

const nodeAffinity: Filter = (pod, info) => {
  const labels = info.node.metadata.labels ?? {};
  const selector = pod.spec.nodeSelector ?? {};
  const terms = requiredTerms(pod);
  const ok = Object.entries(selector).every(([k, v]) => labels[k] === v) && (!terms || matchesTerms(terms, labels, info.name));
  return ok ? undefined : unresolvable("node(s) didn't match Pod's node affinity/selector");
};

const nodePorts: Filter = (pod, info) => {
  const conflict = hostPorts(pod).some((p) => {
    const [proto, ip, port] = p.split('/');
    return info.ports.has(p) || [...info.ports].some((q) => {
      const [qp, qip, qport] = q.split('/');
      return qp === proto && qport === port && (ip === '0.0.0.0' || qip === '0.0.0.0');
    });
  });
  return conflict ? unresolvable("node(s) didn't have free ports for the requested pod ports") : undefined;
};

const nodeResourcesFit: Filter = (pod, info) => {
  const reasons: string[] = [];
  if ((info.requested.pods ?? 0) + 1 > (info.allocatable.pods ?? 0)) reasons.push('Too many pods');
  const wanted = podRequests(pod);
  for (const [resource, amount] of Object.entries(wanted)) {
    if (amount <= 0) continue;
    if ((info.requested[resource] ?? 0) + amount > (info.allocatable[resource] ?? 0)) reasons.push(`Insufficient ${resource}`);
  }
  return reasons.length ? { reasons, resolvable: true } : undefined;
};

export const Filters: readonly Filter[] = [nodeUnschedulable, taintToleration, nodeAffinity, nodePorts, nodeResourcesFit];

export function refusal(pod: Pod, info: NodeInfo): Refusal | undefined {
  for (const f of Filters) {
    const r = f(pod, info);
    if (r) return r;
  }
  return undefined;
}

/**
 * The FitError message: `0/N nodes are available: <count> <reason>, ….` with the reasons sorted,
 * then the default preemption plugin's verdict on the same nodes.
 */
export function fitErrorMessage(total: number, refusals: readonly Refusal[]): string {
  if (total === 0) return 'no nodes available to schedule pods';
  const counts = new Map<string, number>();
  for (const r of refusals) for (const reason of r.reasons) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  const reasons = [...counts].map(([reason, n]) => `${n} ${reason}`).sort();
  const victims = refusals.filter((r) => r.resolvable).length;
  const helpless = refusals.length - victims;
  const preemption = [...(victims ? [`${victims} No preemption victims found for incoming pod`] : []), ...(helpless ? [`${helpless} Preemption is not helpful for scheduling`] : [])].sort();
  return `0/${total} nodes are available: ${reasons.join(', ')}. preemption: 0/${total} nodes are available: ${preemption.join(', ')}.`;
}
