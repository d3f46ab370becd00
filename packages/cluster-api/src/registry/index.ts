/**
 * The registry: one store per served definition, found the way the router finds them, over one
 * storage and one watch cache. The built-in kinds are there from the start; definitions may be added
 * and removed while the server runs (a CustomResourceDefinition becomes one), and everything derived
 * from the list follows `generation`. Public surface for http/ and the server wiring.
 */
import { AdmissionChain, AdmissionPlugins, type AdmissionPlugin } from '../admission/index.js';
import { ApiError } from '../api/errors.js';
import type { Storage } from '../storage/interface.js';
import { WatchCache, type WatchCacheOptions } from '../storage/watch-cache.js';
import type { Authorizer } from './authorization.js';
import { groupVersion, type ResourceDefinition, type Services, type TokenIssuer } from './definition.js';
import { NamespaceLifecycle } from './generic/namespace-lifecycle.js';
import { GenericStore, type StoreDeps } from './generic/store.js';
import { cachedEvent, type CachedEvent } from './generic/watch.js';
import { storageHealth } from './kinds/component-store.js';
import { allKinds } from './kinds/index.js';
import { service, serviceKind } from './kinds/service.js';
import type { Registry, ResourceStore } from './rest.js';
import { runtimeConfig } from './runtime-config.js';

export interface RegistryOptions {
  /** The admission chain's plugins, in order (default: admission/plugins.ts). */
  admissionPlugins?: readonly AdmissionPlugin[];
  /** Health of this server's components for ComponentStatus; default: the storage backend's. */
  componentStatuses?: Services['componentStatuses'];
  /** Further definitions served by the generic store (after the built-in ones). */
  extraDefinitions?: readonly ResourceDefinition[];
  /** Ring size and per-watcher queue bound of the watch cache. */
  watchCache?: WatchCacheOptions;
  /** BOOKMARK period for watches that allow them; default one minute, as Kubernetes. */
  bookmarkIntervalMs?: number;
  /** The server's token authenticator, for TokenReview answers. */
  reviewToken?: Services['reviewToken'];
  /** Signs ServiceAccount tokens for TokenRequest (serviceaccounts/{name}/token); absent: that path is 404. */
  tokenIssuer?: TokenIssuer;
  /** PEM of the CA clients verify this server with: service-account-token Secrets carry it as `ca.crt`. */
  rootCa?: string;
  /** The server's authorizer, asked late: it is built over this registry's RBAC stores. */
  authorizer?: () => Authorizer | undefined;
  /** How node agents are reached (pods/log, tunnels to pods). */
  kubelet?: Services['kubelet'];
  /** How pods' ports are reached (the node agent's); absent, port-forward and the proxies cannot reach pods. */
  podNetwork?: Services['podNetwork'];
  /** The usage the metrics API (metrics.k8s.io) serves; absent: its lists are empty. */
  resourceMetrics?: Services['resourceMetrics'];
  /** Where Service clusterIPs come from (kube-apiserver's --service-cluster-ip-range); default 10.96.0.0/12. */
  serviceClusterIpRange?: string;
  /** kube-apiserver's --runtime-config: built-in group versions and resources turned off or on (registry/runtime-config.ts). */
  runtimeConfig?: string;
}

const DefaultBookmarkIntervalMs = 60_000;

const lookupKey = (group: string, version: string, plural: string): string => `${group}/${version}/${plural}`;

/** Whether two definitions serve one object set (the same storage version's resource). */
const sameObjects = (a: ResourceDefinition, b: ResourceDefinition): boolean => {
  const [x, y] = [a.storedAs ?? a, b.storedAs ?? b];
  return x.group === y.group && x.plural === y.plural;
};

/** The registry plus its watch cache (for its statistics: tests and the benchmark). */
export type LocalRegistry = Registry & { readonly watchCache: WatchCache<CachedEvent> };

export const createRegistry = (storage: Storage, options: RegistryOptions = {}): LocalRegistry => {
  const stores = new Map<string, ResourceStore>();
  let defs: readonly ResourceDefinition[] = [];
  const services: Services = {
    find: (group, version, plural) => stores.get(lookupKey(group, version, plural)),
    definitions: () => defs,
    tokens: options.tokenIssuer,
    rootCa: options.rootCa,
    reviewToken: options.reviewToken,
    kubelet: options.kubelet,
    componentStatuses: options.componentStatuses ?? storageHealth(storage),
    get authorizer() {
      return options.authorizer?.();
    },
    podNetwork: options.podNetwork,
    resourceMetrics: options.resourceMetrics,
  };
  const watchCache = new WatchCache(storage, { ...options.watchCache, entry: cachedEvent });
  const deps: StoreDeps = {
    namespaces: new NamespaceLifecycle(storage),
    watch: { cache: watchCache, bookmarkIntervalMs: options.bookmarkIntervalMs ?? DefaultBookmarkIntervalMs },
    services,
    admission: new AdmissionChain(options.admissionPlugins ?? AdmissionPlugins),
    siblings: (def, apiVersion) => defs.find((d) => groupVersion(d) === apiVersion && d.kind === def.kind && sameObjects(d, def)),
  };
  const registry: LocalRegistry = {
    watchCache,
    generation: 0,
    definitions: () => defs,
    find: services.find,
    add(def) {
      const key = lookupKey(def.group, def.version, def.plural);
      if (stores.has(key)) throw new ApiError(409, 'AlreadyExists', `${def.plural} in ${groupVersion(def)} is served already`);
      const store = def.store ? def.store(def, services) : new GenericStore(def, storage, deps);
      stores.set(key, store);
      defs = [...defs, def];
      (registry as { generation: number }).generation++;
      return store;
    },
    remove(group, version, plural) {
      const store = stores.get(lookupKey(group, version, plural));
      if (!store) return false;
      stores.delete(lookupKey(group, version, plural));
      defs = defs.filter((d) => d !== store.definition);
      (registry as { generation: number }).generation++;
      store.endWatches?.();
      return true;
    },
  };
  const kinds = options.serviceClusterIpRange ? allKinds.map((d) => (d === service ? serviceKind(options.serviceClusterIpRange) : d)) : allKinds;
  const served = options.runtimeConfig ? kinds.filter(runtimeConfig(options.runtimeConfig, kinds)) : kinds;
  for (const def of [...served, ...(options.extraDefinitions ?? [])]) registry.add(def);
  return registry;
};

export { ensureSystemNamespaces, SystemNamespaces } from './kinds/namespace.js';
export { ensureSystemPriorityClasses } from './kinds/priority-class.js';
export { groupVersion, Verbs } from './definition.js';
export { servedAt, type ServedAt, type ServedVersion } from './versions.js';
export { runtimeConfig, RuntimeConfigError } from './runtime-config.js';
export { PatchTypes } from './rest.js';
export type * from './definition.js';
export type * from './rest.js';
export type * from './subresource.js';
export type * from './authorization.js';
