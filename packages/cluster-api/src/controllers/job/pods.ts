/**
 * What the Job controller reads and makes (job_controller.go, indexed_job_utils.go): how many pods
 * it wants active, pods made from the template (with the `batch.kubernetes.io/job-tracking`
 * finalizer and, in Indexed mode, their completion index), which finished pods count as succeeded
 * or failed (a pod deleted before it succeeded counts as failed), completed indexes as Kubernetes
 * writes them ("0-2,5"), the Job's conditions, and the pod failure back-off (10 s doubling to 10 min).
 */
import type { KubeObject } from '../../api/meta.js';
import { timestamp } from '../../registry/generic/meta.js';
import { arr, num, obj, spec, str, type Obj } from '../../registry/kinds/common.js';
import { controllerRef, isReady, phase, podFromTemplate } from '../pods.js';

export const TrackingFinalizer = 'batch.kubernetes.io/job-tracking';
export const IndexKey = 'batch.kubernetes.io/job-completion-index';
const BackoffBaseMs = 10_000;
const BackoffMaxMs = 600_000;

export const isIndexed = (job: KubeObject): boolean => spec(job).completionMode === 'Indexed';
export const tracked = (p: KubeObject): boolean => (p.metadata.finalizers ?? []).includes(TrackingFinalizer);
export const indexOf = (p: KubeObject): number => {
  const v = p.metadata.annotations?.[IndexKey] ?? p.metadata.labels?.[IndexKey];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : -1;
};

/** isPodFailed with podReplacementPolicy TerminatingOrFailed: Failed, or deleted before it succeeded. */
export const countsFailed = (p: KubeObject, job: KubeObject): boolean =>
  phase(p) === 'Failed' || (spec(job).podReplacementPolicy !== 'Failed' && Boolean(p.metadata.deletionTimestamp) && phase(p) !== 'Succeeded');
export const countsSucceeded = (p: KubeObject): boolean => phase(p) === 'Succeeded';
export const isActivePod = (p: KubeObject): boolean => !['Succeeded', 'Failed'].includes(phase(p)) && !p.metadata.deletionTimestamp;
export const isTerminatingPod = (p: KubeObject): boolean => !['Succeeded', 'Failed'].includes(phase(p)) && Boolean(p.metadata.deletionTimestamp);
export const readyCount = (pods: KubeObject[]): number => pods.filter(isReady).length;

/** Job conditions carry lastProbeTime too. */
export const jobCondition = (type: string, status: string, reason: string, message: string): Obj => {
  const now = timestamp();
  return { type, status, lastProbeTime: now, lastTransitionTime: now, reason, message };
};

export const hasCondition = (job: KubeObject | Obj, type: string, value = 'True'): boolean =>
  arr(obj('metadata' in job ? (job as KubeObject).status : job).conditions).map(obj).some((c) => c.type === type && c.status === value);

export const isFinished = (job: KubeObject): boolean => hasCondition(job, 'Complete') || hasCondition(job, 'Failed');

/** "0-2,5" from a set of indexes, and back. */
export const formatIndexes = (indexes: Iterable<number>): string => {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j > i ? `${sorted[i]}-${sorted[j]}` : String(sorted[i]));
    i = j;
  }
  return parts.join(',');
};
export const parseIndexes = (text: string): Set<number> => {
  const out = new Set<number>();
  for (const part of text.split(',').filter(Boolean)) {
    const [a, b] = part.split('-').map(Number);
    for (let i = a!; i <= (b ?? a!); i++) out.add(i);
  }
  return out;
};

/** How many pods should be active now (NonIndexed: completions left, at most parallelism). */
export const wantActive = (job: KubeObject, succeeded: number, active: number): number => {
  const parallelism = num(spec(job).parallelism);
  const completions = spec(job).completions;
  if (typeof completions !== 'number') return succeeded > 0 ? active : parallelism;
  return Math.max(0, Math.min(parallelism, completions - succeeded));
};

/** A pod of the job; Indexed: for `index`, as Kubernetes names and labels it, with JOB_COMPLETION_INDEX. */
export const jobPod = (job: KubeObject, index?: number): KubeObject => {
  const pod = podFromTemplate(obj(spec(job).template), job.metadata.name!, controllerRef(job));
  pod.metadata.finalizers = [...(pod.metadata.finalizers ?? []), TrackingFinalizer];
  if (index === undefined) return pod;
  pod.metadata.generateName = `${job.metadata.name}-${index}-`;
  pod.metadata.annotations = { ...pod.metadata.annotations, [IndexKey]: String(index) };
  pod.metadata.labels = { ...pod.metadata.labels, [IndexKey]: String(index) };
  const s = pod.spec as Obj;
  if (!str(s.hostname)) s.hostname = `${job.metadata.name}-${index}`;
  const env = { name: 'JOB_COMPLETION_INDEX', valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${IndexKey}']` } } };
  for (const list of ['initContainers', 'containers']) for (const c of arr(s[list]).map(obj)) c.env = [...arr(c.env), env];
  return pod;
};

/** Restarts of active pods' containers: past backoffLimit for restartPolicy OnFailure (pastBackoffLimitOnFailure). */
export const pastBackoffOnFailure = (job: KubeObject, active: KubeObject[]): boolean => {
  if (obj(obj(spec(job).template).spec).restartPolicy !== 'OnFailure') return false;
  const restarts = active.reduce((n, p) => n + [...arr(obj(p.status).initContainerStatuses), ...arr(obj(p.status).containerStatuses)]
    .reduce<number>((m, c) => m + (Number(obj(c).restartCount) || 0), 0), 0);
  const limit = num(spec(job).backoffLimit);
  return limit === 0 ? restarts > 0 : restarts >= limit;
};

/** The failure back-off of a job: how long after its last failure the next pod waits (0 once a pod succeeded since). */
export class Backoff {
  private readonly records = new Map<string, { failures: number; at: number }>();

  record(uid: string, failed: number, succeeded: number, now: number): void {
    if (succeeded > 0) this.records.delete(uid);
    if (failed === 0) return;
    const r = this.records.get(uid) ?? { failures: 0, at: now };
    this.records.set(uid, { failures: r.failures + failed, at: now });
  }

  remaining(uid: string, now: number): number {
    const r = this.records.get(uid);
    if (!r) return 0;
    const delay = Math.min(BackoffBaseMs * 2 ** (r.failures - 1), BackoffMaxMs);
    return Math.max(0, r.at + delay - now);
  }

  forget(uid: string): void {
    this.records.delete(uid);
  }
}

/** The job's status in Go's field order, with the pointer fields (terminating, ready, uncountedTerminatedPods) always written. */
export const jobStatus = (st: Obj): Obj => {
  const order = ['conditions', 'startTime', 'completionTime', 'active', 'succeeded', 'failed', 'terminating', 'completedIndexes', 'failedIndexes', 'uncountedTerminatedPods', 'ready'];
  const always = new Set(['terminating', 'uncountedTerminatedPods', 'ready']);
  const out: Obj = {};
  for (const k of order) {
    const v = st[k];
    if (v === undefined || v === null) continue;
    if (!always.has(k) && (v === 0 || v === '' || (Array.isArray(v) && v.length === 0))) continue;
    out[k] = v;
  }
  return out;
};
