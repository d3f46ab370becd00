import { describe, expect, it } from 'vitest';
import { referencedResource } from './resources.js';
import { endpointUrls, servicePort } from './resolver.js';
import { crdServes } from './feed.js';
import { sameJson } from './trigger-source.js';

describe('reaching a Service through its Endpoints', () => {
  it("takes the Service's port 80, else its first", () => {
    expect(servicePort({ spec: { ports: [{ name: 'metrics', port: 9090 }, { name: 'http', port: 80 }] } })).toEqual({ name: 'http', port: 80 });
    expect(servicePort({ spec: { ports: [{ port: 8080 }] } })).toEqual({ port: 8080 });
    expect(servicePort({ spec: {} })).toBeUndefined();
  });

  it('goes to a ready address on the endpoint port of the same name', () => {
    const ep = { subsets: [
      { addresses: [{ ip: '10.0.0.9' }], ports: [{ name: 'metrics', port: 9090 }] },
      { addresses: [{ ip: '10.0.0.3' }, { ip: '10.0.0.2' }], ports: [{ name: 'http', port: 8080 }] },
    ] };
    expect(endpointUrls('Service "ns/fn"', { name: 'http', port: 80 }, ep)).toEqual(['http://10.0.0.2:8080/', 'http://10.0.0.3:8080/']);
    expect(endpointUrls('Service "ns/fn"', { port: 80 }, { subsets: [{ addresses: [{ ip: 'fd00::1' }], ports: [{ port: 8080 }] }] })).toEqual(['http://[fd00::1]:8080/']);
  });

  it('gives every ready endpoint of the port, across subsets, once each', () => {
    const ep = { subsets: [
      { addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'http', port: 8081 }] },
      { addresses: [{ ip: '127.0.0.1' }, { ip: '127.0.0.1' }], notReadyAddresses: [{ ip: '127.0.0.9' }], ports: [{ name: 'http', port: 8080 }] },
    ] };
    expect(endpointUrls('Service "ns/fn"', { name: 'http', port: 80 }, ep)).toEqual(['http://127.0.0.1:8080/', 'http://127.0.0.1:8081/']);
  });

  it.each([
    [undefined, 'Service "ns/fn" has no Endpoints'],
    [{}, 'Service "ns/fn" has no ready endpoint for port "http"'],
    [{ subsets: [{ notReadyAddresses: [{ ip: '10.0.0.1' }], ports: [{ name: 'http', port: 8080 }] }] }, 'Service "ns/fn" has no ready endpoint for port "http"'],
    [{ subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ name: 'grpc', port: 9000 }] }] }, 'Service "ns/fn" has no ready endpoint for port "http"'],
  ])('says why %j cannot be reached', (ep, message) => {
    expect(() => endpointUrls('Service "ns/fn"', { name: 'http', port: 80 }, ep as never)).toThrow(message);
  });
});

describe('the pieces around it', () => {
  it("names a referenced kind's resource as Knative's resolver does", () => {
    expect(referencedResource('serving.knative.dev/v1', 'Service')).toMatchObject({ group: 'serving.knative.dev', version: 'v1', plural: 'services' });
    expect(referencedResource('messaging.knative.dev/v1', 'InMemoryChannel').plural).toBe('inmemorychannels');
    expect(referencedResource('example.com/v1', 'Address').plural).toBe('addresses');
  });

  it('serves a kind only while its CRD is Established with the version, and not being deleted', () => {
    const crd = (over: object = {}) => ({ metadata: { name: 'brokers.eventing.knative.dev' }, spec: { versions: [{ name: 'v1', served: true }] }, status: { conditions: [{ type: 'Established', status: 'True' }] }, ...over });
    expect(crdServes(crd(), 'v1')).toBe(true);
    expect(crdServes(crd(), 'v1beta1')).toBe(false);
    expect(crdServes(crd({ status: { conditions: [{ type: 'Established', status: 'False' }] } }), 'v1')).toBe(false);
    expect(crdServes(crd({ metadata: { name: 'x', deletionTimestamp: '2026-01-01T00:00:00Z' } }), 'v1')).toBe(false);
    expect(crdServes(crd({ spec: { versions: [{ name: 'v1', served: false }] } }), 'v1')).toBe(false);
    expect(crdServes(undefined, 'v1')).toBe(false);
  });

  it('compares statuses as JSON values, whatever the key order', () => {
    expect(sameJson({ a: 1, b: [{ c: 'x', d: true }] }, { b: [{ d: true, c: 'x' }], a: 1 })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 1, b: undefined })).toBe(true);
    expect(sameJson({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(sameJson({ a: {} }, { a: [] })).toBe(false);
    expect(sameJson(undefined, {})).toBe(false);
  });
});
