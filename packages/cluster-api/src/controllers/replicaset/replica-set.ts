/**
 * The ReplicaSet controller, which is also the ReplicationController manager (Kubernetes runs one
 * implementation for both, the spec's kind differing only in its map selector): claim the pods the
 * selector matches, create from the template (slow-start batches, at most 500 per pass) or delete
 * the ones to go first until `spec.replicas` pods are active, then write `status` (replicas,
 * fullyLabeledReplicas, readyReplicas, availableReplicas, observedGeneration, ReplicaFailure).
 */
import type { KubeObject } from '../../api/meta.js';
import { timestamp } from '../../registry/generic/meta.js';
import { arr, num, obj, spec, type Obj } from '../../registry/kinds/common.js';
import { isEmptySelector, selectorMatches } from '../../registry/kinds/label-selector.js';
import { claim } from '../claim.js';
import { errorText, omitEmpty, served, slowStartBatch, writeStatus, type ControllerContext, type Served } from '../context.js';
import { keyed, objectQueue, requeueAfter, type Result } from '../reconciler.js';
import type { Controller } from '../shared.js';
import { PodControl } from '../pod-control.js';
import { controllerRef, deletionOrder, isActive, isAvailable, isReady, podFromTemplate, untilAvailable } from '../pods.js';
import { enqueueOwners } from '../owners.js';

/** What differs between the two kinds this controller runs. */
export interface ReplicaKind {
  component: string;
  group: string;
  version: string;
  plural: string;
  kind: string;
  /** The selector as a LabelSelector (a ReplicationController's is a plain map). */
  selector(o: KubeObject): unknown;
}

export const ReplicaSets: ReplicaKind = { component: 'replicaset-controller', group: 'apps', version: 'v1', plural: 'replicasets', kind: 'ReplicaSet', selector: (o) => spec(o).selector };
export const ReplicationControllers: ReplicaKind = {
  component: 'replication-controller', group: '', version: 'v1', plural: 'replicationcontrollers', kind: 'ReplicationController',
  selector: (o) => ({ matchLabels: obj(spec(o).selector) }),
};

/** kube-controller-manager's burstReplicas: at most this many creates or deletes per pass. */
const BurstReplicas = 500;

const labelsOf = (o: KubeObject | Obj): Record<string, string> => (obj(obj(o).metadata).labels ?? {}) as Record<string, string>;

const failureCondition = (status: Obj): Obj | undefined => arr(status.conditions).map(obj).find((c) => c.type === 'ReplicaFailure');

const calculateStatus = (rs: KubeObject, pods: KubeObject[], failure: { reason: string; message: string } | undefined, now: number): Obj => {
  const template = obj(spec(rs).template);
  const minReady = num(spec(rs).minReadySeconds);
  const ready = pods.filter(isReady);
  const old = obj(rs.status);
  let conditions = arr(old.conditions).map(obj);
  if (failure && !failureCondition(old)) {
    conditions = [...conditions, { type: 'ReplicaFailure', status: 'True', lastTransitionTime: timestamp(new Date(now)), reason: failure.reason, message: failure.message }];
  } else if (!failure) conditions = conditions.filter((c) => c.type !== 'ReplicaFailure');
  // Go's field order (ReplicaSetStatus); replicas is written even when zero.
  return omitEmpty({
    replicas: pods.length,
    fullyLabeledReplicas: pods.filter((p) => selectorMatches({ matchLabels: labelsOf(template) }, labelsOf(p))).length,
    readyReplicas: ready.length,
    availableReplicas: ready.filter((p) => isAvailable(p, minReady, now)).length,
    observedGeneration: rs.metadata.generation,
    conditions,
  }, ['replicas']);
};

export const startReplicaController = (ctx: ControllerContext, kind: ReplicaKind): Controller => {
  const own = served(ctx, kind.group, kind.version, kind.plural);
  const podsServed = served(ctx, '', 'v1', 'pods');
  if (!own || !podsServed) return { stop: async () => undefined };
  const pods = podsServed.cache;
  const control = new PodControl(pods, ctx.events.recorder(kind.component));

  const manage = async (rs: KubeObject, claimed: KubeObject[]): Promise<unknown> => {
    const diff = claimed.length - num(spec(rs).replicas);
    if (diff < 0) {
      const template = obj(spec(rs).template);
      const { error } = await slowStartBatch(Math.min(-diff, BurstReplicas), () =>
        control.create(rs, podFromTemplate(template, rs.metadata.name!, controllerRef(rs))));
      return error;
    }
    if (diff === 0) return undefined;
    const doomed = deletionOrder(claimed).slice(0, Math.min(diff, BurstReplicas));
    const results = await Promise.allSettled(doomed.map((p) => control.delete(rs, p)));
    return results.find((r): r is PromiseRejectedResult => r.status === 'rejected')?.reason;
  };

  const sync = async (rs: KubeObject): Promise<Result> => {
    const selector = kind.selector(rs);
    const matches = (p: KubeObject) => !isEmptySelector(selector) && selectorMatches(selector, labelsOf(p));
    const claimed = await claim({ owner: rs, ownerStore: own.store, cache: pods, eligible: isActive, matches });
    const error = rs.metadata.deletionTimestamp ? undefined : await manage(rs, claimed);
    // Read again: the pods just created or deleted are in the cache already.
    const current = pods.ownedBy(rs.metadata.uid!).filter((p) => isActive(p) && matches(p));
    const failure = error ? { reason: current.length < num(spec(rs).replicas) ? 'FailedCreate' : 'FailedDelete', message: errorText(error) } : undefined;
    const now = Date.now();
    const written = await writeStatus(own, rs, calculateStatus(rs, current, failure, now));
    if (error) throw error;
    const minReady = num(spec(written).minReadySeconds);
    const waits = current.map((p) => untilAvailable(p, minReady, now)).filter((w): w is number => w !== undefined);
    return requeueAfter(waits.length ? Math.min(...waits) : undefined);
  };

  const queue = objectQueue(kind.component, own.cache, sync, { log: ctx.log });
  pods.on((type, pod, old) => enqueueOwners(pod, old, kind, own.cache, queue, (rs, p) => selectorMatches(kind.selector(rs), labelsOf(p)) && !isEmptySelector(kind.selector(rs))));
  return keyed(queue, [own.cache, pods]);
};

export { calculateStatus as replicaSetStatus };
