/**
 * The order SCCs are tried in (OpenShift's sort.ByPriority): higher `priority` first (none is 0),
 * then the most restrictive by point value (privileged > host ports > host network > host volumes >
 * other non-trivial volumes > the RunAsUser and SELinux strategies > capabilities), then by name.
 */
import type { KubeObject } from '../../api/meta.js';
import { arr, num, obj, str } from '../../registry/kinds/common.js';

const Points = {
  privileged: 1_600_000,
  hostPorts: 800_000,
  hostNetwork: 400_000,
  hostVolume: 200_000,
  nonTrivialVolume: 100_000,
} as const;
const Strategy: Record<string, number> = { RunAsAny: 40_000, MustRunAsNonRoot: 30_000, MustRunAsRange: 20_000, MustRunAs: 10_000 };
const TrivialVolumes = new Set(['secret', 'configMap', 'emptyDir', 'downwardAPI', 'projected', 'none']);

const caps = (v: unknown): string[] => arr(v).map((c) => str(c).toUpperCase());

const volumePoints = (scc: KubeObject): number => {
  const volumes = arr(scc.volumes).map(str);
  if (volumes.some((v) => v === 'hostPath' || v === '*')) return Points.hostVolume;
  return volumes.some((v) => !TrivialVolumes.has(v)) ? Points.nonTrivialVolume : 0;
};

const capabilityPoints = (scc: KubeObject): number => {
  const allowed = caps(scc.allowedCapabilities);
  const drops = caps(scc.requiredDropCapabilities);
  let p = 5000 + 300 * caps(scc.defaultAddCapabilities).length;
  p += allowed.includes('*') || allowed.includes('ALL') ? 4000 : 10 * allowed.length;
  p += drops.includes('ALL') ? -3000 : -50 * drops.length;
  return Math.min(9999, Math.max(0, p));
};

/** pointValue: the lower, the more restrictive. */
export const pointValue = (scc: KubeObject): number =>
  (scc.allowPrivilegedContainer === true ? Points.privileged : 0)
  + volumePoints(scc)
  + (scc.allowHostNetwork === true ? Points.hostNetwork : 0)
  + (scc.allowHostPorts === true ? Points.hostPorts : 0)
  + capabilityPoints(scc)
  + (Strategy[str(obj(scc.seLinuxContext).type)] ?? 0)
  + (Strategy[str(obj(scc.runAsUser).type)] ?? 0);

export const byPriority = (a: KubeObject, b: KubeObject): number =>
  num(b.priority) - num(a.priority) || pointValue(a) - pointValue(b) || ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1);
