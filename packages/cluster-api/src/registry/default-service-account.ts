/**
 * Kubernetes' service account controller, reduced to what clients see: every namespace has a
 * ServiceAccount named `default` (pods default to it; `kubectl get sa` lists it). Done when the
 * namespace is created, so no background loop is needed.
 */
import type { KubeObject } from '../api/meta.js';
import type { RequestContext, ResourceStore } from './definition.js';
import { isApiError } from '../api/errors.js';

export const DefaultServiceAccount = 'default';

export const withDefaultServiceAccount = (namespaces: ResourceStore, serviceAccounts: ResourceStore): ResourceStore => {
  const create = async (ctx: RequestContext, body: unknown): Promise<KubeObject> => {
    const ns = await namespaces.create(ctx, body);
    if (ctx.dryRun) return ns;
    const sa = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DefaultServiceAccount } };
    await serviceAccounts.create({ namespace: ns.metadata.name }, sa).catch((err: unknown) => {
      if (!(isApiError(err) && err.reason === 'AlreadyExists')) throw err;
    });
    return ns;
  };
  return Object.assign(Object.create(namespaces) as ResourceStore, { create });
};
