/**
 * The Job controller (job_controller.go), with finalizer tracking: every pod it makes carries
 * `batch.kubernetes.io/job-tracking`; a finished pod is first listed in
 * `status.uncountedTerminatedPods`, then freed of the finalizer, then counted in succeeded/failed
 * (and completedIndexes), so a pod is counted once even across restarts. Then: suspended → no
 * pods, `Suspended`; failed past backoffLimit (or OnFailure restarts past it) or active past
 * activeDeadlineSeconds → `FailureTarget`, active pods deleted, then `Failed`; enough completions →
 * `SuccessCriteriaMet`, then `Complete` with completionTime; otherwise pods created or deleted
 * towards parallelism, new ones waiting out the failure back-off. Orphaned pods lose the finalizer.
 */
import type { KubeObject } from '../../api/meta.js';
import { timestamp } from '../../registry/generic/meta.js';
import { arr, num, obj, spec, status, str, type Obj } from '../../registry/kinds/common.js';
import { selectorMatches } from '../../registry/kinds/label-selector.js';
import { claim } from '../claim.js';
import { objectKey, served, slowStartBatch, splitKey, writeStatus, type ControllerContext, type Served } from '../context.js';
import { keyed, requeueAfter, type Result } from '../reconciler.js';
import type { EventRecorder } from '@func/kube-client';
import {
  Backoff, countsFailed, countsSucceeded, formatIndexes, hasCondition, indexOf, isActivePod, isFinished, isIndexed, isTerminatingPod, jobCondition, jobPod, jobStatus,
  parseIndexes, pastBackoffOnFailure, readyCount, tracked, TrackingFinalizer, wantActive,
} from './pods.js';
import { ignoreRaces, inNamespace, type Controller } from '../shared.js';
import { enqueueOwners, resolveOwner } from '../owners.js';
import { PodControl } from '../pod-control.js';
import { deletionOrder } from '../pods.js';
import { WorkQueue } from '../queue.js';

const Kind = { group: 'batch', kind: 'Job' };
const MaxPerSync = 500;
const OrphanPrefix = 'pod:';

interface Env {
  jobs: Served;
  pods: Served;
  control: PodControl;
  recorder: EventRecorder;
  backoff: Backoff;
}

const dropFinalizer = async (pods: Served, p: KubeObject): Promise<void> => {
  const finalizers = (p.metadata.finalizers ?? []).filter((f) => f !== TrackingFinalizer);
  const body = { metadata: { finalizers: finalizers.length ? finalizers : null, resourceVersion: p.metadata.resourceVersion } };
  await pods.store.patch(inNamespace(p.metadata.namespace), p.metadata.name!, 'merge', body).then((w) => pods.cache.observe(w.object), ignoreRaces);
};

/** trackJobStatusAndRemoveFinalizers: record, release, then count the pods that finished. */
const countFinished = async (env: Env, job: KubeObject, pods: KubeObject[]): Promise<KubeObject> => {
  const st = structuredClone(status(job));
  const uncounted = obj(st.uncountedTerminatedPods);
  const listed = { succeeded: arr(uncounted.succeeded).map(String), failed: arr(uncounted.failed).map(String) };
  const known = new Set([...listed.succeeded, ...listed.failed]);
  for (const p of pods.filter((x) => tracked(x) && !known.has(x.metadata.uid!))) {
    if (countsSucceeded(p)) listed.succeeded.push(p.metadata.uid!);
    else if (countsFailed(p, job)) listed.failed.push(p.metadata.uid!);
  }
  if (listed.succeeded.length + listed.failed.length === 0) return job;
  let current = await writeStatus(env.jobs, job, jobStatus({ ...st, uncountedTerminatedPods: listed }));
  const byUid = new Map(pods.map((p) => [p.metadata.uid!, p]));
  for (const uid of [...listed.succeeded, ...listed.failed]) {
    const p = byUid.get(uid);
    if (p && tracked(p)) await dropFinalizer(env.pods, p);
  }
  const next = structuredClone(status(current));
  const indexes = parseIndexes(str(next.completedIndexes));
  for (const uid of listed.succeeded) if (byUid.get(uid) && indexOf(byUid.get(uid)!) >= 0) indexes.add(indexOf(byUid.get(uid)!));
  next.succeeded = isIndexed(job) ? indexes.size : num(next.succeeded) + listed.succeeded.length;
  next.failed = num(next.failed) + listed.failed.length;
  if (isIndexed(job)) next.completedIndexes = formatIndexes(indexes);
  next.uncountedTerminatedPods = {};
  env.backoff.record(job.metadata.uid!, listed.failed.length, listed.succeeded.length, Date.now());
  current = await writeStatus(env.jobs, current, jobStatus(next));
  return current;
};

