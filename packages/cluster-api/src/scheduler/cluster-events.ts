/**
 * Which changes can make an unschedulable pod fit, as kube-scheduler's event handlers tell them apart:
 * a Node added, or updated in what the filters read (allocatable, labels, taints, spec.unschedulable,
 * conditions other than their heartbeat times; a status heartbeat alone is not an event); an assigned
 * pod deleted or terminated (room freed); and a change to the pending pod itself beyond its status
 * and bookkeeping (isPodUpdated), so the PodScheduled condition the scheduler writes does not send
 * the pod it is about back to the queue.
 */
import type { Node, Pod } from '../node/types.js';

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

const conditionsWithoutHeartbeats = (n: Node) =>
  ((n.status?.conditions ?? []) as { type?: string; status?: string; reason?: string }[]).map((c) => [c.type, c.status, c.reason]);

export function nodeUpdateMatters(old: Node, node: Node): boolean {
  return !same(old.status?.allocatable ?? old.status?.capacity, node.status?.allocatable ?? node.status?.capacity)
    || !same(old.metadata.labels, node.metadata.labels)
    || !same(old.spec?.taints, node.spec?.taints)
    || !same(old.spec?.unschedulable, node.spec?.unschedulable)
    || !same(conditionsWithoutHeartbeats(old), conditionsWithoutHeartbeats(node));
}

const terminal = (p: Pod) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

/** An assigned pod that stopped holding its node's room. */
export const podFreedRoom = (old: Pod, pod: Pod): boolean => !!pod.spec.nodeName && !terminal(old) && terminal(pod);

/** isPodUpdated: anything but resourceVersion, generation, managedFields, finalizers and status. */
export function podUpdateMatters(old: Pod, pod: Pod): boolean {
  const strip = (p: Pod) => {
    const { resourceVersion: _rv, generation: _g, managedFields: _mf, finalizers: _f, ...metadata } = p.metadata as Pod['metadata'] & Record<string, unknown>;
    return { metadata, spec: p.spec };
  };
  return !same(strip(old), strip(pod));
}
