/**
 * The StatefulSet controller (stateful_set_control.go): one pod per ordinal with a stable name,
 * made from the revision its ordinal is due (below the partition: the current revision; from it:
 * the update revision), its claims created first. OrderedReady creates one pod at a time in
 * order, each after its predecessors are Running and Ready, and removes surplus pods from the
 * highest ordinal down, one at a time; Parallel does both at once. A rolling update then replaces
 * pods of another revision from the highest ordinal down to the partition, one at a time, each
 * after the one above is healthy again. Events: "create Pod web-0 in StatefulSet web successful".
 */
import type { KubeObject } from '../../api/meta.js';
import { isApiError } from '../../api/errors.js';
import { num, obj, spec, status, str } from '../../registry/kinds/common.js';
import { selectorMatches } from '../../registry/kinds/label-selector.js';
import { claim } from '../claim.js';
import { errorText, namespaceTerminating, served, writeStatus, type ControllerContext, type Served } from '../context.js';
import { keyed, objectQueue, requeueAfter, type Result } from '../reconciler.js';
import type { EventRecorder } from '@func/kube-client';
import { applyRevision, currentRevision, dataNaming, ownedRevisions, truncateHistory, type History } from '../history.js';
import { inNamespace, type Controller } from '../shared.js';
import { enqueueOwners } from '../owners.js';
import { isTerminal, untilAvailable } from '../pods.js';
import {
  claimTemplates, isHealthy, isRunningAndReady, isTerminating, ordinalOf, podRevision, startOrdinal, statefulClaim, statefulPod, statefulStatus,
} from './pods.js';

const Kind = { group: 'apps', kind: 'StatefulSet' };
const labels = (o: KubeObject) => o.metadata.labels ?? {};

interface Env {
  sets: Served;
  pods: Served;
  claims?: Served;
  history: History;
  recorder: EventRecorder;
}

const podEvent = (env: Env, set: KubeObject, verb: 'create' | 'delete', pod: KubeObject, err?: unknown) => {
  const Verb = verb === 'create' ? 'Create' : 'Delete';
  if (err) env.recorder.event(set, 'Warning', `Failed${Verb}`, `${verb} Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} failed error: ${errorText(err)}`);
  else env.recorder.event(set, 'Normal', `Successful${Verb}`, `${verb} Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} successful`);
};

/** createPersistentVolumeClaims, then the pod. */
const createPod = async (env: Env, set: KubeObject, pod: KubeObject, ordinal: number): Promise<void> => {
  const ctx = inNamespace(set.metadata.namespace);
  for (const template of env.claims ? claimTemplates(set) : []) {
    const claimObj = statefulClaim(set, template, ordinal);
    if (env.claims!.cache.get(set.metadata.namespace, claimObj.metadata.name!)) continue;
    try {
      env.claims!.cache.observe((await env.claims!.store.create(ctx, claimObj)).object);
      env.recorder.event(set, 'Normal', 'SuccessfulCreate', `create Claim ${claimObj.metadata.name} Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} success`);
    } catch (err) {
      if (!isApiError(err) || err.reason !== 'AlreadyExists') throw err;
    }
  }
  try {
    env.pods.cache.observe((await env.pods.store.create(ctx, pod)).object);
    podEvent(env, set, 'create', pod);
  } catch (err) {
    if (!namespaceTerminating(err) && !(isApiError(err) && err.reason === 'AlreadyExists')) podEvent(env, set, 'create', pod, err);
    throw err;
  }
};

const deletePod = async (env: Env, set: KubeObject, pod: KubeObject): Promise<void> => {
  try {
    const written = await env.pods.store.delete(inNamespace(pod.metadata.namespace), pod.metadata.name!, { preconditions: { uid: pod.metadata.uid } });
    env.pods.cache.observeDelete(written.object, written.deleted);
    podEvent(env, set, 'delete', pod);
  } catch (err) {
    if (isApiError(err) && (err.code === 404 || err.code === 409)) return;
    podEvent(env, set, 'delete', pod, err);
    throw err;
  }
};

