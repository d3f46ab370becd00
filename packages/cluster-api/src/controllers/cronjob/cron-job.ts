/**
 * The CronJob controller (cronjob_controllerv2.go): at each scheduled time (in spec.timeZone) a Job
 * named `<cronjob>-<minutes since the epoch>` from the job template, annotated with its scheduled
 * time; a time missed by more than startingDeadlineSeconds is skipped (`MissSchedule`), more than 100
 * missed is `TooManyMissedTimes`; Forbid skips while a Job runs (`JobAlreadyActive`), Replace deletes
 * the running ones first; suspend stops new Jobs. status.active follows its Jobs, lastScheduleTime
 * and lastSuccessfulTime are kept, finished Jobs beyond the history limits deleted oldest first.
 */
import type { KubeObject } from '../../api/meta.js';
import { isApiError } from '../../api/errors.js';
import { arr, obj, spec, status, str, type Obj } from '../../registry/kinds/common.js';
import { cronError, parseSchedule } from '../../registry/kinds/cron.js';
import { namespaceTerminating, objectKey, omitEmpty, served, writeStatus, errorText, type ControllerContext, type Served } from '../context.js';
import { keyed, objectQueue, requeueAfter, type Result } from '../reconciler.js';
import { knownZone, nextFire, rfc3339In, zoneOf } from './schedule.js';
import { referenceTo, type EventRecorder } from '@func/kube-client';
import { hasCondition } from '../job/pods.js';
import { ignoreRaces, inNamespace, type Controller } from '../shared.js';
import { resolveOwner } from '../owners.js';
import { controllerRef } from '../pods.js';
import { timestamp } from '../../registry/generic/meta.js';

const Kind = { group: 'batch', kind: 'CronJob' };
const ScheduledAnnotation = 'batch.kubernetes.io/cronjob-scheduled-timestamp';
/** nextScheduleDelta: look a little after the time, never just before it. */
const Delta = 100;

interface Env {
  cronJobs: Served;
  jobs: Served;
  recorder: EventRecorder;
}

const finished = (j: KubeObject): string | undefined => (hasCondition(j, 'Complete') ? 'Complete' : hasCondition(j, 'Failed') ? 'Failed' : undefined);
const activeRefs = (st: Obj): Obj[] => arr(st.active).map(obj);

const jobFor = (cj: KubeObject, at: number, zone: string | undefined): KubeObject => {
  const template = obj(spec(cj).jobTemplate);
  const meta = obj(template.metadata);
  return {
    apiVersion: 'batch/v1', kind: 'Job',
    metadata: {
      name: `${cj.metadata.name}-${Math.floor(at / 60_000)}`, namespace: cj.metadata.namespace,
      labels: { ...(obj(meta.labels) as Record<string, string>) },
      annotations: { ...(obj(meta.annotations) as Record<string, string>), [ScheduledAnnotation]: rfc3339In(at, zone ?? 'UTC') },
      ownerReferences: [controllerRef(cj)],
    },
    spec: structuredClone(obj(template.spec)),
  };
};

