/**
 * Resource request → the store that serves it, or the Status that refuses it. Allowed verbs come
 * from the definition only (principle 1): a path that names no registered resource is 404, a verb
 * the definition does not list is 405 MethodNotAllowed, as kube-apiserver answers.
 */
import { ApiError, methodNotAllowed, methodNotSupported, pathNotFound, routeNotFound } from '../api/errors.js';
import type { Registry, ResourceStore } from '../registry/rest.js';
import { subresourceOf, type SubresourceDef } from '../registry/subresource.js';
import type { RequestVerb, ResourceInfo } from './request-info.js';

export interface Route {
  store: ResourceStore;
  verb: RequestVerb;
  namespace?: string;
  name?: string;
  subresource?: string;
  /** The raw path after the subresource (pods/proxy's backend path); '' when none. */
  subpath?: string;
  /** The kind's entry for `subresource`: its verbs, the kind it answers with, its behaviour. */
  sub?: SubresourceDef;
  /** Below a proxy subresource: the rest of the path. */
  path?: string;
}

export function resolve(registry: Registry, info: ResourceInfo): Route {
  const store = registry.find(info.group, info.version, info.plural);
  if (!store) throw servesGroup(registry, info.group) ? routeNotFound() : pathNotFound();
  const def = store.definition;
  // A namespaced kind has no `/{plural}/{name}` route outside a namespace; a cluster kind none inside one.
  if (info.namespace !== undefined && !def.namespaced) throw routeNotFound();
  if (info.name !== undefined && def.namespaced && info.namespace === undefined) throw routeNotFound();
  const { verb } = info;
  if (!verb) throw methodNotSupported();
  const gr = { group: def.group, resource: def.plural };
  if (info.subresource !== undefined) {
    const sub = subresourceOf(def, info.subresource);
    if (!sub) throw routeNotFound();
    // Only a subresource that takes a path (the proxies) serves `…/{subresource}/more`; a trailing slash is no path.
    const takesPath = sub.behaviour.type === 'connect' && sub.behaviour.takesPath === true;
    if (info.subpath && info.subpath !== '/' && !takesPath) throw routeNotFound();
    if (!(sub.verbs as readonly string[]).includes(verb)) throw methodNotAllowed(verb, gr);
    return { store, verb, namespace: info.namespace, name: info.name, subresource: info.subresource, subpath: info.subpath, sub };
  }
  const named = info.name !== undefined;
  // POST to a name, or PUT / PATCH to a collection, address nothing Kubernetes serves.
  if ((verb === 'create' && named) || ((verb === 'update' || verb === 'patch') && !named)) throw methodNotSupported();
  if (!(def.verbs as readonly string[]).includes(verb)) throw methodNotAllowed(verb, gr);
  return { store, verb, namespace: info.namespace, name: info.name };
}

/** The core group is always served; another group is when some definition belongs to it. */
const servesGroup = (registry: Registry, group: string): boolean => group === '' || registry.definitions().some((d) => d.group === group);

/**
 * kube-apiserver's 404 for any path: under `/api/` or `/apis/{a served group}` its go-restful
 * container answers (empty details); anywhere else its not-found handler (no details).
 */
export function notFoundAt(registry: Registry, path: string): ApiError {
  if (path === '/api' || path.startsWith('/api/')) return routeNotFound();
  const group = /^\/apis\/([^/]+)/.exec(path)?.[1];
  return group !== undefined && servesGroup(registry, group) ? routeNotFound() : pathNotFound();
}
