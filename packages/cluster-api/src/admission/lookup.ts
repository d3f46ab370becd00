/**
 * What plugins read besides the request: the objects of a kind in the request's namespace (the
 * LimitRanges, the ResourceQuotas), read fresh from storage on each request, as the API server's
 * own store sees them.
 */
import type { KubeObject } from '../api/meta.js';
import type { AdmissionRequest } from './plugin.js';

/** The objects of `group/version/plural` in the request's namespace; none when the kind is not served. */
export const namespaceObjects = async (req: AdmissionRequest, group: string, version: string, plural: string): Promise<KubeObject[]> => {
  const store = req.services.find(group, version, plural);
  if (!store || !req.namespace) return [];
  return (await store.list({ namespace: req.namespace }, {})).items;
};

/** One read per request of what several steps of a plugin use (its mutate and its validate). */
export const perRequest = <T>(read: (req: AdmissionRequest) => Promise<T>): ((req: AdmissionRequest) => Promise<T>) => {
  const seen = new WeakMap<AdmissionRequest, Promise<T>>();
  return (req) => {
    let p = seen.get(req);
    if (!p) seen.set(req, (p = read(req)));
    return p;
  };
};
