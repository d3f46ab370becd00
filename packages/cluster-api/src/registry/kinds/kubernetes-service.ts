/**
 * The `kubernetes` Service of the `default` namespace, as kube-apiserver's bootstrap controller keeps
 * it: the first address of the Service range (kept for it by the allocator), port 443 named `https`,
 * no selector, and Endpoints of the same name holding the API server's own address and port
 * (rewritten at every start: the port may change). Pods reach the API through it
 * (`KUBERNETES_SERVICE_HOST`, `kubernetes.default.svc`), by way of their node's service proxy.
 * Beside it, the cluster DNS's `kube-system/kube-dns` Service.
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

/** The cluster DNS Service's clusterIP in `range`: its tenth address (as kubeadm and k3s give `kube-dns`). */
export const clusterDnsIP = (range = ServiceCIDR): string => {
  const r = parseRange(range);
  if (!r) throw new Error(`not an IPv4 CIDR: ${range}`);
  return toIP(r.base + 10);
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

/**
 * The `kube-dns` Service of `kube-system` (the name clients and kubeadm's clusters use) on the
 * range's tenth address, DNS on UDP and TCP port 53, no selector: each node answers on that address
 * itself (node/dns/), as CoreDNS's pods would behind it.
 */
export async function ensureClusterDnsService(registry: Pick<Registry, 'find'>, range: string | undefined): Promise<void> {
  const ctx = { namespace: 'kube-system' };
  const services = registry.find('', 'v1', 'services')!;
  if (await services.get(ctx, 'kube-dns').catch(orMissing)) return;
  await services.create(ctx, {
    metadata: { name: 'kube-dns', namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns', 'kubernetes.io/name': 'CoreDNS', 'kubernetes.io/cluster-service': 'true' } },
    spec: { type: 'ClusterIP', clusterIP: clusterDnsIP(range), ports: [{ name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 }, { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 }] },
  }).catch(ignoreExists);
}
