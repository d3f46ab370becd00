/**
 * The in-process API client: the registry's stores called directly (no HTTP, no serialisation
 * beyond what the stores do), each call authenticated as the client's own user and authorized by
 * the API server's authorizer chain first, as the request would be over HTTP. kube-controller-manager
 * with `--use-service-account-credentials` gives each controller a ServiceAccount of its own in
 * kube-system, bound to its bootstrap role `system:controller:<name>` (auth/bootstrap/controller-roles.ts);
 * `serviceAccountUser` is that identity.
 */
import type { Authorizer } from '../registry/authorization.js';
import { resourceAttributes } from '../registry/authorization.js';
import type { Registry, RequestContext, ResourceStore, UserInfo } from '../registry/rest.js';
import { forbiddenError } from '../auth/forbidden.js';
import type { ApiClient, ResourceClient } from './interface.js';

/** The user a ServiceAccount token authenticates as. */
export const serviceAccountUser = (namespace: string, name: string): UserInfo => ({
  name: `system:serviceaccount:${namespace}:${name}`,
  uid: '',
  groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
});

/** kube-apiserver's own loopback identity (its loops run as it, in system:masters). */
export const ApiServerUser: UserInfo = { name: 'system:apiserver', uid: '', groups: ['system:masters', 'system:authenticated'] };

/** The authorizer chain, or undefined while the server builds it (nothing is served before). */
export type AuthorizerSource = () => Authorizer | undefined;

export function inProcessClient(registry: Registry, authorizer: AuthorizerSource, user: UserInfo): ApiClient {
  const clients = new WeakMap<ResourceStore, ResourceClient>();
  const wrap = (store: ResourceStore): ResourceClient => {
    const { group, version, plural } = store.definition;
    /** The context the store gets: this client's user, after the authorizer allowed `verb`. */
    const as = (ctx: RequestContext, verb: string, name = '', subresource = ''): RequestContext => {
      const attrs = resourceAttributes(user, verb, { apiGroup: group, apiVersion: version, resource: plural, subresource, namespace: ctx.namespace ?? '', name });
      const found = authorizer()?.authorize(attrs) ?? { decision: 'NoOpinion' as const, reason: 'no authorizer' };
      if (found.decision !== 'Allow') throw forbiddenError(attrs, found.reason);
      return { ...ctx, user };
    };
    const call = <T>(fn: () => Promise<T>): Promise<T> => {
      try {
        return fn();
      } catch (err) {
        return Promise.reject(err);
      }
    };
    return {
      definition: store.definition,
      get: (ctx, name, sub) => call(() => store.get(as(ctx, 'get', name, sub), name, sub)),
      list: (ctx, query) => call(() => store.list(as(ctx, 'list'), query)),
      create: (ctx, body) => call(() => store.create(as(ctx, 'create'), body)),
      update: (ctx, name, body, sub) => call(() => store.update(as(ctx, 'update', name, sub), name, body, sub)),
      patch: (ctx, name, type, patch, sub) => call(() => store.patch(as(ctx, 'patch', name, sub), name, type, patch, sub)),
      delete: (ctx, name, options) => call(() => store.delete(as(ctx, 'delete', name), name, options)),
      watch: (ctx, query, sink) => call(() => store.watch(as(ctx, 'watch', query.name), query, sink)),
      ...(store.post && { post: (ctx, name, sub, body) => call(() => store.post!(as(ctx, 'create', name, sub), name, sub, body)) }),
    };
  };
  return {
    definitions: () => registry.definitions(),
    get generation() {
      return registry.generation;
    },
    find(group, version, plural) {
      const store = registry.find(group, version, plural);
      if (!store) return undefined;
      let client = clients.get(store);
      if (!client) clients.set(store, (client = wrap(store)));
      return client;
    },
  };
}
