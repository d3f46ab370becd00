/**
 * The registry: one store per registered definition, found the way the router finds them.
 * Public surface for http/ and the server wiring.
 */
import type { Storage } from '../storage/interface.js';
import { componentStore, storageHealth, type ComponentStatusProvider } from './component-store.js';
import type { Registry, ResourceDefinition, ResourceStore, ReviewServices, TokenIssuer } from './definition.js';
import { withTokenRequests } from './subresources/token.js';
import { withServiceAccountTokenSecrets } from './kinds/service-account-token-secret.js';
import { allKinds, namespace } from './kinds/index.js';
import { decode, objectKey } from './generic/meta.js';
import { withDefaultServiceAccount } from './default-service-account.js';
import { isApiError } from '../api/errors.js';
import { GenericStore } from './generic/store.js';
import { cachedEvent, type CachedEvent } from './generic/watch.js';
import { WatchCache, type WatchCacheOptions } from '../storage/watch-cache.js';

export interface RegistryOptions {
  /** Health of this server's components for ComponentStatus; default: the storage backend's. */
  componentStatuses?: ComponentStatusProvider;
  /** Further definitions served by the generic store (after the built-in ones). */
  extraDefinitions?: readonly ResourceDefinition[];
  /** Ring size and per-watcher queue bound of the watch cache. */
  watchCache?: WatchCacheOptions;
  /** BOOKMARK period for watches that allow them; default one minute, as Kubernetes. */
  bookmarkIntervalMs?: number;
  /** The server's token authenticator, for TokenReview answers. */
  reviews?: ReviewServices;
  /** Signs ServiceAccount tokens for TokenRequest (serviceaccounts/{name}/token); absent: that path is 404. */
  tokenIssuer?: TokenIssuer;
  /** PEM of the CA clients verify this server with: service-account-token Secrets carry it as `ca.crt`. */
  rootCa?: string;
}

const DefaultBookmarkIntervalMs = 60_000;
const MaxPhasesKept = 4096;

const lookupKey = (group: string, version: string, plural: string): string => `${group}/${version}/${plural}`;

/** The registry plus its watch cache (for its statistics: tests and the benchmark). */
export type LocalRegistry = Registry & { readonly watchCache: WatchCache<CachedEvent> };

export const createRegistry = (storage: Storage, options: RegistryOptions = {}): LocalRegistry => {
  const defs = [...allKinds, ...(options.extraDefinitions ?? [])];
  const cache = new WatchCache(storage, { ...options.watchCache, entry: cachedEvent });
  // Every namespaced create reads its namespace: the phase is parsed once per namespace revision.
  const phases = new Map<string, { rev: number; phase: 'Active' | 'Terminating' }>();
  const deps = {
    namespacePhase: async (ns: string) => {
      const kv = await storage.get(objectKey(namespace, undefined, ns));
      if (!kv) return 'Absent' as const;
      const known = phases.get(ns);
      if (known?.rev === kv.modRevision) return known.phase;
      const phase = decode(kv).metadata.deletionTimestamp ? ('Terminating' as const) : ('Active' as const);
      if (phases.size >= MaxPhasesKept) phases.clear();
      phases.set(ns, { rev: kv.modRevision, phase });
      return phase;
    },
    watch: { cache, bookmarkIntervalMs: options.bookmarkIntervalMs ?? DefaultBookmarkIntervalMs },
    reviews: options.reviews ?? {},
  };
  const provider = options.componentStatuses ?? storageHealth(storage);
  const stores = new Map<string, ResourceStore>();
  for (const def of defs) {
    const store = def.kind === 'ComponentStatus' && !def.group ? componentStore(def, provider) : new GenericStore(def, storage, deps);
    stores.set(lookupKey(def.group, def.version, def.plural), store);
  }
  const nsKey = lookupKey('', 'v1', 'namespaces');
  stores.set(nsKey, withDefaultServiceAccount(stores.get(nsKey)!, stores.get(lookupKey('', 'v1', 'serviceaccounts'))!));
  if (options.tokenIssuer) {
    const saKey = lookupKey('', 'v1', 'serviceaccounts');
    const secretsKey = lookupKey('', 'v1', 'secrets');
    stores.set(saKey, withTokenRequests(stores.get(saKey)!, options.tokenIssuer, (plural) => stores.get(lookupKey('', 'v1', plural))!));
    stores.set(secretsKey, withServiceAccountTokenSecrets(stores.get(secretsKey)!, stores.get(saKey)!, options.tokenIssuer, options.rootCa));
  }
  return {
    watchCache: cache,
    definitions: () => defs,
    find: (group, version, plural) => stores.get(lookupKey(group, version, plural)),
  };
};

/** The namespaces kube-apiserver's bootstrap controller keeps: clients assume `default` exists. */
export const SystemNamespaces = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const;

/** Create the system namespaces that are missing; call once at start-up, before serving. */
export const ensureSystemNamespaces = async (registry: Registry): Promise<void> => {
  const namespaces = registry.find('', 'v1', 'namespaces')!;
  for (const name of SystemNamespaces) {
    await namespaces.create({}, { metadata: { name } }).catch((err: unknown) => {
      if (!(isApiError(err) && err.reason === 'AlreadyExists')) throw err;
    });
  }
};

export type {
  Registry, ResourceDefinition, ResourceStore, Strategy, TableColumn, ListQuery, WatchQuery, WatchSink, PatchType,
  RequestContext, Verb, Subresource, UserInfo,
} from './definition.js';
export { groupVersion, PatchTypes, Verbs, Subresources } from './definition.js';
export type { ComponentHealth, ComponentStatusProvider } from './component-store.js';
