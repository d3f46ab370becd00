/**
 * deployment/util (deployment_util.go): revisions and the annotations that carry them, the rolling
 * update fenceposts (maxSurge rounded up, maxUnavailable down, never both zero), the replica
 * counts summed over ReplicaSets, the Deployment's conditions with their reasons, and which
 * ReplicaSet is the new one (the template equal to the Deployment's but for pod-template-hash).
 */
import type { KubeObject } from '../../api/meta.js';
import { timestamp } from '../../registry/generic/meta.js';
import { arr, num, obj, spec, status, str, type Obj } from '../../registry/kinds/common.js';
import { scaledValue } from '../../registry/kinds/workload.js';
import { semanticEqual } from '../hash.js';

export const RevisionAnnotation = 'deployment.kubernetes.io/revision';
export const RevisionHistoryAnnotation = 'deployment.kubernetes.io/revision-history';
export const DesiredReplicasAnnotation = 'deployment.kubernetes.io/desired-replicas';
export const MaxReplicasAnnotation = 'deployment.kubernetes.io/max-replicas';
export const RollbackToAnnotation = 'deprecated.deployment.rollback.to';
export const HashLabel = 'pod-template-hash';
const MaxRevisionHistoryChars = 2000;

export const Reasons = {
  ReplicaSetUpdated: 'ReplicaSetUpdated',
  FailedRSCreate: 'ReplicaSetCreateError',
  NewReplicaSet: 'NewReplicaSetCreated',
  FoundNewRS: 'FoundNewReplicaSet',
  NewRSAvailable: 'NewReplicaSetAvailable',
  TimedOut: 'ProgressDeadlineExceeded',
  Paused: 'DeploymentPaused',
  Resumed: 'DeploymentResumed',
  MinimumReplicasAvailable: 'MinimumReplicasAvailable',
  MinimumReplicasUnavailable: 'MinimumReplicasUnavailable',
  RollbackRevisionNotFound: 'DeploymentRollbackRevisionNotFound',
  RollbackTemplateUnchanged: 'DeploymentRollbackTemplateUnchanged',
  RollbackDone: 'DeploymentRollback',
} as const;

const SkippedAnnotations = new Set(['kubectl.kubernetes.io/last-applied-configuration', RevisionAnnotation, RevisionHistoryAnnotation,
  DesiredReplicasAnnotation, MaxReplicasAnnotation, RollbackToAnnotation]);

export const replicas = (o: KubeObject): number => num(spec(o).replicas);
export const revision = (o: KubeObject): number => Number(o.metadata.annotations?.[RevisionAnnotation] ?? 0) || 0;
export const maxRevision = (sets: KubeObject[]): number => Math.max(0, ...sets.map(revision));
/** The revision before the newest one (LastRevision), for a rollback to revision 0. */
export const lastRevision = (sets: KubeObject[]): number => [...new Set(sets.map(revision))].sort((a, b) => b - a)[1] ?? 0;

const isRolling = (d: KubeObject): boolean => obj(spec(d).strategy).type !== 'Recreate';
const rolling = (d: KubeObject): Obj => obj(obj(spec(d).strategy).rollingUpdate);

/** ResolveFenceposts: [maxSurge, maxUnavailable] for the desired count. */
const fenceposts = (d: KubeObject): [number, number] => {
  const desired = replicas(d);
  const surge = scaledValue(rolling(d).maxSurge ?? 0, desired, true);
  const unavailable = scaledValue(rolling(d).maxUnavailable ?? 0, desired, false);
  return surge === 0 && unavailable === 0 ? [0, 1] : [surge, unavailable];
};

export const maxSurge = (d: KubeObject): number => (isRolling(d) ? fenceposts(d)[0] : 0);
export const maxUnavailable = (d: KubeObject): number => {
  if (!isRolling(d) || replicas(d) === 0) return 0;
  return Math.min(fenceposts(d)[1], replicas(d));
};

export const specReplicas = (sets: KubeObject[]): number => sets.reduce((n, rs) => n + replicas(rs), 0);
const statusSum = (field: string) => (sets: KubeObject[]): number => sets.reduce((n, rs) => n + num(status(rs)[field]), 0);
export const actualReplicas = statusSum('replicas');
export const readyReplicas = statusSum('readyReplicas');
export const availableReplicas = statusSum('availableReplicas');
/**
 * Available replicas a rolling update may count on before scaling down: never more than the
 * ReplicaSet is now sized for, since its status may not yet show the pods a smaller size just removed.
 */
export const countedAvailable = (sets: KubeObject[]): number => sets.reduce((n, rs) => n + Math.min(num(status(rs).availableReplicas), replicas(rs)), 0);
export const active = (sets: KubeObject[]): KubeObject[] => sets.filter((rs) => replicas(rs) > 0);

export const withoutHash = (template: unknown): Obj => {
  const t = structuredClone(obj(template));
  const labels = obj(obj(t.metadata).labels);
  delete labels[HashLabel];
  return t;
};

