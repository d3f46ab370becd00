import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../storage/memory/memory.js';
import { createRegistry, ensureSystemNamespaces } from '../index.js';
import { ensureKubernetesService, kubernetesServiceIP } from './kubernetes-service.js';

const ctx = { namespace: 'default' };

describe('the kubernetes Service', () => {
  it('is the first address after the range\'s network address; a malformed range is refused', () => {
    expect(kubernetesServiceIP('10.96.0.0/12')).toBe('10.96.0.1');
    expect(kubernetesServiceIP('10.7.0.0/16')).toBe('10.7.0.1');
    expect(kubernetesServiceIP()).toBe('10.96.0.1');
    expect(() => kubernetesServiceIP('10.7.0.0')).toThrow('not an IPv4 CIDR: 10.7.0.0');
  });

  it('is created once with its Endpoints at the API server; a restart on another port moves the Endpoints and keeps the Service', async () => {
    const registry = createRegistry(new MemoryStorage(), { serviceClusterIpRange: '10.7.0.0/16' });
    await ensureSystemNamespaces(registry);
    await ensureKubernetesService(registry, '10.7.0.0/16', '127.0.0.1', 6443);
    const services = registry.find('', 'v1', 'services')!;
    const endpoints = registry.find('', 'v1', 'endpoints')!;
    const svc = await services.get(ctx, 'kubernetes');
    expect(svc.metadata.labels).toEqual({ component: 'apiserver', provider: 'kubernetes' });
    expect(svc.spec).toMatchObject({ type: 'ClusterIP', clusterIP: '10.7.0.1', ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }] });
    expect((svc.spec as { selector?: unknown }).selector).toBeUndefined();
    expect((await endpoints.get(ctx, 'kubernetes') as { subsets?: unknown }).subsets).toEqual([{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: 6443, protocol: 'TCP' }] }]);

    await ensureKubernetesService(registry, '10.7.0.0/16', '127.0.0.1', 7443);
    expect((await services.get(ctx, 'kubernetes')).metadata.uid).toBe(svc.metadata.uid);
    expect((await endpoints.get(ctx, 'kubernetes') as { subsets?: unknown }).subsets).toEqual([{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: 7443, protocol: 'TCP' }] }]);
  });
});
