/**
 * The DaemonSet controller (daemon_controller.go, update.go): one pod per node that should run it
 * (daemon-nodes.ts), pinned to the node by affinity and tolerating what daemon pods tolerate; a
 * failed pod replaced (`FailedDaemonPod`), extra pods and pods on nodes that should not run them
 * (or that are gone) deleted. RollingUpdate replaces pods of older revisions node by node within
 * maxUnavailable (with maxSurge: the new pod first, the old one once the new is available);
 * OnDelete waits for pods to be deleted. History as ControllerRevisions named by template hash.
 */
import type { KubeObject } from '../../api/meta.js';
import { arr, num, obj, spec, status } from '../../registry/kinds/common.js';
import { selectorMatches } from '../../registry/kinds/label-selector.js';
import { scaledValue } from '../../registry/kinds/workload.js';
import { claim } from '../claim.js';
import { objectKey, omitEmpty, served, slowStartBatch, writeStatus, type ControllerContext, type Served } from '../context.js';
import { keyed, objectQueue, requeueAfter, type Result } from '../reconciler.js';
import { daemonTolerations, pinTo, shouldRun, targetNode } from './nodes.js';
import type { EventRecorder } from '@func/kube-client';
import { computeHash } from '../hash.js';
import { currentRevision, ownedRevisions, truncateHistory, type History, type Naming } from '../history.js';
import type { Controller } from '../shared.js';
import { enqueueOwners } from '../owners.js';
import { PodControl } from '../pod-control.js';
import { controllerRef, isActive, isAvailable, isReady, phase, podFromTemplate } from '../pods.js';

const Kind = { group: 'apps', kind: 'DaemonSet' };
const HashLabel = 'controller-revision-hash';
const GenerationLabel = 'pod-template-generation';
const labels = (o: KubeObject) => o.metadata.labels ?? {};
const created = (p: KubeObject) => Date.parse(p.metadata.creationTimestamp ?? '') || 0;

interface Env {
  sets: Served;
  pods: Served;
  nodes: Served;
  history: History;
  control: PodControl;
  recorder: EventRecorder;
}

/** DaemonSets name revisions by the template's hash (controller.ComputeHash), labelled controller-revision-hash. */
const templateNaming = (ds: KubeObject): Naming => ({
  hash: (count) => computeHash(spec(ds).template, count),
  labels: (hash) => ({ ...(obj(obj(obj(spec(ds).template).metadata).labels) as Record<string, string>), [HashLabel]: hash }),
});

const isUpdated = (pod: KubeObject, ds: KubeObject, hash: string): boolean =>
  pod.metadata.labels?.[HashLabel] === hash || pod.metadata.labels?.[GenerationLabel] === String(ds.metadata.generation);

const podFor = (ds: KubeObject, node: string, hash: string): KubeObject => {
  const pod = podFromTemplate(obj(spec(ds).template), ds.metadata.name!, controllerRef(ds));
  pod.metadata.labels = { ...pod.metadata.labels, [HashLabel]: hash, [GenerationLabel]: String(ds.metadata.generation) };
  const s = pod.spec as Record<string, unknown>;
  s.tolerations = daemonTolerations(s);
  pinTo(s, node);
  return pod;
};