/** The pods to act on; answers once a pass has done what it may (OrderedReady waits on each step). */
const reconcile = async (env: Env, set: KubeObject, currentSet: KubeObject, current: string, update: string, pods: KubeObject[]): Promise<void> => {
  const start = startOrdinal(set);
  const count = num(spec(set).replicas);
  const monotonic = spec(set).podManagementPolicy !== 'Parallel';
  const partition = num(obj(obj(spec(set).updateStrategy).rollingUpdate).partition);
  const rolling = obj(spec(set).updateStrategy).type === 'RollingUpdate';
  const replicas: (KubeObject | undefined)[] = Array.from({ length: count });
  const condemned: KubeObject[] = [];
  for (const p of pods) {
    const ord = ordinalOf(set, p);
    if (ord >= start && ord < start + count) replicas[ord - start] = p;
    else if (ord >= 0) condemned.push(p);
  }
  condemned.sort((a, b) => ordinalOf(set, b) - ordinalOf(set, a));
  const due = (ord: number) => (rolling && ord < start + partition ? statefulPod(currentSet, ord, current) : statefulPod(set, ord, update));
  for (let i = 0; i < count; i++) {
    let pod = replicas[i];
    if (pod && isTerminal(pod) && !isTerminating(pod)) {
      await deletePod(env, set, pod);
      pod = undefined;
    }
    if (!pod) {
      await createPod(env, set, due(start + i), start + i);
      if (monotonic) return;
      continue;
    }
    if (monotonic && (isTerminating(pod) || !isRunningAndReady(pod))) return;
  }
  const unhealthy = replicas.find((p) => !p || !isHealthy(p));
  for (const target of condemned) {
    if (isTerminating(target)) {
      if (monotonic) return;
      continue;
    }
    if (monotonic && unhealthy && unhealthy !== target) return;
    await deletePod(env, set, target);
    if (monotonic) return;
  }
  if (!rolling) return;
  for (let i = count - 1; i >= Math.max(0, partition); i--) {
    const pod = replicas[i];
    if (!pod) return;
    if (podRevision(pod) !== update && !isTerminating(pod)) return void (await deletePod(env, set, pod));
    if (!isHealthy(pod)) return;
  }
};

const syncSet = async (env: Env, set: KubeObject): Promise<Result> => {
  const selector = spec(set).selector;
  const matches = (o: KubeObject) => selectorMatches(selector, labels(o));
  const pods = await claim({ owner: set, ownerStore: env.sets.store, cache: env.pods.cache, matches: (p) => matches(p) && ordinalOf(set, p) >= 0 });
  const revisions = await ownedRevisions(env.history, set, matches);
  const collisions = num(status(set).collisionCount);
  const { revision: update, collisionCount } = await currentRevision(env.history, set, revisions, collisions, dataNaming(set));
  const all = [...revisions.filter((cr) => cr.metadata.name !== update.metadata.name), update].sort((a, b) => num(a.revision) - num(b.revision));
  const current = all.find((cr) => cr.metadata.name === status(set).currentRevision) ?? update;
  if (!set.metadata.deletionTimestamp) await reconcile(env, set, applyRevision(set, current), current.metadata.name!, update.metadata.name!, pods);
  const now = Date.now();
  const mine = env.pods.cache.ownedBy(set.metadata.uid!).filter((p) => ordinalOf(set, p) >= 0);
  const written = await writeStatus(env.sets, set, statefulStatus(set, mine, current.metadata.name!, update.metadata.name!, collisionCount, now));
  const live = new Set([str(status(written).currentRevision), update.metadata.name!, ...mine.map(podRevision)]);
  await truncateHistory(env.history, all, live, num(spec(set).revisionHistoryLimit ?? 10));
  const waits = mine.map((p) => untilAvailable(p, num(spec(set).minReadySeconds), now)).filter((w): w is number => w !== undefined);
  return requeueAfter(waits.length ? Math.min(...waits) : undefined);
};

export const startStatefulSetController = (ctx: ControllerContext): Controller => {
  const sets = served(ctx, 'apps', 'v1', 'statefulsets');
  const pods = served(ctx, '', 'v1', 'pods');
  const revisions = served(ctx, 'apps', 'v1', 'controllerrevisions');
  if (!sets || !pods || !revisions) return { stop: async () => undefined };
  const env: Env = {
    sets, pods, claims: served(ctx, '', 'v1', 'persistentvolumeclaims'), history: { revisions, ownerStore: sets.store }, recorder: ctx.events.recorder('statefulset-controller'),
  };
  const queue = objectQueue('statefulset-controller', sets.cache, (set) => syncSet(env, set), { log: ctx.log });
  pods.cache.on((_, p, old) => enqueueOwners(p, old, Kind, sets.cache, queue, (set, o) => selectorMatches(spec(set).selector, labels(o)) && ordinalOf(set, o) >= 0));
  const reads = [sets.cache, pods.cache, revisions.cache, ...(env.claims ? [env.claims.cache] : [])];
  return keyed(queue, reads);
};
