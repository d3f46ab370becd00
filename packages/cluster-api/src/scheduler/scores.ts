/**
 * kube-scheduler's default scoring, the plugins that apply here with their default weights, each
 * normalised to 0-100: NodeResourcesFit LeastAllocated (1) and BalancedAllocation (1) over CPU and
 * memory (pods without requests counted as 100m / 200Mi, as the scheduler's non-zero defaults do),
 * NodeAffinity's preferred terms (2), TaintToleration's PreferNoSchedule taints (3), and spreading
 * (2): PodTopologySpread's default constraint over `kubernetes.io/hostname`, counting the pods of
 * the same owner (or, without one, the same labels) on each node.
 */
import { matchesTerms, toleratedBy, type NodeSelectorTerm, type Taint } from '../api/taints.js';
import type { Pod } from '../node/types.js';
import { podRequests, type NodeInfo } from './node-info.js';

const DefaultMilliCpu = 100;
const DefaultMemory = 200 * 1024 * 1024;

const nonZero = (pod: Pod) => {
  const r = podRequests(pod);
  return { cpu: r.cpu || DefaultMilliCpu, memory: r.memory || DefaultMemory };
};

function fractions(pod: Pod, info: NodeInfo): { cpu: number; memory: number } {
  const own = nonZero(pod);
  const used = info.pods.reduce((sum, p) => {
    const r = nonZero(p);
    return { cpu: sum.cpu + r.cpu, memory: sum.memory + r.memory };
  }, own);
  const frac = (u: number, a: number | undefined) => (a ? Math.min(1, u / a) : 1);
  return { cpu: frac(used.cpu, info.allocatable.cpu), memory: frac(used.memory, info.allocatable.memory) };
}

const leastAllocated = (pod: Pod, info: NodeInfo) => {
  const f = fractions(pod, info);
  return ((1 - f.cpu) * 100 + (1 - f.memory) * 100) / 2;
};

const balanced = (pod: Pod, info: NodeInfo) => {
  const f = fractions(pod, info);
  return (1 - Math.abs(f.cpu - f.memory) / 2) * 100;
};

type Preferred = { weight: number; preference: NodeSelectorTerm }[];

const preferredAffinity = (pod: Pod, info: NodeInfo) => {
  const terms = ((pod.spec.affinity as { nodeAffinity?: { preferredDuringSchedulingIgnoredDuringExecution?: Preferred } } | undefined)?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution) ?? [];
  return terms.reduce((n, t) => n + (matchesTerms([t.preference], info.node.metadata.labels ?? {}, info.name) ? t.weight : 0), 0);
};

const intolerable = (pod: Pod, info: NodeInfo) =>
  ((info.node.spec?.taints ?? []) as Taint[]).filter((t) => t.effect === 'PreferNoSchedule' && !toleratedBy(pod.spec.tolerations, t)).length;

const controllerOf = (p: Pod) => p.metadata.ownerReferences?.find((o) => o.controller)?.uid;

const sameGroup = (pod: Pod) => {
  const owner = controllerOf(pod);
  const labels = JSON.stringify(pod.metadata.labels ?? {});
  return (p: Pod) => p.metadata.namespace === pod.metadata.namespace && (owner ? controllerOf(p) === owner : JSON.stringify(p.metadata.labels ?? {}) === labels);
};

/** Scales raw values to 0-100 (highest best, or lowest best when `reverse`), as the plugins' NormalizeScore. */
function normalise(values: number[], reverse = false): number[] {
  const max = Math.max(0, ...values);
  if (max === 0) return values.map(() => (reverse ? 100 : 0));
  return values.map((v) => (reverse ? 100 - (v * 100) / max : (v * 100) / max));
}

/** The total weighted score of each node, in the order given. */
export function scoreNodes(pod: Pod, nodes: readonly NodeInfo[]): number[] {
  const group = sameGroup(pod);
  const spread = normalise(nodes.map((n) => n.pods.filter(group).length), true);
  const affinity = normalise(nodes.map((n) => preferredAffinity(pod, n)));
  const taints = normalise(nodes.map((n) => intolerable(pod, n)), true);
  return nodes.map((n, i) => leastAllocated(pod, n) + balanced(pod, n) + 2 * affinity[i]! + 3 * taints[i]! + 2 * spread[i]!);
}
