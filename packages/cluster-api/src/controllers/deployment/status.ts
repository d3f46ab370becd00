/**
 * The Deployment's status as the deployment controller computes it (sync.go calculateStatus,
 * progress.go syncRolloutStatus, sync.go checkPausedConditions): counts summed over its
 * ReplicaSets, `Available` from maxUnavailable, `Progressing` moved on by progress and turned to
 * `False`/`ProgressDeadlineExceeded` when none was made for progressDeadlineSeconds, a
 * ReplicaSet's `ReplicaFailure` carried over, and paused/resumed as `Progressing: Unknown`.
 */
import type { KubeObject } from '../../api/meta.js';
import { arr, num, obj, spec, status, str, type Obj } from '../../registry/kinds/common.js';
import { omitEmpty } from '../context.js';
import {
  actualReplicas, availableReplicas, condition, hasProgressDeadline, isComplete, maxUnavailable, newCondition, readyReplicas, Reasons,
  removeCondition, replicas, setCondition,
} from './util.js';

/** calculateStatus. */
export const calculateStatus = (all: KubeObject[], newRS: KubeObject | undefined, d: KubeObject): Obj => {
  const available = availableReplicas(all);
  const total = all.reduce((n, rs) => n + replicas(rs), 0);
  const st: Obj = {
    observedGeneration: d.metadata.generation,
    replicas: actualReplicas(all),
    updatedReplicas: newRS ? actualReplicas([newRS]) : 0,
    readyReplicas: readyReplicas(all),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, total - available),
    conditions: arr(status(d).conditions).map(obj),
    collisionCount: status(d).collisionCount,
  };
  if (available >= replicas(d) - maxUnavailable(d)) {
    setCondition(st, newCondition('Available', 'True', Reasons.MinimumReplicasAvailable, 'Deployment has minimum availability.'));
  } else {
    setCondition(st, newCondition('Available', 'False', Reasons.MinimumReplicasUnavailable, 'Deployment does not have minimum availability.'));
  }
  return omitEmpty(st);
};

/** DeploymentProgressing: more updated, ready or available replicas, or fewer old ones, than the status held. */
const progressing = (d: KubeObject, next: Obj): boolean => {
  const old = status(d);
  const oldOld = num(old.replicas) - num(old.updatedReplicas);
  const newOld = num(next.replicas) - num(next.updatedReplicas);
  return num(next.updatedReplicas) > num(old.updatedReplicas) || num(next.readyReplicas) > num(old.readyReplicas) ||
    oldOld > newOld || num(next.availableReplicas) > num(old.availableReplicas);
};

/** DeploymentTimedOut: the Progressing condition has not moved for progressDeadlineSeconds. */
const timedOut = (d: KubeObject, next: Obj, now: number): boolean => {
  const c = condition(next, 'Progressing');
  if (!hasProgressDeadline(d) || !c || c.reason === Reasons.NewRSAvailable) return false;
  if (c.reason === Reasons.TimedOut) return true;
  return Date.parse(str(c.lastUpdateTime)) + num(spec(d).progressDeadlineSeconds) * 1000 < now;
};

/** The ReplicaSets' ReplicaFailure conditions, the new one's first (getReplicaFailures). */
const replicaFailure = (all: KubeObject[], newRS: KubeObject | undefined): Obj | undefined => {
  for (const rs of newRS ? [newRS, ...all] : all) {
    const c = condition(status(rs), 'ReplicaFailure');
    if (c) return { type: 'ReplicaFailure', status: c.status, lastUpdateTime: c.lastTransitionTime, lastTransitionTime: c.lastTransitionTime, reason: c.reason, message: c.message };
  }
  return undefined;
};

/**
 * syncRolloutStatus: the status with progress judged; `requeueAfter` is when an unfinished rollout
 * that made no progress must be looked at again to tell whether it timed out (requeueStuckDeployment).
 */
export const rolloutStatus = (all: KubeObject[], newRS: KubeObject | undefined, d: KubeObject, now = Date.now()): { next: Obj; requeueAfter?: number } => {
  const next = calculateStatus(all, newRS, d);
  if (!hasProgressDeadline(d)) removeCondition(next, 'Progressing');
  const current = condition(status(d), 'Progressing');
  const done = num(next.replicas) === num(next.updatedReplicas) && current?.reason === Reasons.NewRSAvailable;
  if (hasProgressDeadline(d) && !done) {
    const rsName = newRS?.metadata.name;
    if (isComplete(d, next)) {
      const msg = rsName ? `ReplicaSet "${rsName}" has successfully progressed.` : 'Deployment has successfully progressed.';
      setCondition(next, newCondition('Progressing', 'True', Reasons.NewRSAvailable, msg));
    } else if (progressing(d, next)) {
      const msg = rsName ? `ReplicaSet "${rsName}" is progressing.` : 'Deployment is progressing.';
      const c = newCondition('Progressing', 'True', Reasons.ReplicaSetUpdated, msg);
      if (current?.status === 'True') c.lastTransitionTime = current.lastTransitionTime;
      removeCondition(next, 'Progressing');
      setCondition(next, c);
    } else if (timedOut(d, next, now)) {
      const msg = rsName ? `ReplicaSet "${rsName}" has timed out progressing.` : 'Deployment has timed out progressing.';
      setCondition(next, newCondition('Progressing', 'False', Reasons.TimedOut, msg));
    }
  }
  const failure = replicaFailure(all, newRS);
  if (failure) setCondition(next, failure);
  else removeCondition(next, 'ReplicaFailure');
  const result = omitEmpty(next);
  if (!hasProgressDeadline(d) || !current || isComplete(d, result) || current.reason === Reasons.TimedOut) return { next: result };
  const after = Date.parse(str(current.lastUpdateTime)) + num(spec(d).progressDeadlineSeconds) * 1000 - now;
  return { next: result, requeueAfter: Math.max(after, 1000) };
};

/** checkPausedConditions: the status to write when pausing or resuming changes it, else undefined. */
export const pausedConditions = (d: KubeObject): Obj | undefined => {
  if (!hasProgressDeadline(d)) return undefined;
  const c = condition(status(d), 'Progressing');
  if (c?.reason === Reasons.TimedOut) return undefined;
  const pausedNow = c?.reason === Reasons.Paused;
  const paused = spec(d).paused === true;
  if (paused === pausedNow || (!paused && !pausedNow)) return undefined;
  const next = structuredClone(status(d));
  setCondition(next, paused
    ? newCondition('Progressing', 'Unknown', Reasons.Paused, 'Deployment is paused')
    : newCondition('Progressing', 'Unknown', Reasons.Resumed, 'Deployment is resumed'));
  return next;
};
