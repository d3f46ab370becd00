/**
 * One sync of one Deployment (sync.go): the new ReplicaSet found or created with the next revision,
 * ReplicaSets scaled (each scale an event: "Scaled up replica set web-5d4f8 to 3 from 1"),
 * proportional scaling while several are active, old ones cleaned up past revisionHistoryLimit, and
 * the Deployment's status written. `d` is this sync's copy, moved on as its status is written.
 */
import type { KubeObject } from '../../api/meta.js';
import { isApiError } from '../../api/errors.js';
import { num, obj, spec, status, type Obj } from '../../registry/kinds/common.js';
import type { ObjectCache } from '../cache.js';
import { errorText, namespaceTerminating, writeStatus, type Served } from '../context.js';
import type { EventRecorder } from '@func/kube-client';
import { computeHash } from '../hash.js';
import { ignoreRaces, inNamespace } from '../shared.js';
import { controllerRef } from '../pods.js';
import {
  active, byCreation, findNew, hasProgressDeadline, HashLabel, maxRevision, maxSurge, newCondition, Reasons, replicas, RevisionAnnotation,
  condition, setCondition, setNewReplicaSetAnnotations, setReplicasAnnotations, specReplicas, revision,
} from './util.js';
import { calculateStatus } from './status.js';

export interface DeploymentEnv {
  deployments: Served;
  replicaSets: Served;
  pods: ObjectCache;
  recorder: EventRecorder;
}

/** NewRSNewReplicas: how big the new ReplicaSet may be now (rolling: within maxSurge; recreate: all). */
const newReplicasFor = (d: KubeObject, all: KubeObject[], newRS: KubeObject): number => {
  if (obj(spec(d).strategy).type === 'Recreate') return replicas(d);
  const current = specReplicas(all);
  const maxTotal = replicas(d) + maxSurge(d);
  if (current >= maxTotal) return replicas(newRS);
  return replicas(newRS) + Math.min(maxTotal - current, replicas(d) - replicas(newRS));
};

export class DeploymentRun {
  constructor(readonly env: DeploymentEnv, public d: KubeObject, readonly sets: KubeObject[]) {}

  get name(): string {
    return this.d.metadata.name!;
  }

  private get ctx() {
    return inNamespace(this.d.metadata.namespace);
  }

  /** Writes the Deployment's status (and its revision annotation, which travels through /status as in Kubernetes). */
  async writeStatus(next: Obj, revisionNow?: string): Promise<void> {
    const meta = revisionNow === undefined ? undefined : (m: KubeObject['metadata']) => ({ ...m, annotations: { ...m.annotations, [RevisionAnnotation]: revisionNow } });
    this.d = await writeStatus(this.env.deployments, this.d, next, meta);
  }

  /** getAllReplicaSetsAndSyncRevision: the new ReplicaSet (created when asked) and all the others. */
  async newAndOld(create: boolean): Promise<{ newRS?: KubeObject; old: KubeObject[] }> {
    const existing = findNew(this.d, this.sets);
    const old = this.sets.filter((rs) => rs !== existing);
    const next = maxRevision(old) + 1;
    if (existing) return { newRS: await this.syncExisting(existing, next), old };
    if (!create) return { old };
    return { newRS: await this.createNew(old, next), old };
  }

  private async syncExisting(rs: KubeObject, next: number): Promise<KubeObject> {
    const annotations = { ...rs.metadata.annotations };
    const changed = setNewReplicaSetAnnotations(this.d, annotations, next, true);
    if (changed || num(spec(rs).minReadySeconds) !== num(spec(this.d).minReadySeconds)) {
      return this.patchReplicaSet(rs, { metadata: { annotations }, spec: { minReadySeconds: num(spec(this.d).minReadySeconds) } });
    }
    const st = structuredClone(status(this.d));
    const revisionNow = rs.metadata.annotations?.[RevisionAnnotation];
    let needs = revisionNow !== undefined && this.d.metadata.annotations?.[RevisionAnnotation] !== revisionNow;
    if (hasProgressDeadline(this.d) && !condition(st, 'Progressing')) {
      setCondition(st, newCondition('Progressing', 'True', Reasons.FoundNewRS, `Found new replica set "${rs.metadata.name}"`));
      needs = true;
    }
    if (needs) await this.writeStatus(st, revisionNow);
    return rs;
  }

