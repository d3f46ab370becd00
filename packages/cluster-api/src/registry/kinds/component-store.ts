/**
 * The read-only stores of computed objects (ComponentStatus, APIService). ComponentStatus: every get/list asks the provider (the server passes one
 * that checks storage and whatever else it runs), so the answer is always current.
 */
import type { KubeList, KubeObject } from '../../api/meta.js';
import type { Storage } from '../../storage/interface.js';
import { groupVersion, type ComponentHealth, type ResourceDefinition, type Services } from '../definition.js';
import type { RequestContext, ResourceStore } from '../rest.js';
import { methodNotAllowed, notFound } from '../../api/errors.js';
import { objectFilter } from '../generic/list.js';
import { collectionLink, groupResource, selfLink } from '../generic/meta.js';

export type ComponentStatusProvider = Services['componentStatuses'];

/** The default provider: the storage backend alone. */
export const storageHealth = (storage: Storage): ComponentStatusProvider => async () => {
  const h = await storage.healthy().catch((e: unknown) => ({ ok: false, message: e instanceof Error ? e.message : String(e) }));
  return [{ name: 'storage', healthy: h.ok, message: h.ok ? (h.message ?? 'ok') : undefined, error: h.ok ? undefined : (h.message ?? 'unhealthy') }];
};

/**
 * A read-only store of objects computed on every read (get and list; every other verb 405): what
 * ComponentStatus, APIService and the metrics API serve. A namespaced kind's reads in a namespace
 * see that namespace's objects.
 */
export const computedStore = (def: ResourceDefinition, all: () => Promise<KubeObject[]>): ResourceStore => {
  const gr = groupResource(def);
  const inScope = (ctx: RequestContext) => (o: KubeObject): boolean => !def.namespaced || !ctx.namespace || o.metadata.namespace === ctx.namespace;
  const refuse = (verb: string) => async (): Promise<never> => {
    throw methodNotAllowed(verb, gr);
  };
  return {
    definition: def,
    async get(ctx, name) {
      const found = (await all()).filter(inScope(ctx)).find((o) => o.metadata.name === name);
      if (!found) throw notFound(gr, name);
      return found;
    },
    async list(ctx, query): Promise<KubeList> {
      const filter = objectFilter(def, query.labelSelector, query.fieldSelector);
      return { kind: def.listKind, apiVersion: groupVersion(def), metadata: { selfLink: collectionLink(def, ctx.namespace) }, items: (await all()).filter(inScope(ctx)).filter(filter) };
    },
    create: refuse('create'),
    update: refuse('update'),
    patch: refuse('patch'),
    delete: refuse('delete'),
    deleteCollection: refuse('deletecollection'),
    watch: refuse('watch'),
  };
};

export const componentStore = (def: ResourceDefinition, services: Services): ResourceStore => {
  const toObject = (c: ComponentHealth): KubeObject => ({
    kind: def.kind,
    apiVersion: groupVersion(def),
    metadata: { name: c.name, selfLink: selfLink(def, undefined, c.name) },
    conditions: [{ type: 'Healthy', status: c.healthy ? 'True' : 'False', ...(c.message ? { message: c.message } : {}), ...(c.error ? { error: c.error } : {}) }],
  });
  return computedStore(def, async () => (await services.componentStatuses()).map(toObject));
};
