/**
 * What the workload controllers read from a Pod, as Kubernetes' podutil and controller_utils read it:
 * readiness (the Ready condition), availability (ready for minReadySeconds), activity (not finished,
 * not being deleted), the order in which a controller deletes surplus pods (ActivePodsWithRanks),
 * and a pod made from a template (GetPodFromTemplate).
 */
import type { KubeObject, OwnerReference } from '../api/meta.js';
import { arr, obj, str, type Obj } from '../registry/kinds/common.js';

export const phase = (p: KubeObject): string => str(obj(p.status).phase);
export const nodeName = (p: KubeObject): string => str(obj(p.spec).nodeName);

const readyCondition = (p: KubeObject): Obj | undefined =>
  arr(obj(p.status).conditions).map(obj).find((c) => c.type === 'Ready');

export const isReady = (p: KubeObject): boolean => readyCondition(p)?.status === 'True';

/** When the pod last became ready (ms), or undefined. */
export const readySince = (p: KubeObject): number | undefined => {
  const c = readyCondition(p);
  if (c?.status !== 'True') return undefined;
  const t = Date.parse(str(c.lastTransitionTime));
  return Number.isNaN(t) ? undefined : t;
};

/** podutil.IsPodAvailable: ready for at least minReadySeconds. */
export const isAvailable = (p: KubeObject, minReadySeconds: number, now: number): boolean => {
  if (!isReady(p)) return false;
  if (minReadySeconds <= 0) return true;
  const since = readySince(p);
  return since !== undefined && since + minReadySeconds * 1000 < now;
};

/** Milliseconds until a ready pod becomes available, when it is not yet. */
export const untilAvailable = (p: KubeObject, minReadySeconds: number, now: number): number | undefined => {
  const since = readySince(p);
  if (since === undefined || minReadySeconds <= 0) return undefined;
  const left = since + minReadySeconds * 1000 - now;
  return left >= 0 ? left + 1 : undefined;
};

export const isTerminal = (p: KubeObject): boolean => phase(p) === 'Succeeded' || phase(p) === 'Failed';

/** controller.IsPodActive: not finished and not being deleted. */
export const isActive = (p: KubeObject): boolean => !isTerminal(p) && !p.metadata.deletionTimestamp;

export const restarts = (p: KubeObject): number =>
  arr(obj(p.status).containerStatuses).reduce<number>((n, c) => n + (Number(obj(c).restartCount) || 0), 0);

const PhaseOrder: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };
const created = (p: KubeObject): number => Date.parse(p.metadata.creationTimestamp ?? '') || 0;
const deletionCost = (p: KubeObject): number => Number(p.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost'] ?? 0) || 0;

/**
 * The pods to delete first, first (ActivePodsWithRanks): unscheduled, then pending before running,
 * not ready before ready, lower deletion cost, doubled up on a node, ready for less time, more
 * restarts, newer. `related` are the pods counted for doubling up (the owner's, across revisions).
 */
export const deletionOrder = (pods: KubeObject[], related: KubeObject[] = pods): KubeObject[] => {
  const onNode = new Map<string, number>();
  for (const p of related) if (nodeName(p) && isActive(p)) onNode.set(nodeName(p), (onNode.get(nodeName(p)) ?? 0) + 1);
  const rank = (p: KubeObject) => (nodeName(p) ? (onNode.get(nodeName(p)) ?? 0) : 0);
  const compare = (a: KubeObject, b: KubeObject): number => {
    if (!nodeName(a) !== !nodeName(b)) return nodeName(a) ? 1 : -1;
    const phases = (PhaseOrder[phase(a)] ?? 0) - (PhaseOrder[phase(b)] ?? 0);
    if (phases) return phases;
    if (isReady(a) !== isReady(b)) return isReady(a) ? 1 : -1;
    if (deletionCost(a) !== deletionCost(b)) return deletionCost(a) - deletionCost(b);
    if (rank(a) !== rank(b)) return rank(b) - rank(a);
    const [ra, rb] = [readySince(a) ?? 0, readySince(b) ?? 0];
    if (ra !== rb) return rb - ra;
    if (restarts(a) !== restarts(b)) return restarts(b) - restarts(a);
    return created(b) - created(a);
  };
  return [...pods].sort(compare);
};

/** metav1.NewControllerRef. */
export const controllerRef = (owner: KubeObject): OwnerReference => ({
  apiVersion: owner.apiVersion,
  kind: owner.kind,
  name: owner.metadata.name!,
  uid: owner.metadata.uid!,
  controller: true,
  blockOwnerDeletion: true,
});

/** GetPodFromTemplate: the template's labels, annotations and finalizers, `<owner>-` as generateName, owned by `ref`. */
export const podFromTemplate = (template: Obj, ownerName: string, ref?: OwnerReference): KubeObject => {
  const meta = obj(template.metadata);
  const pod: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${ownerName}-`,
      labels: { ...(obj(meta.labels) as Record<string, string>) },
      annotations: { ...(obj(meta.annotations) as Record<string, string>) },
      ...(arr(meta.finalizers).length > 0 && { finalizers: arr(meta.finalizers).map(String) }),
      ...(ref && { ownerReferences: [ref] }),
    },
    spec: structuredClone(obj(template.spec)),
  };
  if (Object.keys(pod.metadata.annotations!).length === 0) delete pod.metadata.annotations;
  return pod;
};
