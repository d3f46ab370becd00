/**
 * APIService (apiregistration.k8s.io/v1): one per group version this server serves, all `Local`
 * (served here, no aggregated server behind them) and Available, as kube-aggregator lists them for a
 * kube-apiserver's own groups. Read-only and computed from the registry on every read, so a kind
 * added at run time (a CRD's group) appears at once. Priorities: registry/versions.ts.
 */
import type { KubeObject } from '../../api/meta.js';
import type { ResourceDefinition, Services } from '../definition.js';
import { compareVersions, groupPriority } from '../versions.js';
import { timestamp } from '../generic/meta.js';
import type { ResourceStore } from '../rest.js';
import { arr, column, inGroup, obj, spec, str } from './common.js';
import { computedStore } from './component-store.js';

const VersionPriorities = [15, 9, 1];

const startedAt = timestamp();

const apiServices = (defs: readonly ResourceDefinition[], def: ResourceDefinition): KubeObject[] => {
  const byGroup = new Map<string, Set<string>>();
  for (const d of defs) byGroup.set(d.group, (byGroup.get(d.group) ?? new Set()).add(d.version));
  const out: KubeObject[] = [];
  for (const [group, versions] of byGroup) {
    [...versions].sort(compareVersions).forEach((version, i) => out.push({
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: def.kind,
      metadata: { name: `${version}.${group}`, creationTimestamp: startedAt, labels: { 'kube-aggregator.kubernetes.io/automanaged': 'onstart' } },
      spec: { group, version, groupPriorityMinimum: groupPriority(group), versionPriority: VersionPriorities[Math.min(i, 2)] },
      status: { conditions: [{ type: 'Available', status: 'True', lastTransitionTime: startedAt, reason: 'Local', message: 'Local APIServices are always available' }] },
    }));
  }
  return out.sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
};

const apiServiceStore = (def: ResourceDefinition, services: Services): ResourceStore =>
  computedStore(def, async () => apiServices(services.definitions?.() ?? [], def));

const available = (o: KubeObject): string => {
  const c = obj(arr(obj(o.status).conditions).map(obj).find((x) => x.type === 'Available'));
  if (c.status === 'True') return 'True';
  return c.reason ? `${str(c.status) || 'Unknown'} (${str(c.reason)})` : str(c.status) || 'Unknown';
};

export const apiService = inGroup('apiregistration.k8s.io', 'v1')({
  kind: 'APIService',
  plural: 'apiservices',
  singular: 'apiservice',
  namespaced: false,
  verbs: ['get', 'list'],
  categories: ['api-extensions'],
  strategy: {},
  store: apiServiceStore,
  columns: [
    column('Service', (o) => {
      const svc = spec(o).service;
      return svc ? `${str(obj(svc).namespace)}/${str(obj(svc).name)}` : 'Local';
    }, { description: 'The reference to the service that hosts this API endpoint.' }),
    column('Available', available, { description: 'Whether this service is available.' }),
  ],
});
