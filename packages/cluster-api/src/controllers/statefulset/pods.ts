/**
 * A StatefulSet's pods and what it reads from them (stateful_set_utils.go): the pod of each ordinal
 * (`web-0`, with its pod-name and pod-index labels, hostname and the set's service as subdomain, its
 * claims from volumeClaimTemplates, and the revision it was made from), and the status counted over
 * them, with a finished rolling update making the update revision the current one.
 */
import type { KubeObject } from '../../api/meta.js';
import { arr, num, obj, spec, status, str, type Obj } from '../../registry/kinds/common.js';
import { omitEmpty } from '../context.js';
import { controllerRef, isAvailable, isReady, phase, podFromTemplate } from '../pods.js';

export const RevisionLabel = 'controller-revision-hash';
export const PodNameLabel = 'statefulset.kubernetes.io/pod-name';
export const PodIndexLabel = 'apps.kubernetes.io/pod-index';

export const startOrdinal = (set: KubeObject): number => num(obj(spec(set).ordinals).start);

/** The ordinal a pod's name gives (`web-3` → 3), or -1 when the name is not the set's. */
export const ordinalOf = (set: KubeObject, pod: KubeObject): number => {
  const prefix = `${set.metadata.name}-`;
  const name = pod.metadata.name ?? '';
  if (!name.startsWith(prefix) || !/^\d+$/.test(name.slice(prefix.length))) return -1;
  return Number(name.slice(prefix.length));
};

export const podRevision = (pod: KubeObject): string => pod.metadata.labels?.[RevisionLabel] ?? '';
export const isCreated = (pod: KubeObject): boolean => phase(pod) !== '';
export const isTerminating = (pod: KubeObject): boolean => Boolean(pod.metadata.deletionTimestamp);
export const isRunningAndReady = (pod: KubeObject): boolean => phase(pod) === 'Running' && isReady(pod);
export const isHealthy = (pod: KubeObject): boolean => isRunningAndReady(pod) && !isTerminating(pod);

/** `<claim>-<set>-<ordinal>`: the PersistentVolumeClaim of a claim template for one pod. */
export const claimName = (claim: Obj, set: KubeObject, ordinal: number): string => `${str(obj(claim.metadata).name)}-${set.metadata.name}-${ordinal}`;

export const claimTemplates = (set: KubeObject): Obj[] => arr(spec(set).volumeClaimTemplates).map(obj);

/** newStatefulSetPod: the pod of `ordinal` from `set`'s template, labelled with `revision`. */
export const statefulPod = (set: KubeObject, ordinal: number, revision: string): KubeObject => {
  const name = `${set.metadata.name}-${ordinal}`;
  const pod = podFromTemplate(obj(spec(set).template), set.metadata.name!, controllerRef(set));
  delete pod.metadata.generateName;
  pod.metadata.name = name;
  pod.metadata.labels = { ...pod.metadata.labels, [PodNameLabel]: name, [PodIndexLabel]: String(ordinal), [RevisionLabel]: revision };
  const s = pod.spec as Obj;
  s.hostname = name;
  if (str(spec(set).serviceName)) s.subdomain = spec(set).serviceName;
  const claims = claimTemplates(set);
  if (claims.length > 0) {
    const names = new Set(claims.map((c) => str(obj(c.metadata).name)));
    const volumes = arr(s.volumes).map(obj).filter((v) => !names.has(str(v.name)));
    for (const c of claims) volumes.push({ name: str(obj(c.metadata).name), persistentVolumeClaim: { claimName: claimName(c, set, ordinal) } });
    s.volumes = volumes;
  }
  return pod;
};

/** The claim a pod of the set needs, as the controller creates it (labels: the set's selector). */
export const statefulClaim = (set: KubeObject, claim: Obj, ordinal: number): KubeObject => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim',
  metadata: {
    name: claimName(claim, set, ordinal), namespace: set.metadata.namespace,
    labels: { ...(obj(obj(claim.metadata).labels) as Record<string, string>), ...(obj(obj(spec(set).selector).matchLabels) as Record<string, string>) },
  },
  spec: structuredClone(obj(claim.spec)),
});

/** The status over the set's pods (computeReplicaStatus, completeRollingUpdate), in Go's field order. */
export const statefulStatus = (set: KubeObject, pods: KubeObject[], current: string, update: string, collisionCount: number, now: number): Obj => {
  const minReady = num(spec(set).minReadySeconds);
  const created = pods.filter(isCreated);
  const live = created.filter((p) => !isTerminating(p));
  const ready = pods.filter(isRunningAndReady);
  const st: Obj = {
    observedGeneration: set.metadata.generation,
    replicas: created.length,
    readyReplicas: ready.length,
    currentReplicas: live.filter((p) => podRevision(p) === current).length,
    updatedReplicas: live.filter((p) => podRevision(p) === update).length,
    currentRevision: current,
    updateRevision: update,
    collisionCount,
    conditions: arr(status(set).conditions),
    availableReplicas: ready.filter((p) => isAvailable(p, minReady, now)).length,
  };
  const rolling = obj(spec(set).updateStrategy).type === 'RollingUpdate';
  if (rolling && st.updatedReplicas === st.replicas && st.readyReplicas === st.replicas) {
    st.currentReplicas = st.updatedReplicas;
    st.currentRevision = update;
  }
  return omitEmpty(st, ['replicas', 'collisionCount', 'availableReplicas']);
};
