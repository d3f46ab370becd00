/**
 * The deployment controller (deployment_controller.go syncDeployment): claim the ReplicaSets the
 * selector matches, then in Kubernetes' order of precedence — deleting: status only; paused: scale
 * only (and clean up old revisions); a rollback asked: roll back; a resize: scale proportionally;
 * otherwise roll out with the strategy. Woken by its Deployments, their ReplicaSets, and (for
 * Recreate, which waits for old pods to go) pod deletions.
 */
import type { KubeObject } from '../../api/meta.js';
import { num, spec, status } from '../../registry/kinds/common.js';
import { isEmptySelector, selectorMatches } from '../../registry/kinds/label-selector.js';
import { claim } from '../claim.js';
import { objectKey, served, type ControllerContext } from '../context.js';
import { keyed, objectQueue, requeueAfter, type Result } from '../reconciler.js';
import type { Controller } from '../shared.js';
import { enqueueOwners, resolveOwner } from '../owners.js';
import { rollback, rollbackTo } from './rollback.js';
import { isRecreate, rolloutRecreate, rolloutRolling } from './rollout.js';
import { DeploymentRun, type DeploymentEnv } from './run.js';
import { scaleDeployment } from './scale.js';
import { pausedConditions } from './status.js';
import { active, DesiredReplicasAnnotation, replicas } from './util.js';

const Kind = { group: 'apps', kind: 'Deployment' };
const ReplicaSetKind = { group: 'apps', kind: 'ReplicaSet' };
const labels = (o: KubeObject) => o.metadata.labels ?? {};

/** isScalingEvent: an active ReplicaSet was last scaled for another size than the Deployment's. */
const isScalingEvent = (d: KubeObject, sets: (KubeObject | undefined)[]): boolean =>
  active(sets.filter((s): s is KubeObject => !!s)).some((rs) => {
    const desired = rs.metadata.annotations?.[DesiredReplicasAnnotation];
    return desired !== undefined && Number(desired) !== replicas(d);
  });

/** `sync`: scale, clean up when paused, write status. */
const scaleOnly = async (run: DeploymentRun): Promise<void> => {
  const { newRS, old } = await run.newAndOld(false);
  await scaleDeployment(run, newRS, old);
  const fresh = old.map((rs) => run.fresh(rs));
  if (spec(run.d).paused === true && rollbackTo(run.d) === undefined) await run.cleanup(fresh);
  await run.syncStatus(newRS ? [...fresh, run.fresh(newRS)] : fresh, newRS && run.fresh(newRS));
};

const syncDeployment = async (env: DeploymentEnv, d: KubeObject): Promise<Result> => {
  const selector = spec(d).selector;
  if (isEmptySelector(selector)) {
    env.recorder.event(d, 'Warning', 'SelectingAll', 'This deployment is selecting all pods. A non-empty selector is required.');
    if (num(status(d).observedGeneration) < num(d.metadata.generation)) await new DeploymentRun(env, d, []).writeStatus({ ...status(d), observedGeneration: d.metadata.generation });
    return {};
  }
  const sets = await claim({ owner: d, ownerStore: env.deployments.store, cache: env.replicaSets.cache, matches: (rs) => selectorMatches(selector, labels(rs)) });
  const run = new DeploymentRun(env, d, sets);
  if (d.metadata.deletionTimestamp) {
    const { newRS, old } = await run.newAndOld(false);
    await run.syncStatus(newRS ? [...old, newRS] : old, newRS);
    return {};
  }
  const paused = pausedConditions(d);
  if (paused) await run.writeStatus(paused);
  if (spec(d).paused === true) await scaleOnly(run);
  else if (rollbackTo(d) !== undefined) await rollback(run);
  else if (isScalingEvent(d, sets)) await scaleOnly(run);
  else return requeueAfter(await (isRecreate(d) ? rolloutRecreate(run) : rolloutRolling(run)));
  return {};
};

export const startDeploymentController = (ctx: ControllerContext): Controller => {
  const deployments = served(ctx, 'apps', 'v1', 'deployments');
  const replicaSets = served(ctx, 'apps', 'v1', 'replicasets');
  const pods = served(ctx, '', 'v1', 'pods');
  if (!deployments || !replicaSets || !pods) return { stop: async () => undefined };
  const env: DeploymentEnv = { deployments, replicaSets, pods: pods.cache, recorder: ctx.events.recorder('deployment-controller') };
  const queue = objectQueue('deployment-controller', deployments.cache, (d) => syncDeployment(env, d), { log: ctx.log });
  replicaSets.cache.on((_, rs, old) =>
    enqueueOwners(rs, old, Kind, deployments.cache, queue, (d, o) => !isEmptySelector(spec(d).selector) && selectorMatches(spec(d).selector, labels(o))));
  pods.cache.on((type, pod) => {
    if (type !== 'DELETED') return;
    const rs = resolveOwner(pod.metadata.ownerReferences?.find((r) => r.controller), pod.metadata.namespace, ReplicaSetKind, replicaSets.cache);
    const d = rs && resolveOwner(rs.metadata.ownerReferences?.find((r) => r.controller), rs.metadata.namespace, Kind, deployments.cache);
    if (d && isRecreate(d)) queue.add(objectKey(d));
  });
  return keyed(queue, [deployments.cache, replicaSets.cache, pods.cache]);
};