  private async createNew(old: KubeObject[], next: number): Promise<KubeObject> {
    const d = this.d;
    const collisionCount = typeof status(d).collisionCount === 'number' ? (status(d).collisionCount as number) : undefined;
    const hash = computeHash(spec(d).template, collisionCount);
    const template = structuredClone(obj(spec(d).template));
    const meta = obj((template.metadata ??= {}));
    meta.labels = { ...obj(meta.labels), [HashLabel]: hash };
    const selector = structuredClone(obj(spec(d).selector));
    selector.matchLabels = { ...obj(selector.matchLabels), [HashLabel]: hash };
    const annotations: Record<string, string> = {};
    const rs: KubeObject = {
      apiVersion: 'apps/v1', kind: 'ReplicaSet',
      metadata: { name: `${d.metadata.name}-${hash}`, namespace: d.metadata.namespace, ownerReferences: [controllerRef(d)], labels: { ...(meta.labels as Record<string, string>) }, annotations },
      spec: { replicas: 0, minReadySeconds: num(spec(d).minReadySeconds), selector, template },
    };
    const size = newReplicasFor(d, [...old, rs], rs);
    (rs.spec as Obj).replicas = size;
    setNewReplicaSetAnnotations(d, annotations, next, false);
    let created: KubeObject;
    try {
      created = (await this.env.replicaSets.store.create(this.ctx, rs)).object;
      this.env.replicaSets.cache.observe(created);
    } catch (err) {
      return this.createFailed(err, rs);
    }
    if (size > 0) this.env.recorder.event(d, 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${created.metadata.name} to ${size}`);
    const st = structuredClone(status(d));
    if (hasProgressDeadline(d)) setCondition(st, newCondition('Progressing', 'True', Reasons.NewReplicaSet, `Created new replica set "${created.metadata.name}"`));
    await this.writeStatus(st, String(next));
    return created;
  }

  /** AlreadyExists: ours (a stale cache) or a hash collision, which bumps collisionCount; anything else is reported. */
  private async createFailed(err: unknown, rs: KubeObject): Promise<never> {
    const d = this.d;
    if (isApiError(err) && err.reason === 'AlreadyExists') {
      const found = await this.env.replicaSets.store.get(this.ctx, rs.metadata.name!);
      this.env.replicaSets.cache.observe(found);
      const ours = found.metadata.ownerReferences?.some((r) => r.controller && r.uid === d.metadata.uid);
      if (!ours || !findNew(d, [found])) await this.writeStatus({ ...status(d), collisionCount: num(status(d).collisionCount) + 1 });
      throw err;
    }
    if (namespaceTerminating(err)) throw err;
    const msg = `Failed to create new replica set "${rs.metadata.name}": ${errorText(err)}`;
    if (hasProgressDeadline(d)) {
      const st = structuredClone(status(d));
      setCondition(st, newCondition('Progressing', 'False', Reasons.FailedRSCreate, msg));
      await this.writeStatus(st).catch(() => undefined);
    }
    this.env.recorder.event(d, 'Warning', Reasons.FailedRSCreate, msg);
    throw err;
  }

  private async patchReplicaSet(rs: KubeObject, body: Obj): Promise<KubeObject> {
    const { object } = await this.env.replicaSets.store.patch(this.ctx, rs.metadata.name!, 'merge', body);
    this.env.replicaSets.cache.observe(object);
    return object;
  }

  /** scaleReplicaSet: size and replica annotations; a size change is a ScalingReplicaSet event. */
  async scaleReplicaSet(rs: KubeObject, size: number, operation: 'up' | 'down'): Promise<[boolean, KubeObject]> {
    const annotations = { ...rs.metadata.annotations };
    const annotationsChanged = setReplicasAnnotations(annotations, this.d);
    const from = replicas(rs);
    if (from === size && !annotationsChanged) return [false, rs];
    const scaled = await this.patchReplicaSet(rs, { metadata: { annotations }, spec: { replicas: size } });
    if (from !== size) this.env.recorder.event(this.d, 'Normal', 'ScalingReplicaSet', `Scaled ${operation} replica set ${rs.metadata.name} to ${size} from ${from}`);
    return [from !== size, scaled];
  }

  async scaleAndRecord(rs: KubeObject, size: number): Promise<[boolean, KubeObject]> {
    if (replicas(rs) === size) return [false, rs];
    return this.scaleReplicaSet(rs, size, replicas(rs) < size ? 'up' : 'down');
  }

  /** syncDeploymentStatus. */
  async syncStatus(all: KubeObject[], newRS: KubeObject | undefined): Promise<void> {
    await this.writeStatus(calculateStatus(all, newRS, this.d));
  }

  /** cleanupDeployment: old ReplicaSets beyond revisionHistoryLimit, oldest first, once they are empty. */
  async cleanup(old: KubeObject[]): Promise<void> {
    const limit = spec(this.d).revisionHistoryLimit;
    if (typeof limit !== 'number') return;
    const cleanable = old.filter((rs) => !rs.metadata.deletionTimestamp).sort((a, b) => revision(a) - revision(b) || byCreation(a, b));
    for (const rs of cleanable.slice(0, Math.max(0, cleanable.length - limit))) {
      if (num(status(rs).replicas) !== 0 || replicas(rs) !== 0 || num(rs.metadata.generation) > num(status(rs).observedGeneration)) continue;
      const written = await this.env.replicaSets.store.delete(this.ctx, rs.metadata.name!, { preconditions: { uid: rs.metadata.uid } }).catch((e: unknown) => void ignoreRaces(e));
      if (written) this.env.replicaSets.cache.observeDelete(written.object, written.deleted);
    }
  }

  /** The active ReplicaSets of this run (for scaling), newest state from the cache. */
  fresh(rs: KubeObject): KubeObject {
    return this.env.replicaSets.cache.get(rs.metadata.namespace, rs.metadata.name!) ?? rs;
  }

  activeSets(sets: KubeObject[]): KubeObject[] {
    return active(sets.map((rs) => this.fresh(rs)));
  }
}