/** deleteJob: Background, dropped from status.active. */
const deleteJob = async (env: Env, cj: KubeObject, name: string, st: Obj): Promise<boolean> => {
  try {
    const written = await env.jobs.store.delete(inNamespace(cj.metadata.namespace), name, { propagationPolicy: 'Background' });
    env.jobs.cache.observeDelete(written.object, written.deleted);
  } catch (err) {
    if (!(isApiError(err) && err.code === 404)) {
      env.recorder.event(cj, 'Warning', 'FailedDelete', `Deleted job: ${errorText(err)}`);
      return false;
    }
  }
  st.active = activeRefs(st).filter((r) => r.name !== name);
  env.recorder.event(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${name}`);
  return true;
};

/** Reconcile status.active and lastSuccessfulTime with the Jobs that exist. */
const reconcileJobs = (env: Env, cj: KubeObject, jobs: KubeObject[], st: Obj): void => {
  const uids = new Set(jobs.map((j) => j.metadata.uid));
  for (const j of jobs) {
    const listed = activeRefs(st).some((r) => r.uid === j.metadata.uid);
    const done = finished(j);
    if (!listed && !done) env.recorder.event(cj, 'Warning', 'UnexpectedJob', `Saw a job that the controller did not create or forgot: ${j.metadata.name}`);
    else if (listed && done) {
      st.active = activeRefs(st).filter((r) => r.uid !== j.metadata.uid);
      env.recorder.event(cj, 'Normal', 'SawCompletedJob', `Saw completed job: ${j.metadata.name}, condition: ${done}`);
    }
    const completed = str(obj(j.status).completionTime);
    if (done === 'Complete' && completed && (!st.lastSuccessfulTime || Date.parse(completed) > Date.parse(str(st.lastSuccessfulTime)))) st.lastSuccessfulTime = completed;
  }
  for (const r of activeRefs(st)) {
    if (uids.has(str(r.uid))) continue;
    env.recorder.event(cj, 'Normal', 'MissingJob', `Active job went missing: ${str(r.name)}`);
    st.active = activeRefs(st).filter((x) => x.uid !== r.uid);
  }
};

/** The last fire at or before `now`, searched back in growing windows (an hour, a day, a month, a year, five). */
const lastFireBefore = (schedule: ReturnType<typeof parseSchedule>, now: number, zone: string): number | undefined => {
  for (const window of [3_600_000, 86_400_000, 31 * 86_400_000, 366 * 86_400_000, 5 * 366 * 86_400_000]) {
    let last: number | undefined;
    for (let t = nextFire(schedule, now - window, zone); t !== undefined && t <= now; t = nextFire(schedule, t, zone)) last = t;
    if (last !== undefined) return last;
  }
  return undefined;
};

/** mostRecentScheduleTime: the latest time due by `now` since the last one (or creation), and whether over 100 were missed. */
const mostRecent = (cj: KubeObject, st: Obj, now: number, zone: string, withDeadline: boolean): { earliest: number; recent?: number; many: boolean } => {
  const schedule = parseSchedule(str(spec(cj).schedule));
  let earliest = Date.parse(str(st.lastScheduleTime) || cj.metadata.creationTimestamp!);
  const deadline = spec(cj).startingDeadlineSeconds;
  if (withDeadline && typeof deadline === 'number') earliest = Math.max(earliest, now - deadline * 1000);
  let recent: number | undefined;
  let count = 0;
  for (let t = nextFire(schedule, earliest, zone); t !== undefined && t <= now; t = nextFire(schedule, t, zone)) {
    recent = t;
    if (++count > 100) return { earliest, recent: lastFireBefore(schedule, now, zone), many: true };
  }
  return { earliest, recent, many: false };
};

const nextDelay = (cj: KubeObject, st: Obj, now: number, zone: string): number => {
  const { earliest, recent } = mostRecent(cj, st, now, zone, false);
  const next = nextFire(parseSchedule(str(spec(cj).schedule)), recent ?? earliest, zone);
  return next === undefined ? 3_600_000 : Math.max(next + Delta - now, Delta);
};

/** syncCronJob: the status to write and when to look again. */
const schedule = async (env: Env, cj: KubeObject, st: Obj, now: number): Promise<number | undefined> => {
  const zone = spec(cj).timeZone;
  if (typeof zone === 'string' && !knownZone(zone)) return void env.recorder.event(cj, 'Warning', 'UnknownTimeZone', `invalid timeZone: "${zone}": unknown time zone ${zone}`);
  if (spec(cj).suspend === true) return undefined;
  const error = cronError(str(spec(cj).schedule));
  if (error) return void env.recorder.event(cj, 'Warning', 'UnparseableSchedule', `unparseable schedule: "${str(spec(cj).schedule)}" : ${error}`);
  const where = zoneOf(zone);
  const { recent, many } = mostRecent(cj, st, now, where, true);
  if (recent === undefined) return nextDelay(cj, st, now, where);
  if (many) env.recorder.event(cj, 'Warning', 'TooManyMissedTimes', 'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew');
  const deadline = spec(cj).startingDeadlineSeconds;
  if (typeof deadline === 'number' && recent + deadline * 1000 < now) {
    env.recorder.event(cj, 'Warning', 'MissSchedule', `Missed scheduled time to start a job: ${new Date(recent).toUTCString().replace('GMT', '+0000')}`);
    return nextDelay(cj, st, now, where);
  }
  const job = jobFor(cj, recent, typeof zone === 'string' ? zone : undefined);
  if (activeRefs(st).some((r) => r.name === job.metadata.name) || Date.parse(str(st.lastScheduleTime)) === recent) return nextDelay(cj, st, now, where);
  if (spec(cj).concurrencyPolicy === 'Forbid' && activeRefs(st).length > 0) {
    env.recorder.event(cj, 'Normal', 'JobAlreadyActive', 'Not starting job because prior execution is running and concurrency policy is Forbid');
    return nextDelay(cj, st, now, where);
  }
  if (spec(cj).concurrencyPolicy === 'Replace') for (const r of activeRefs(st)) if (!(await deleteJob(env, cj, str(r.name), st))) throw new Error(`could not replace job ${str(r.namespace)}/${str(r.name)}`);
  let created: KubeObject;
  try {
    created = (await env.jobs.store.create(inNamespace(cj.metadata.namespace), job)).object;
    env.jobs.cache.observe(created);
    env.recorder.event(cj, 'Normal', 'SuccessfulCreate', `Created job ${created.metadata.name}`);
  } catch (err) {
    if (!isApiError(err) || err.reason !== 'AlreadyExists') {
      if (!namespaceTerminating(err)) env.recorder.event(cj, 'Warning', 'FailedCreate', `Error creating job: ${errorText(err)}`);
      throw err;
    }
    created = await env.jobs.store.get(inNamespace(cj.metadata.namespace), job.metadata.name!);
    if (!created.metadata.ownerReferences?.some((r) => r.controller && r.uid === cj.metadata.uid) || activeRefs(st).some((r) => r.uid === created.metadata.uid)) return undefined;
  }
  st.active = [...activeRefs(st), { ...referenceTo(created), kind: 'Job', apiVersion: 'batch/v1' }];
  st.lastScheduleTime = timestamp(new Date(recent));
  return nextDelay(cj, st, now, where);
};

/** cleanupFinishedJobs: finished Jobs beyond successfulJobsHistoryLimit / failedJobsHistoryLimit, oldest start first. */
const cleanup = async (env: Env, cj: KubeObject, jobs: KubeObject[], st: Obj): Promise<void> => {
  const started = (j: KubeObject) => Date.parse(str(obj(j.status).startTime)) || Infinity;
  for (const [kind, limit] of [['Complete', spec(cj).successfulJobsHistoryLimit], ['Failed', spec(cj).failedJobsHistoryLimit]] as const) {
    if (typeof limit !== 'number') continue;
    const done = jobs.filter((j) => finished(j) === kind && !j.metadata.deletionTimestamp).sort((a, b) => started(a) - started(b) || (a.metadata.name! < b.metadata.name! ? -1 : 1));
    for (const j of done.slice(0, Math.max(0, done.length - limit))) await deleteJob(env, cj, j.metadata.name!, st);
  }
};

const syncCronJob = async (env: Env, cj: KubeObject): Promise<Result> => {
  if (cj.metadata.deletionTimestamp) return {};
  const jobs = env.jobs.cache.ownedBy(cj.metadata.uid!);
  const st: Obj = { ...structuredClone(status(cj)) };
  reconcileJobs(env, cj, jobs, st);
  const requeue = await schedule(env, cj, st, Date.now());
  await cleanup(env, cj, env.jobs.cache.ownedBy(cj.metadata.uid!), st);
  await writeStatus(env.cronJobs, cj, omitEmpty({ active: activeRefs(st), lastScheduleTime: st.lastScheduleTime, lastSuccessfulTime: st.lastSuccessfulTime }));
  return requeueAfter(requeue);
};

export const startCronJobController = (ctx: ControllerContext): Controller => {
  const cronJobs = served(ctx, 'batch', 'v1', 'cronjobs');
  const jobs = served(ctx, 'batch', 'v1', 'jobs');
  if (!cronJobs || !jobs) return { stop: async () => undefined };
  const env: Env = { cronJobs, jobs, recorder: ctx.events.recorder('cronjob-controller') };
  const queue = objectQueue('cronjob-controller', cronJobs.cache, (cj) => syncCronJob(env, cj).catch((err: unknown) => (ignoreRaces(err), requeueAfter(0))), { log: ctx.log });
  jobs.cache.on((_, j, old) => {
    for (const o of [j, old]) {
      const cj = o && resolveOwner(o.metadata.ownerReferences?.find((r) => r.controller), o.metadata.namespace, Kind, cronJobs.cache);
      if (cj) queue.add(objectKey(cj));
    }
  });
  return keyed(queue, [cronJobs.cache, jobs.cache]);
};