/** The failure a job has reached, if any: back-off limit, OnFailure restarts, or its deadline. */
const failure = (job: KubeObject, active: KubeObject[], now: number): [string, string] | undefined => {
  if (num(status(job).failed) > num(spec(job).backoffLimit) || pastBackoffOnFailure(job, active)) return ['BackoffLimitExceeded', 'Job has reached the specified backoff limit'];
  const deadline = spec(job).activeDeadlineSeconds;
  const start = Date.parse(str(status(job).startTime));
  if (typeof deadline === 'number' && !Number.isNaN(start) && start + deadline * 1000 <= now) return ['DeadlineExceeded', 'Job was active longer than specified deadline'];
  return undefined;
};

const succeeded = (job: KubeObject, active: number): boolean => {
  const completions = spec(job).completions;
  const done = num(status(job).succeeded);
  if (typeof completions === 'number') return done >= completions;
  return done > 0 && active === 0;
};

const setCondition = (st: Obj, c: Obj): void => {
  st.conditions = [...arr(st.conditions).map(obj).filter((x) => x.type !== c.type), c];
};

/** Create towards what the job wants, or delete the surplus (ranked as a ReplicaSet ranks them). */
const manage = async (env: Env, job: KubeObject, active: KubeObject[], all: KubeObject[], now: number): Promise<number | undefined> => {
  const want = wantActive(job, num(status(job).succeeded), active.length);
  if (active.length > want) {
    await Promise.all(deletionOrder(active).slice(0, Math.min(active.length - want, MaxPerSync)).map((p) => env.control.delete(job, p)));
    return undefined;
  }
  const wait = env.backoff.remaining(job.metadata.uid!, now);
  if (active.length === want) return undefined;
  if (wait > 0) return wait;
  let indexes: number[] = [];
  if (isIndexed(job)) {
    const done = parseIndexes(str(status(job).completedIndexes));
    const busy = new Set(all.filter((p) => isActivePod(p) || isTerminatingPod(p)).map(indexOf));
    indexes = Array.from({ length: num(spec(job).completions) }, (_, i) => i).filter((i) => !done.has(i) && !busy.has(i));
  }
  const count = Math.min(want - active.length, MaxPerSync, isIndexed(job) ? indexes.length : Infinity);
  const { error } = await slowStartBatch(count, () => env.control.create(job, jobPod(job, isIndexed(job) ? indexes.shift() : undefined)));
  if (error) throw error;
  return undefined;
};