/** What to create and delete: a pod for every node that should have one and has none, failed and extra pods, misplaced ones. */
const plan = (ds: KubeObject, nodes: KubeObject[], byNode: Map<string, KubeObject[]>, recorder: EventRecorder) => {
  const create: string[] = [];
  const remove: KubeObject[] = [];
  const surge = scaledValue(obj(obj(spec(ds).updateStrategy).rollingUpdate).maxSurge ?? 0, nodes.length, true) > 0;
  for (const node of nodes) {
    const name = node.metadata.name!;
    const { run, keep } = shouldRun(ds, node);
    const here = (byNode.get(name) ?? []).filter((p) => !p.metadata.deletionTimestamp);
    if (!keep) remove.push(...here);
    if (!run) continue;
    const failed = here.filter((p) => phase(p) === 'Failed');
    for (const p of failed) recorder.event(ds, 'Warning', 'FailedDaemonPod', `Found failed daemon pod ${p.metadata.namespace}/${p.metadata.name} on node ${name}, will try to kill it`);
    remove.push(...failed);
    const running = here.filter((p) => phase(p) !== 'Failed').sort((a, b) => created(a) - created(b));
    if (running.length === 0) create.push(name);
    else if (running.length > 1 && !surge) remove.push(...running.slice(1));
  }
  const known = new Set(nodes.map((n) => n.metadata.name));
  for (const [node, pods] of byNode) if (!known.has(node)) remove.push(...pods.filter((p) => !p.metadata.deletionTimestamp));
  return { create, remove };
};

/** rollingUpdate: old pods replaced within maxUnavailable, or (maxSurge) a new pod beside each old one first. */
const rollingPlan = (ds: KubeObject, nodes: KubeObject[], byNode: Map<string, KubeObject[]>, hash: string, now: number) => {
  const rolling = obj(obj(spec(ds).updateStrategy).rollingUpdate);
  const eligible = nodes.filter((n) => shouldRun(ds, n).run);
  const maxUnavailable = scaledValue(rolling.maxUnavailable ?? 1, eligible.length, true);
  const maxSurge = scaledValue(rolling.maxSurge ?? 0, eligible.length, true);
  const available = (p: KubeObject) => isAvailable(p, num(spec(ds).minReadySeconds), now);
  const remove: KubeObject[] = [];
  const create: string[] = [];
  const candidates: (KubeObject | string)[] = [];
  let busy = 0;
  for (const node of eligible) {
    const here = (byNode.get(node.metadata.name!) ?? []).filter(isActive);
    const fresh = here.find((p) => isUpdated(p, ds, hash));
    const old = here.find((p) => !isUpdated(p, ds, hash));
    if (maxSurge > 0) {
      if (!old) continue;
      if (fresh) (available(fresh) ? remove.push(old) : busy++);
      else if (!available(old)) create.push(node.metadata.name!);
      else if (busy < maxSurge) candidates.push(node.metadata.name!);
    } else if (!fresh === !old || (fresh && !available(fresh))) busy++;
    else if (old && !available(old)) (remove.push(old), busy++);
    else if (old && busy < maxUnavailable) candidates.push(old);
  }
  const room = Math.max(0, (maxSurge > 0 ? maxSurge : maxUnavailable) - busy);
  for (const c of candidates.slice(0, room)) (typeof c === 'string' ? create.push(c) : remove.push(c));
  return { create, remove };
};

const daemonStatus = (ds: KubeObject, nodes: KubeObject[], byNode: Map<string, KubeObject[]>, hash: string, collisionCount: number | undefined, now: number) => {
  let desired = 0, current = 0, mis = 0, ready = 0, available = 0, updated = 0;
  for (const node of nodes) {
    const pods = (byNode.get(node.metadata.name!) ?? []).filter(isActive).sort((a, b) => created(a) - created(b));
    if (!shouldRun(ds, node).run) {
      if (pods.length > 0) mis++;
      continue;
    }
    desired++;
    const pod = pods[0];
    if (!pod) continue;
    current++;
    if (isReady(pod)) ready++;
    if (isAvailable(pod, num(spec(ds).minReadySeconds), now)) available++;
    if (isUpdated(pod, ds, hash)) updated++;
  }
  return omitEmpty({
    currentNumberScheduled: current, numberMisscheduled: mis, desiredNumberScheduled: desired, numberReady: ready,
    observedGeneration: ds.metadata.generation, updatedNumberScheduled: updated, numberAvailable: available,
    numberUnavailable: desired - available, collisionCount, conditions: arr(status(ds).conditions),
  }, ['currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady']);
};

