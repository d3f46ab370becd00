/**
 * A source's `sink` (a Destination: `ref` and/or `uri`) resolved as the broker resolves a Trigger's
 * subscriber (broker/resolver.ts's resolveDestination, and broker/cluster/resolver.ts's Service
 * rule), read from the controller manager's shared caches: a core Service through its Endpoints,
 * any other kind through its `status.address.url` (a Knative Service, a Broker, …).
 *
 * It also tracks what each source's sink refers to (Knative's tracker): a change of a referenced
 * object (its address moved, it became ready, it went away) wakes the sources that name it.
 */
import type { KubeObject } from '../api/meta.js';
import { resolveDestination, type ResolvedRef, type SubscriberResolver } from '../broker/resolver.js';
import { endpointUrls, servicePort } from '../broker/cluster/resolver.js';
import type { Resolution } from '../broker/status/status.js';
import type { Destination } from '../broker/types.js';
import type { ObjectCache } from '../controllers/cache.js';
import type { ControllerContext } from '../controllers/context.js';
import { splitApiVersion } from './resources.js';

const plural = (kind: string): string => {
  const lower = kind.toLowerCase();
  return lower.endsWith('s') ? `${lower}es` : `${lower}s`;
};


/** The shared cache of a kind named by apiVersion and kind (`plural` as Knative's resolver names it), if served. */
export const cacheOfKind = (ctx: ControllerContext, apiVersion: string, kind: string, resource = plural(kind)): ObjectCache | undefined => {
  const { group, version } = splitApiVersion(apiVersion);
  const store = ctx.client.find(group, version, resource);
  return store && ctx.caches.of(store);
};

export class SinkResolver {
  /** `apiVersion/kind/namespace/name` of a referenced object → the keys of the sources naming it. */
  private readonly tracked = new Map<string, Set<string>>();
  private readonly watched = new Set<string>();

  constructor(
    private readonly ctx: ControllerContext,
    /** Wakes a source (its key) when what its sink names changed. */
    private readonly wake: (key: string) => void,
  ) {}

  /** The URL `sink` names for the source `key` in `namespace`, or why not. */
  resolve(key: string, sink: Destination | undefined, namespace: string): Promise<Resolution> {
    this.untrack(key);
    if (!sink || typeof sink !== 'object') return Promise.resolve({ error: 'expected exactly one, got neither: ref, uri' });
    return resolveDestination(sink, namespace, this.resolverFor(key));
  }

  /** Forgets what `key` referred to (the source is gone or points elsewhere now). */
  untrack(key: string): void {
    for (const keys of this.tracked.values()) keys.delete(key);
  }

  private resolverFor(key: string): SubscriberResolver {
    return { resolve: async (ref) => this.lookup(key, ref) };
  }

  private track(key: string, ref: ResolvedRef, cache: ObjectCache): void {
    const id = `${ref.apiVersion}/${ref.kind}/${ref.namespace}/${ref.name}`;
    let keys = this.tracked.get(id);
    if (!keys) this.tracked.set(id, (keys = new Set()));
    keys.add(key);
    const kindId = `${ref.apiVersion}/${ref.kind}`;
    if (this.watched.has(kindId)) return;
    this.watched.add(kindId);
    cache.on((_, o: KubeObject) => {
      for (const k of this.tracked.get(`${kindId}/${o.metadata.namespace ?? ''}/${o.metadata.name}`) ?? []) this.wake(k);
    });
  }

  private async lookup(key: string, ref: ResolvedRef): Promise<string> {
    const missing = ['apiVersion', 'kind'].filter((f) => !ref[f as 'kind']);
    if (missing.length > 0) throw new Error(`ref: missing field(s): ${missing.join(', ')}`);
    const what = `${ref.kind} "${ref.namespace}/${ref.name}"`;
    const cache = cacheOfKind(this.ctx, ref.apiVersion!, ref.kind!);
    if (!cache) throw new Error(`failed to get ${what}: the server could not find the requested resource`);
    this.track(key, ref, cache);
    await cache.synced;
    const obj = cache.get(ref.namespace, ref.name) as (KubeObject & { status?: { address?: { url?: unknown } } }) | undefined;
    if (!obj) throw new Error(`failed to get ${what}: ${plural(ref.kind!)}${ref.apiVersion!.includes('/') ? `.${splitApiVersion(ref.apiVersion!).group}` : ''} "${ref.name}" not found`);
    if (ref.kind === 'Service' && ref.apiVersion === 'v1') {
      const endpoints = cacheOfKind(this.ctx, 'v1', 'Endpoints', 'endpoints');
      if (!endpoints) throw new Error(`Service "${ref.namespace}/${ref.name}" has no Endpoints`);
      this.track(key, { ...ref, kind: 'Endpoints' }, endpoints);
      await endpoints.synced;
      const port = servicePort(obj as Parameters<typeof servicePort>[0]);
      if (!port) throw new Error(`Service "${ref.namespace}/${ref.name}" has no ports`);
      return endpointUrls(`Service "${ref.namespace}/${ref.name}"`, port, endpoints.get(ref.namespace, ref.name) as Parameters<typeof endpointUrls>[2])[0]!;
    }
    const url = obj.status?.address?.url;
    if (typeof url !== 'string' || url === '') throw new Error(`${what} is not addressable: it has no status.address.url`);
    return url;
  }
}
