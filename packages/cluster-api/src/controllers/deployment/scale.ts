/**
 * Scaling outside a rollout (sync.go `scale`): a Deployment resized (or paused) while several
 * ReplicaSets are active scales them proportionally to their size, so a rollout in progress keeps
 * its proportions (GetProportion / getReplicaSetFraction); with one active ReplicaSet it simply
 * takes the new size, and a saturated new ReplicaSet leaves the old ones at zero.
 */
import type { KubeObject } from '../../api/meta.js';
import { num, obj, spec, status } from '../../registry/kinds/common.js';
import type { DeploymentRun } from './run.js';
import { active, byCreation, DesiredReplicasAnnotation, MaxReplicasAnnotation, maxSurge, replicas, specReplicas } from './util.js';

/** FindActiveOrLatest: the one active ReplicaSet, or the newest when none is; undefined when several are. */
const activeOrLatest = (newRS: KubeObject | undefined, old: KubeObject[]): KubeObject | undefined => {
  const sorted = [...old].sort(byCreation).reverse();
  const all = active(newRS ? [...sorted, newRS] : sorted);
  if (all.length === 1) return all[0];
  if (all.length === 0) return newRS ?? sorted[0];
  return undefined;
};

/** IsSaturated: the new ReplicaSet has all the replicas, asked for and available. */
const saturated = (d: KubeObject, rs: KubeObject | undefined): boolean =>
  !!rs && replicas(rs) === replicas(d) && Number(rs.metadata.annotations?.[DesiredReplicasAnnotation]) === replicas(d) &&
  num(status(rs).availableReplicas) === replicas(d);

const fraction = (rs: KubeObject, d: KubeObject): number => {
  if (replicas(d) === 0) return -replicas(rs);
  const max = replicas(d) + maxSurge(d);
  let before = Number(rs.metadata.annotations?.[MaxReplicasAnnotation] ?? 0) || 0;
  if (before === 0) before = num(status(d).replicas);
  if (before === 0) return 0;
  return Math.round((replicas(rs) * max) / before) - replicas(rs);
};

const proportion = (rs: KubeObject, d: KubeObject, toAdd: number, added: number): number => {
  if (replicas(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const f = fraction(rs, d);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(f, allowed) : Math.max(f, allowed);
};

const created = (o: KubeObject): number => Date.parse(o.metadata.creationTimestamp ?? '') || 0;

export const scaleDeployment = async (run: DeploymentRun, newRS: KubeObject | undefined, old: KubeObject[]): Promise<void> => {
  const d = run.d;
  const one = activeOrLatest(newRS, old);
  if (one) {
    if (replicas(one) !== replicas(d)) await run.scaleAndRecord(one, replicas(d));
    return;
  }
  if (saturated(d, newRS)) {
    for (const rs of active(old)) await run.scaleAndRecord(rs, 0);
    return;
  }
  if (obj(spec(d).strategy).type === 'Recreate') return;
  const all = active(newRS ? [...old, newRS] : old);
  const allowed = replicas(d) > 0 ? replicas(d) + maxSurge(d) : 0;
  const toAdd = allowed - specReplicas(all);
  const operation = toAdd > 0 ? 'up' : 'down';
  // Up: the biggest (then newest) first; down: the biggest (then oldest) first.
  all.sort((a, b) => replicas(b) - replicas(a) || (toAdd > 0 ? created(b) - created(a) : created(a) - created(b)));
  const sizes = new Map<KubeObject, number>();
  let added = 0;
  for (const rs of all) {
    const p = toAdd !== 0 ? proportion(rs, d, toAdd, added) : 0;
    sizes.set(rs, replicas(rs) + p);
    added += p;
  }
  for (const [i, rs] of all.entries()) {
    let size = sizes.get(rs)!;
    if (i === 0 && toAdd !== 0) size = Math.max(0, size + toAdd - added);
    await run.scaleReplicaSet(rs, size, operation);
  }
};
