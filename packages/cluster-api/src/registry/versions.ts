/**
 * One object set served at several group versions (Kubernetes' storage version plus conversion):
 * Deployment at apps/v1, apps/v1beta1 and extensions/v1beta1 is one set of objects stored as apps/v1,
 * so a Deployment created through one version is read, watched, patched and deleted through every
 * other. Each served version is a ResourceDefinition of its own (its strategy, defaults, columns,
 * field selectors apply to objects in its shape); `storedAs` names the storage version and the
 * conversion to and from it, identity by default (the apiVersion alone is rewritten, as a CRD with
 * `conversion: None`, or RBAC v1beta1 against v1, needs).
 *
 * ```ts
 * const deploymentV1beta1 = servedAt(deployment, { group: 'apps', version: 'v1beta1' }, { strategy: v1beta1Strategy });
 * const eventsV1 = servedAt(event, { group: 'events.k8s.io', version: 'v1' }, { conversion: { toStorage, fromStorage }, fields: [...] });
 * registry.add(deploymentV1beta1);
 * ```
 */
import type { Conversion, ResourceDefinition } from './definition.js';

export interface ServedAt {
  group: string;
  version: string;
}

/** Served-version specifics; anything not given is the storage version's. */
export type ServedVersion = Partial<Omit<ResourceDefinition, 'group' | 'version' | 'storedAs'>> & { conversion?: Conversion };

/** `storage` (a definition that is its own storage version) served at another group version as the same objects. */
export const servedAt = (storage: ResourceDefinition, at: ServedAt, { conversion, ...specifics }: ServedVersion = {}): ResourceDefinition => {
  if (storage.storedAs) throw new Error(`${storage.plural} in ${storage.group}/${storage.version} is not a storage version`);
  const { group, version, plural } = storage;
  return { ...storage, ...specifics, ...at, storedAs: { group, version, plural, ...(conversion && { conversion }) } };
};

/**
 * Kubernetes' version priority (k8s.io/apimachinery/pkg/version.CompareKubeAwareVersionStrings):
 * GA before beta before alpha, higher numbers first. The preferred version is the first.
 */
export function compareVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [-1, 0, 0];
    const stability = m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1;
    return [stability, Number(m[1]), Number(m[3] ?? 0)];
  };
  const [ra, rb] = [rank(a), rank(b)];
  for (let i = 0; i < 3; i++) if (ra[i] !== rb[i]) return rb[i]! - ra[i]!;
  return a.localeCompare(b);
}

/**
 * kube-apiserver's apiGroupPriorities (groupPriorityMinimum), which also order /apis: a client that
 * resolves a bare resource name (`kubectl get ingress`, `kubectl explain deployment`) takes the first
 * group serving it. extensions ranks last here, unlike Kubernetes 1.7-1.15 where it came first: it is
 * kept for clients that name it, and a bare `ingress` must resolve to networking.k8s.io as today's
 * kube-apiserver (which no longer serves extensions) resolves it. metrics.k8s.io ranks where
 * metrics-server's APIService puts it (100). Groups it does not know rank at 1000.
 */
const GroupPriorities: Readonly<Record<string, number>> = {
  '': 18000, 'apiregistration.k8s.io': 17900, apps: 17800, 'events.k8s.io': 17750, 'authentication.k8s.io': 17700,
  'authorization.k8s.io': 17600, autoscaling: 17500, batch: 17400, 'certificates.k8s.io': 17300, 'networking.k8s.io': 17200,
  policy: 17100, 'rbac.authorization.k8s.io': 17000, 'storage.k8s.io': 16800, 'admissionregistration.k8s.io': 16700,
  'apiextensions.k8s.io': 16700, 'scheduling.k8s.io': 16600, 'coordination.k8s.io': 16500, 'node.k8s.io': 16300,
  'discovery.k8s.io': 16200, 'flowcontrol.apiserver.k8s.io': 16100, 'metrics.k8s.io': 100, extensions: 1,
};
const OtherGroupPriority = 1000;

export const groupPriority = (group: string): number => GroupPriorities[group] ?? OtherGroupPriority;
