/**
 * kube-client's LeaderElector over any ApiClient: the three Lease calls it makes, with ApiErrors
 * turned into the KubeApiErrors it tells a conflict and a missing Lease by.
 */
import { KubeApiError, type LeaseClient } from '@func/kube-client';
import { isApiError } from '../api/errors.js';
import type { KubeObject } from '../api/meta.js';
import type { ApiClient } from './interface.js';

export const asKubeError = (what: string) => (err: unknown): never => {
  if (!isApiError(err)) throw err;
  throw new KubeApiError({ kind: 'Status', status: 'Failure', code: err.code, reason: err.reason, message: err.message }, err.code, what);
};

export function leaseClient(api: ApiClient): LeaseClient {
  const leases = () => {
    const found = api.find('coordination.k8s.io', 'v1', 'leases');
    if (!found) throw new KubeApiError({ code: 404, reason: 'NotFound', message: 'leases are not served' }, 404, 'leases');
    return found;
  };
  const client = {
    get: async (_type: unknown, name: string, opts: { namespace?: string } = {}) => leases().get({ namespace: opts.namespace }, name).catch(asKubeError(`get leases/${name}`)),
    create: async (_type: unknown, obj: KubeObject, opts: { namespace?: string } = {}) =>
      (await leases().create({ namespace: opts.namespace ?? obj.metadata.namespace }, { ...obj, apiVersion: obj.apiVersion ?? 'coordination.k8s.io/v1', kind: obj.kind ?? 'Lease' }).catch(asKubeError('create leases'))).object,
    update: async (_type: unknown, obj: KubeObject, opts: { namespace?: string } = {}) =>
      (await leases().update({ namespace: opts.namespace ?? obj.metadata.namespace }, obj.metadata.name!, obj).catch(asKubeError(`update leases/${obj.metadata.name}`))).object,
  };
  return client as unknown as LeaseClient;
}