const syncDaemonSet = async (env: Env, ds: KubeObject): Promise<Result> => {
  const matches = (o: KubeObject) => selectorMatches(spec(ds).selector, labels(o));
  await claim({ owner: ds, ownerStore: env.sets.store, cache: env.pods.cache, matches });
  const revisions = await ownedRevisions(env.history, ds, matches);
  const had = status(ds).collisionCount;
  const { revision, collisionCount } = await currentRevision(env.history, ds, revisions, num(had), templateNaming(ds));
  const hash = revision.metadata.labels?.[HashLabel] ?? '';
  const nodes = env.nodes.cache.list();
  const byNode = () => {
    const m = new Map<string, KubeObject[]>();
    for (const p of env.pods.cache.ownedBy(ds.metadata.uid!).filter(matches)) m.set(targetNode(p), [...(m.get(targetNode(p)) ?? []), p]);
    return m;
  };
  if (!ds.metadata.deletionTimestamp) {
    const { create, remove } = plan(ds, nodes, byNode(), env.recorder);
    const rolling = obj(spec(ds).updateStrategy).type === 'RollingUpdate' ? rollingPlan(ds, nodes, byNode(), hash, Date.now()) : { create: [], remove: [] };
    const targets = [...create, ...rolling.create];
    const made = await slowStartBatch(targets.length, () => env.control.create(ds, podFor(ds, targets.shift()!, hash)));
    const doomed = [...new Set([...remove, ...rolling.remove])];
    const deleted = await Promise.allSettled(doomed.map((p) => env.control.delete(ds, p)));
    const failure = made.error ?? deleted.find((r): r is PromiseRejectedResult => r.status === 'rejected')?.reason;
    if (failure) throw failure;
  }
  const now = Date.now();
  const count = had === undefined && collisionCount === 0 ? undefined : collisionCount;
  const written = await writeStatus(env.sets, ds, daemonStatus(ds, nodes, byNode(), hash, count, now));
  const live = new Set([revision.metadata.name!]);
  await truncateHistory(env.history, [...revisions.filter((r) => r !== revision), revision], live, num(spec(written).revisionHistoryLimit ?? 10));
  return requeueAfter(num(spec(ds).minReadySeconds) > 0 && num(status(written).numberReady) > num(status(written).numberAvailable) ? num(spec(ds).minReadySeconds) * 1000 : undefined);
};

/** Node changes that change where daemon pods belong (not heartbeats). */
const placementOf = (n: KubeObject | undefined): string => JSON.stringify([n?.metadata.labels, obj(n?.spec).taints, obj(n?.spec).unschedulable]);

export const startDaemonSetController = (ctx: ControllerContext): Controller => {
  const sets = served(ctx, 'apps', 'v1', 'daemonsets');
  const pods = served(ctx, '', 'v1', 'pods');
  const nodes = served(ctx, '', 'v1', 'nodes');
  const revisions = served(ctx, 'apps', 'v1', 'controllerrevisions');
  if (!sets || !pods || !nodes || !revisions) return { stop: async () => undefined };
  const recorder = ctx.events.recorder('daemonset-controller');
  const env: Env = { sets, pods, nodes, history: { revisions, ownerStore: sets.store }, control: new PodControl(pods.cache, recorder), recorder };
  const queue = objectQueue('daemonset-controller', sets.cache, (ds) => syncDaemonSet(env, ds), { log: ctx.log });
  pods.cache.on((_, p, old) => enqueueOwners(p, old, Kind, sets.cache, queue, (ds, o) => selectorMatches(spec(ds).selector, labels(o))));
  nodes.cache.on((type, node, old) => {
    if (type !== 'MODIFIED' || placementOf(node) !== placementOf(old)) for (const ds of sets.cache.list()) queue.add(objectKey(ds));
  });
  return keyed(queue, [sets.cache, pods.cache, nodes.cache, revisions.cache]);
};
