/**
 * Which nodes a DaemonSet's pod belongs on (daemon_controller.go NodeShouldRunDaemonPod and
 * daemon/util): the template's nodeName, nodeSelector and required node affinity must fit the node;
 * a taint the pod does not tolerate keeps new pods off (NoSchedule) or removes running ones too
 * (NoExecute). Daemon pods tolerate what Kubernetes adds to them (not-ready, unreachable, pressure,
 * unschedulable), so a node going NotReady keeps its daemon pods, as on Kubernetes. A pod is pinned
 * to its node by node affinity on `metadata.name`, for the scheduler to bind.
 */
import type { KubeObject } from '../../api/meta.js';
import { arr, obj, spec, str, type Obj } from '../../registry/kinds/common.js';

/** AddOrUpdateDaemonPodTolerations. */
const DaemonTolerations: Obj[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];
const HostNetworkToleration: Obj = { key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' };

/** Toleration.ToleratesTaint. */
export const tolerates = (t: Obj, taint: Obj): boolean => {
  if (str(t.effect) && t.effect !== taint.effect) return false;
  if (str(t.key) && t.key !== taint.key) return false;
  if (t.operator === 'Exists') return true;
  return (t.operator === undefined || t.operator === '' || t.operator === 'Equal') && str(t.value) === str(taint.value);
};

/** The pod spec's tolerations with the daemon ones added (an equal one is not added twice). */
export const daemonTolerations = (podSpec: Obj): Obj[] => {
  const have = arr(podSpec.tolerations).map(obj);
  const add = [...DaemonTolerations, ...(podSpec.hostNetwork === true ? [HostNetworkToleration] : [])];
  return [...have, ...add.filter((a) => !have.some((h) => h.key === a.key && h.effect === a.effect && h.operator === a.operator))];
};

const matchesRequirement = (req: Obj, value: string | undefined): boolean => {
  const values = arr(req.values).map(String);
  switch (req.operator) {
    case 'In': return value !== undefined && values.includes(value);
    case 'NotIn': return value === undefined || !values.includes(value);
    case 'Exists': return value !== undefined;
    case 'DoesNotExist': return value === undefined;
    case 'Gt': return value !== undefined && Number(value) > Number(values[0]);
    case 'Lt': return value !== undefined && Number(value) < Number(values[0]);
    default: return false;
  }
};

/** A NodeSelectorTerm: every label expression and every field expression (only metadata.name). */
const termMatches = (term: Obj, node: KubeObject): boolean => {
  const labels = node.metadata.labels ?? {};
  const exprs = arr(term.matchExpressions).map(obj);
  const fields = arr(term.matchFields).map(obj);
  if (exprs.length === 0 && fields.length === 0) return false;
  return exprs.every((e) => matchesRequirement(e, labels[str(e.key)])) &&
    fields.every((f) => str(f.key) === 'metadata.name' && matchesRequirement(f, node.metadata.name));
};

/** nodeSelector and requiredDuringSchedulingIgnoredDuringExecution. */
export const fitsNode = (podSpec: Obj, node: KubeObject): boolean => {
  const labels = node.metadata.labels ?? {};
  if (!Object.entries(obj(podSpec.nodeSelector)).every(([k, v]) => labels[k] === v)) return false;
  const required = obj(obj(obj(podSpec.affinity).nodeAffinity).requiredDuringSchedulingIgnoredDuringExecution);
  const terms = arr(required.nodeSelectorTerms).map(obj);
  return terms.length === 0 || terms.some((t) => termMatches(t, node));
};

/** NodeShouldRunDaemonPod: whether to place a pod there, and whether one there may stay. */
export const shouldRun = (ds: KubeObject, node: KubeObject): { run: boolean; keep: boolean } => {
  const podSpec = obj(obj(spec(ds).template).spec);
  if (str(podSpec.nodeName) && podSpec.nodeName !== node.metadata.name) return { run: false, keep: false };
  if (!fitsNode(podSpec, node)) return { run: false, keep: false };
  const tolerations = daemonTolerations(podSpec);
  const untolerated = arr(obj(node.spec).taints).map(obj).filter((taint) =>
    (taint.effect === 'NoSchedule' || taint.effect === 'NoExecute') && !tolerations.some((t) => tolerates(t, taint)));
  if (untolerated.some((t) => t.effect === 'NoExecute')) return { run: false, keep: false };
  if (untolerated.length > 0) return { run: false, keep: true };
  return { run: true, keep: true };
};

/** GetTargetNodeName: the node a daemon pod is on, or pinned to. */
export const targetNode = (pod: KubeObject): string => {
  const name = str(obj(pod.spec).nodeName);
  if (name) return name;
  const terms = arr(obj(obj(obj(obj(obj(pod.spec).affinity).nodeAffinity).requiredDuringSchedulingIgnoredDuringExecution)).nodeSelectorTerms).map(obj);
  for (const t of terms) for (const f of arr(t.matchFields).map(obj)) if (f.key === 'metadata.name' && f.operator === 'In') return String(arr(f.values)[0] ?? '');
  return '';
};

/** ReplaceDaemonSetPodNodeNameNodeAffinity: the pod pinned to `node` (other required terms replaced, as Kubernetes does). */
export const pinTo = (podSpec: Obj, node: string): void => {
  const affinity = obj((podSpec.affinity ??= {}));
  const nodeAffinity = obj((affinity.nodeAffinity ??= {}));
  nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = {
    nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }],
  };
};
