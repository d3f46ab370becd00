/**
 * The `kubernetes` Service of the `default` namespace, as kube-apiserver's bootstrap controller keeps
 * it: the first address of the Service range (kept for it by the allocator), port 443 named `https`,
 * no selector, and Endpoints of the same name holding the API server's own address and port
 * (rewritten at every start: the port may change). Pods reach the API through it
 * (`KUBERNETES_SERVICE_HOST`, `kubernetes.default.svc`), by way of their node's service proxy.
 */
import { isApiError } from '../../api/errors.js';
import type { Registry } from '../rest.js';
import { parseRange, ServiceCIDR, toIP } from './service-allocator.js';

const Labels = { component: 'apiserver', provider: 'kubernetes' };

/** The `kubernetes` Service's clusterIP in `range`: its first address after the network's. */
export const kubernetesServiceIP = (range = ServiceCIDR): string => {
  const r = parseRange(range);
  if (!r) throw new Error(`not an IPv4 CIDR: ${range}`);
  return toIP(r.base + 1);
};

const ignoreExists = (err: unknown) => {
  if (!(isApiError(err) && err.reason === 'AlreadyExists')) throw err;
};
const orMissing = (err: unknown) => {
  if (isApiError(err) && err.reason === 'NotFound') return undefined;
  throw err;
};

/** Create the Service when missing (kept as it is when there); point its Endpoints at `address:port` (the API server listening now). */
export async function ensureKubernetesService(registry: Pick<Registry, 'find'>, range: string | undefined, address: string, port: number): Promise<void> {
  const ctx = { namespace: 'default' };
  const services = registry.find('', 'v1', 'services')!;
  const endpoints = registry.find('', 'v1', 'endpoints')!;
  // Looked up first: a create of an existing Service fails on its clusterIP (already allocated) before its name.
  if (!(await services.get(ctx, 'kubernetes').catch(orMissing))) {
    await services.create(ctx, {
      metadata: { name: 'kubernetes', namespace: 'default', labels: Labels },
      spec: { type: 'ClusterIP', clusterIP: kubernetesServiceIP(range), sessionAffinity: 'None', ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: port }] },
    }).catch(ignoreExists);
  }
  const subsets = [{ addresses: [{ ip: address }], ports: [{ name: 'https', port, protocol: 'TCP' }] }];
  const current = await endpoints.get(ctx, 'kubernetes').catch(orMissing);
  if (!current) return void (await endpoints.create(ctx, { metadata: { name: 'kubernetes', namespace: 'default', labels: Labels }, subsets }).catch(ignoreExists));
  await endpoints.update(ctx, 'kubernetes', { ...current, subsets });
}