const syncJob = async (env: Env, job0: KubeObject): Promise<Result> => {
  const matches = (p: KubeObject) => selectorMatches(spec(job0).selector, p.metadata.labels ?? {});
  const pods = await claim({ owner: job0, ownerStore: env.jobs.store, cache: env.pods.cache, matches });
  let job = await countFinished(env, job0, pods);
  if (isFinished(job) || job.metadata.deletionTimestamp) {
    for (const p of pods.filter(tracked)) await dropFinalizer(env.pods, p);
    return {};
  }
  const now = Date.now();
  const current = () => env.pods.cache.ownedBy(job.metadata.uid!).filter(matches);
  const st = structuredClone(status(job));
  const suspended = spec(job).suspend === true;
  if (!suspended && !st.startTime) st.startTime = timestamp();
  const active = current().filter(isActivePod);
  const target = obj(arr(st.conditions).map(obj).find((c) => c.type === 'FailureTarget' && c.status === 'True'));
  const failed = target.reason ? [str(target.reason), str(target.message)] as [string, string] : failure({ ...job, status: st }, active, now);
  let requeue: number | undefined;
  if (failed || succeeded(job, active.length)) {
    if (failed && !target.reason) {
      setCondition(st, jobCondition('FailureTarget', 'True', ...failed));
      env.recorder.event(job, 'Warning', failed[0], failed[1]);
    }
    if (!failed && !hasCondition(st, 'SuccessCriteriaMet')) setCondition(st, jobCondition('SuccessCriteriaMet', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods'));
    await Promise.all(active.map((p) => env.control.delete(job, p)));
    if (!current().some((p) => isActivePod(p) || isTerminatingPod(p))) {
      if (failed) setCondition(st, jobCondition('Failed', 'True', ...failed));
      else {
        setCondition(st, jobCondition('Complete', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods'));
        st.completionTime = timestamp();
        env.recorder.event(job, 'Normal', 'Completed', 'Job completed');
      }
    }
  } else if (suspended) {
    await Promise.all(active.map((p) => env.control.delete(job, p)));
    if (!hasCondition(st, 'Suspended')) {
      setCondition(st, jobCondition('Suspended', 'True', 'JobSuspended', 'Job suspended'));
      env.recorder.event(job, 'Normal', 'Suspended', 'Job suspended');
    }
  } else {
    if (hasCondition(st, 'Suspended')) {
      setCondition(st, jobCondition('Suspended', 'False', 'JobResumed', 'Job resumed'));
      st.startTime = timestamp();
      env.recorder.event(job, 'Normal', 'Resumed', 'Job resumed');
    }
    requeue = await manage(env, { ...job, status: st }, active, current(), now);
    const deadline = spec(job).activeDeadlineSeconds;
    if (typeof deadline === 'number') requeue = Math.min(requeue ?? Infinity, Date.parse(str(st.startTime)) + deadline * 1000 - now + 1);
  }
  const after = current();
  Object.assign(st, { active: after.filter(isActivePod).length, terminating: after.filter(isTerminatingPod).length, ready: readyCount(after.filter(isActivePod)), uncountedTerminatedPods: st.uncountedTerminatedPods ?? {} });
  job = await writeStatus(env.jobs, job, jobStatus(st));
  return requeueAfter(requeue);
};

/** A tracked pod whose Job is gone or done keeps its finalizer no longer. */
const syncOrphan = async (env: Env, key: string): Promise<void> => {
  const { namespace, name } = splitKey(key.slice(OrphanPrefix.length));
  const pod = env.pods.cache.get(namespace, name);
  if (!pod || !tracked(pod)) return;
  const job = resolveOwner(pod.metadata.ownerReferences?.find((r) => r.controller), namespace, Kind, env.jobs.cache);
  if (!job) await dropFinalizer(env.pods, pod);
};

export const startJobController = (ctx: ControllerContext): Controller => {
  const jobs = served(ctx, 'batch', 'v1', 'jobs');
  const pods = served(ctx, '', 'v1', 'pods');
  if (!jobs || !pods) return { stop: async () => undefined };
  const recorder = ctx.events.recorder('job-controller');
  const env: Env = { jobs, pods, control: new PodControl(pods.cache, recorder), recorder, backoff: new Backoff() };
  const queue = new WorkQueue('job-controller', async (key) => {
    if (key.startsWith(OrphanPrefix)) return syncOrphan(env, key);
    const { namespace, name } = splitKey(key);
    const job = jobs.cache.get(namespace, name);
    return job && syncJob(env, job);
  }, { log: ctx.log });
  jobs.cache.on((type, j) => {
    if (type === 'DELETED') {
      env.backoff.forget(j.metadata.uid!);
      for (const p of pods.cache.ownedBy(j.metadata.uid!)) if (tracked(p)) queue.add(OrphanPrefix + objectKey(p));
    } else queue.add(objectKey(j));
  });
  pods.cache.on((type, p, old) => {
    enqueueOwners(p, old, Kind, jobs.cache, queue, (j, o) => selectorMatches(spec(j).selector, o.metadata.labels ?? {}));
    if (type !== 'DELETED' && tracked(p) && !resolveOwner(p.metadata.ownerReferences?.find((r) => r.controller), p.metadata.namespace, Kind, jobs.cache)) {
      queue.add(OrphanPrefix + objectKey(p));
    }
  });
  return keyed(queue, [jobs.cache, pods.cache]);
};
