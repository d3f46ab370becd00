import { describe, expect, it } from 'vitest';
import { DefaultDomain, domainFor, routeHost } from './domain.js';

const route = (labels: Record<string, string> = {}) => ({ apiVersion: 'serving.knative.dev/v1', kind: 'Route', metadata: { name: 'hello', namespace: 'shop', labels } });

describe('Route domains (config-domain)', () => {
  it('defaults to localhost, and takes the default domain and the most specific selector of the ConfigMap', () => {
    expect(domainFor({}, undefined)).toBe(DefaultDomain);
    const data = { 'example.com': '', 'apps.example.com': 'selector:\n  app: web\n', 'prod.example.com': 'selector:\n  app: web\n  env: prod\n', _example: 'ignored' };
    expect(domainFor({}, data)).toBe('example.com');
    expect(domainFor({ app: 'web' }, data)).toBe('apps.example.com');
    expect(domainFor({ app: 'web', env: 'prod' }, data)).toBe('prod.example.com');
  });

  it('ignores a value that is not a selector', () => {
    expect(domainFor({}, { 'bad.example.com': 'selector: [1, 2' , 'list.example.com': '- a' })).toBe(DefaultDomain);
  });

  it('makes {{.Name}}.{{.Namespace}}.{{.Domain}}, tag hosts, and the cluster-local name for cluster-local Routes', () => {
    expect(routeHost(route(), 'localhost')).toBe('hello.shop.localhost');
    expect(routeHost(route(), 'localhost', 'old')).toBe('old-hello.shop.localhost');
    expect(routeHost(route({ 'networking.knative.dev/visibility': 'cluster-local' }), 'localhost')).toBe('hello.shop.svc.cluster.local');
  });
});
