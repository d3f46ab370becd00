/**
 * The two rollout strategies (rolling.go, recreate.go). RollingUpdate: grow the new ReplicaSet
 * within maxSurge, then shrink old ones — unhealthy replicas first, then available ones while more
 * than `replicas - maxUnavailable` stay available. Recreate: every old ReplicaSet to zero, wait
 * until none of their pods runs, then the new one at full size. Both end in syncRolloutStatus and,
 * once complete, the cleanup of old revisions.
 */
import type { KubeObject } from '../../api/meta.js';
import { num, spec, status } from '../../registry/kinds/common.js';
import { isTerminal } from '../pods.js';
import type { DeploymentRun } from './run.js';
import { rolloutStatus } from './status.js';
import { active, byCreation, countedAvailable, isComplete, maxSurge, maxUnavailable, replicas, specReplicas } from './util.js';

/** syncRolloutStatus: write the status; answers when to look again. */
export const syncRolloutStatus = async (run: DeploymentRun, all: KubeObject[], newRS: KubeObject | undefined): Promise<number | undefined> => {
  const { next, requeueAfter } = rolloutStatus(all.map((rs) => run.fresh(rs)), newRS && run.fresh(newRS), run.d);
  await run.writeStatus(next);
  return requeueAfter;
};

const reconcileNew = async (run: DeploymentRun, all: KubeObject[], newRS: KubeObject): Promise<boolean> => {
  const d = run.d;
  if (replicas(newRS) === replicas(d)) return false;
  if (replicas(newRS) > replicas(d)) return (await run.scaleAndRecord(newRS, replicas(d)))[0];
  const maxTotal = replicas(d) + maxSurge(d);
  const current = specReplicas(all);
  const size = current >= maxTotal ? replicas(newRS) : replicas(newRS) + Math.min(maxTotal - current, replicas(d) - replicas(newRS));
  return (await run.scaleAndRecord(newRS, size))[0];
};

/** cleanupUnhealthyReplicas: shrink old ReplicaSets by their unavailable replicas, oldest first. */
const cleanupUnhealthy = async (run: DeploymentRun, old: KubeObject[], max: number): Promise<[KubeObject[], number]> => {
  let total = 0;
  const out: KubeObject[] = [];
  for (const rs of [...old].sort(byCreation)) {
    const unhealthy = replicas(rs) - num(status(rs).availableReplicas);
    if (total >= max || replicas(rs) === 0 || unhealthy <= 0) {
      out.push(rs);
      continue;
    }
    const down = Math.min(max - total, unhealthy);
    const [, scaled] = await run.scaleAndRecord(rs, replicas(rs) - down);
    total += down;
    out.push(scaled);
  }
  return [out, total];
};

const scaleDownAvailable = async (run: DeploymentRun, all: KubeObject[], old: KubeObject[]): Promise<number> => {
  const minAvailable = replicas(run.d) - maxUnavailable(run.d);
  const available = countedAvailable(all);
  if (available <= minAvailable) return 0;
  const want = available - minAvailable;
  let done = 0;
  for (const rs of [...old].sort(byCreation)) {
    if (done >= want) break;
    if (replicas(rs) === 0) continue;
    const down = Math.min(replicas(rs), want - done);
    await run.scaleAndRecord(rs, replicas(rs) - down);
    done += down;
  }
  return done;
};

const reconcileOld = async (run: DeploymentRun, all: KubeObject[], old: KubeObject[], newRS: KubeObject): Promise<boolean> => {
  if (specReplicas(old) === 0) return false;
  const minAvailable = replicas(run.d) - maxUnavailable(run.d);
  const newUnavailable = replicas(newRS) - num(status(newRS).availableReplicas);
  const maxScaledDown = specReplicas(all) - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return false;
  const [cleaned, cleanedCount] = await cleanupUnhealthy(run, old, maxScaledDown);
  const scaled = await scaleDownAvailable(run, [...cleaned, newRS], cleaned);
  return cleanedCount + scaled > 0;
};

export const rolloutRolling = async (run: DeploymentRun): Promise<number | undefined> => {
  const { newRS, old } = await run.newAndOld(true);
  const all = [...old, newRS!];
  if (await reconcileNew(run, all, newRS!)) return syncRolloutStatus(run, all, newRS);
  const fresh = all.map((rs) => run.fresh(rs));
  const freshNew = run.fresh(newRS!);
  if (await reconcileOld(run, fresh, active(fresh.filter((rs) => rs !== freshNew)), freshNew)) return syncRolloutStatus(run, all, newRS);
  if (isComplete(run.d, status(run.d))) await run.cleanup(old.map((rs) => run.fresh(rs)));
  return syncRolloutStatus(run, all, newRS);
};

/** oldPodsRunning: an old ReplicaSet still counts pods, or one of its pods is not finished. */
const oldPodsRunning = (run: DeploymentRun, newRS: KubeObject | undefined, old: KubeObject[]): boolean => {
  if (old.some((rs) => num(status(run.fresh(rs)).replicas) > 0)) return true;
  return old.filter((rs) => rs !== newRS).some((rs) => run.env.pods.ownedBy(rs.metadata.uid!).some((p) => !isTerminal(p)));
};

export const rolloutRecreate = async (run: DeploymentRun): Promise<number | undefined> => {
  let { newRS, old } = await run.newAndOld(false);
  let scaledDown = false;
  for (const rs of active(old)) if ((await run.scaleAndRecord(rs, 0))[0]) scaledDown = true;
  if (scaledDown || oldPodsRunning(run, newRS, old)) return syncRolloutStatus(run, newRS ? [...old, newRS] : old, newRS);
  if (!newRS) ({ newRS, old } = await run.newAndOld(true));
  await run.scaleAndRecord(newRS!, replicas(run.d));
  if (isComplete(run.d, status(run.d))) await run.cleanup(old.map((rs) => run.fresh(rs)));
  return syncRolloutStatus(run, [...old, newRS!], newRS);
};

export const isRecreate = (d: KubeObject): boolean => (spec(d).strategy as { type?: string } | undefined)?.type === 'Recreate';
