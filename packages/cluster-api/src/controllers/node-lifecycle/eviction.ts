/**
 * What the node lifecycle controller does to the pods of an unhealthy node: mark them not Ready
 * (MarkPodsNotReady, so that endpoints drop them at once) and evict them on the NoExecute taint
 * manager's schedule: at once without a matching toleration, else the smallest tolerationSeconds
 * after the taint's timeAdded (a toleration without tolerationSeconds: never).
 */
import type { KubeObject } from '../../api/meta.js';
import { tolerates, type Taint, type Toleration } from '../../api/taints.js';
import type { EventRecorder } from '@func/kube-client';
import type { ResourceClient } from '../../client/interface.js';
import { ignoreRaces, inNamespace, SystemContext } from '../shared.js';

type PodObj = KubeObject & { spec?: { nodeName?: string; tolerations?: Toleration[] }; status?: { conditions?: { type: string; status: string; lastTransitionTime?: string }[] } };

const onNode = async (pods: ResourceClient, node: string): Promise<PodObj[]> =>
  (await pods.list(SystemContext, { fieldSelector: `spec.nodeName=${node}` })).items as PodObj[];

const stamp = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

const involved = (p: PodObj) => ({ kind: 'Pod', apiVersion: 'v1', name: p.metadata.name!, namespace: p.metadata.namespace, uid: p.metadata.uid });

export async function markPodsNotReady(pods: ResourceClient, node: string, events: EventRecorder): Promise<void> {
  for (const pod of await onNode(pods, node)) {
    const conditions = pod.status?.conditions ?? [];
    if (!conditions.some((c) => c.type === 'Ready' && c.status === 'True')) continue;
    const next = conditions.map((c) => (c.type === 'Ready' ? { ...c, status: 'False', lastTransitionTime: stamp() } : c));
    await pods.update(inNamespace(pod.metadata.namespace), pod.metadata.name!, { ...pod, status: { ...pod.status, conditions: next } }, 'status').catch(ignoreRaces);
    events.event(involved(pod), 'Warning', 'NodeNotReady', 'Node is not ready');
  }
}

/** When `pod` must go given the node's NoExecute taints: now, later (ms since the epoch), or never. */
export function evictionTime(pod: PodObj, taints: readonly Taint[]): number {
  let at = Infinity;
  for (const taint of taints) {
    const matching = (pod.spec?.tolerations ?? []).filter((t) => tolerates(t, taint));
    if (matching.length === 0) return Date.now();
    if (matching.some((t) => t.tolerationSeconds === undefined || t.tolerationSeconds === null)) continue;
    const seconds = Math.min(...matching.map((t) => t.tolerationSeconds!));
    at = Math.min(at, (Date.parse(taint.timeAdded ?? '') || Date.now()) + Math.max(0, seconds) * 1000);
  }
  return at;
}

/** Evicts what is due on `node`; returns when the next eviction there is due (Infinity: none). */
export async function evictionDue(pods: ResourceClient, node: string, taints: readonly Taint[], events: EventRecorder): Promise<number> {
  if (taints.length === 0) return Infinity;
  let next = Infinity;
  for (const pod of await onNode(pods, node)) {
    if (pod.metadata.deletionTimestamp) continue;
    const at = evictionTime(pod, taints);
    if (at > Date.now()) {
      next = Math.min(next, at);
      continue;
    }
    const ctx = inNamespace(pod.metadata.namespace);
    const disruption = { type: 'DisruptionTarget', status: 'True', lastTransitionTime: stamp(), reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint' };
    const conditions = [...(pod.status?.conditions ?? []).filter((c) => c.type !== 'DisruptionTarget'), disruption];
    await pods.update(ctx, pod.metadata.name!, { ...pod, status: { ...pod.status, conditions } }, 'status').catch(ignoreRaces);
    events.event(involved(pod), 'Normal', 'TaintManagerEviction', `Marking for deletion Pod ${pod.metadata.namespace}/${pod.metadata.name}`);
    await pods.delete(ctx, pod.metadata.name!, { preconditions: { uid: pod.metadata.uid } }).catch(ignoreRaces);
  }
  return next;
}
