import { describe, expect, it } from 'vitest';
import { serviceLinkEnv, serviceVariables } from './service-links.js';

const api = { namespace: 'default', name: 'kubernetes', clusterIP: '10.0.0.1', ports: [{ name: 'https', port: 443, protocol: 'TCP' }] };

describe('service links', () => {
  it('gives a Service the kubelet\'s variables: host, ports by name, and the Docker-link forms', () => {
    expect(serviceVariables({ namespace: 'shop', name: 'my-db', clusterIP: '10.0.0.7', ports: [{ name: 'sql', port: 5432 }, { name: 'metrics-port', port: 9187, protocol: 'UDP' }] })).toEqual({
      MY_DB_SERVICE_HOST: '10.0.0.7', MY_DB_SERVICE_PORT: '5432', MY_DB_SERVICE_PORT_SQL: '5432', MY_DB_SERVICE_PORT_METRICS_PORT: '9187',
      MY_DB_PORT: 'tcp://10.0.0.7:5432',
      MY_DB_PORT_5432_TCP: 'tcp://10.0.0.7:5432', MY_DB_PORT_5432_TCP_PROTO: 'tcp', MY_DB_PORT_5432_TCP_PORT: '5432', MY_DB_PORT_5432_TCP_ADDR: '10.0.0.7',
      MY_DB_PORT_9187_UDP: 'udp://10.0.0.7:9187', MY_DB_PORT_9187_UDP_PROTO: 'udp', MY_DB_PORT_9187_UDP_PORT: '9187', MY_DB_PORT_9187_UDP_ADDR: '10.0.0.7',
    });
    expect(serviceVariables({ namespace: 'a', name: 'v6', clusterIP: 'fd00::5', ports: [{ port: 80 }] }).V6_PORT).toBe('tcp://[fd00::5]:80');
  });

  it('gives nothing for a headless Service or one without ports', () => {
    expect(serviceVariables({ namespace: 'a', name: 'h', clusterIP: 'None', ports: [{ port: 80 }] })).toEqual({});
    expect(serviceVariables({ namespace: 'a', name: 'h', clusterIP: '10.0.0.9', ports: [] })).toEqual({});
  });

  it('links the pod\'s namespace\'s Services and always the API, unless links are off', () => {
    const services = [{ namespace: 'shop', name: 'web', clusterIP: '10.0.0.2', ports: [{ port: 80 }] }, { namespace: 'other', name: 'far', clusterIP: '10.0.0.3', ports: [{ port: 80 }] }];
    const linked = serviceLinkEnv('shop', true, services, api);
    expect(linked.WEB_SERVICE_HOST).toBe('10.0.0.2');
    expect(linked.FAR_SERVICE_HOST).toBeUndefined();
    expect(linked).toMatchObject({ KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443', KUBERNETES_SERVICE_PORT_HTTPS: '443', KUBERNETES_PORT_443_TCP_ADDR: '10.0.0.1' });
    const unlinked = serviceLinkEnv('shop', false, services, api);
    expect(Object.keys(unlinked).every((k) => k.startsWith('KUBERNETES_'))).toBe(true);
    expect(unlinked.KUBERNETES_SERVICE_HOST).toBe('10.0.0.1');
  });
});