/** EqualIgnoreHash of the two pod templates. */
export const sameTemplate = (a: unknown, b: unknown): boolean => semanticEqual(withoutHash(a), withoutHash(b));

const created = (o: KubeObject): number => Date.parse(o.metadata.creationTimestamp ?? '') || 0;
/** ReplicaSetsByCreationTimestamp: oldest first, then by name. */
export const byCreation = (a: KubeObject, b: KubeObject): number => created(a) - created(b) || (a.metadata.name! < b.metadata.name! ? -1 : 1);

/** FindNewReplicaSet: the oldest ReplicaSet whose template is the Deployment's. */
export const findNew = (d: KubeObject, sets: KubeObject[]): KubeObject | undefined =>
  [...sets].sort(byCreation).find((rs) => sameTemplate(spec(rs).template, spec(d).template));

export const hasProgressDeadline = (d: KubeObject): boolean => typeof spec(d).progressDeadlineSeconds === 'number' && spec(d).progressDeadlineSeconds !== 2147483647;

export const condition = (st: Obj, type: string): Obj | undefined => arr(st.conditions).map(obj).find((c) => c.type === type);

export const newCondition = (type: string, status: string, reason: string, message: string): Obj => {
  const now = timestamp();
  return { type, status, lastUpdateTime: now, lastTransitionTime: now, reason, message };
};

/** SetDeploymentCondition: a condition of the same status and reason is left as it is; a changed one goes last. */
export const setCondition = (st: Obj, c: Obj): void => {
  const current = condition(st, str(c.type));
  if (current && current.status === c.status && current.reason === c.reason) return;
  const next = current && current.status === c.status ? { ...c, lastTransitionTime: current.lastTransitionTime } : c;
  st.conditions = [...arr(st.conditions).map(obj).filter((x) => x.type !== c.type), next];
};

export const removeCondition = (st: Obj, type: string): void => {
  st.conditions = arr(st.conditions).map(obj).filter((x) => x.type !== type);
};

/** The annotations a ReplicaSet takes from its Deployment (copyDeploymentAnnotationsToReplicaSet); true when any changed. */
const copyAnnotations = (d: KubeObject, target: Record<string, string>): boolean => {
  let changed = false;
  for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) {
    if (SkippedAnnotations.has(k) || target[k] === v) continue;
    target[k] = v;
    changed = true;
  }
  return changed;
};

/** SetReplicasAnnotations: desired and max replicas as the ReplicaSet was last scaled for. */
export const setReplicasAnnotations = (annotations: Record<string, string>, d: KubeObject): boolean => {
  const [desired, max] = [String(replicas(d)), String(replicas(d) + maxSurge(d))];
  if (annotations[DesiredReplicasAnnotation] === desired && annotations[MaxReplicasAnnotation] === max) return false;
  annotations[DesiredReplicasAnnotation] = desired;
  annotations[MaxReplicasAnnotation] = max;
  return true;
};

/**
 * SetNewReplicaSetAnnotations: the Deployment's annotations, the new revision (an older revision
 * it had is kept in revision-history, at most 2000 characters of it), and for a new ReplicaSet the
 * replica annotations. True when any changed.
 */
export const setNewReplicaSetAnnotations = (d: KubeObject, annotations: Record<string, string>, newRevision: number, exists: boolean): boolean => {
  let changed = copyAnnotations(d, annotations);
  const had = annotations[RevisionAnnotation];
  const old = had === undefined ? 0 : Number(had);
  if (Number.isNaN(old)) return changed;
  if (old < newRevision) {
    annotations[RevisionAnnotation] = String(newRevision);
    changed = true;
    if (had !== undefined) {
      const history = (annotations[RevisionHistoryAnnotation] ?? '').split(',').filter(Boolean);
      history.push(had);
      while (history.join(',').length > MaxRevisionHistoryChars) history.shift();
      annotations[RevisionHistoryAnnotation] = history.join(',');
    }
  }
  if (!exists && setReplicasAnnotations(annotations, d)) changed = true;
  return changed;
};

/** SetDeploymentAnnotationsTo: a rollback takes the ReplicaSet's annotations but the skipped ones. */
export const annotationsFrom = (d: KubeObject, rs: KubeObject): Record<string, string> => {
  const kept = Object.fromEntries(Object.entries(d.metadata.annotations ?? {}).filter(([k]) => SkippedAnnotations.has(k)));
  for (const [k, v] of Object.entries(rs.metadata.annotations ?? {})) if (!SkippedAnnotations.has(k)) kept[k] = v;
  return kept;
};

/** DeploymentComplete: every replica updated and available, and the newest spec observed. */
export const isComplete = (d: KubeObject, st: Obj): boolean =>
  num(st.updatedReplicas) === replicas(d) && num(st.replicas) === replicas(d) && num(st.availableReplicas) === replicas(d) &&
  num(st.observedGeneration) >= num(d.metadata.generation);
