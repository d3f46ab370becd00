import { describe, expect, it } from 'vitest';
import { hostsOf, pickRevision, requestHost, type Route } from './hosts.js';

const route: Route = {
  apiVersion: 'serving.knative.dev/v1', kind: 'Route', metadata: { name: 'hello', namespace: 'shop' },
  status: {
    url: 'http://hello.shop.localhost',
    address: { url: 'http://hello.shop.svc.cluster.local' },
    traffic: [
      { tag: 'old', revisionName: 'hello-00001', percent: 10, url: 'http://old-hello.shop.localhost' },
      { revisionName: 'hello-00002', percent: 90, latestRevision: true },
      { tag: 'next', revisionName: 'hello-00003', percent: 0, url: 'http://next-hello.shop.localhost' },
    ],
  },
};

describe('the gateway\'s hosts', () => {
  it('keys a Host header without its port, case or trailing dot; refuses what names no host', () => {
    expect(requestHost('Hello.Shop.LOCALHOST:8092')).toBe('hello.shop.localhost');
    expect(requestHost('hello.shop.localhost.')).toBe('hello.shop.localhost');
    expect(requestHost('[::1]:80')).toBe('[::1]');
    for (const bad of [undefined, '', '   ', ':80']) expect(requestHost(bad)).toBeUndefined();
  });

  it('answers on the URL, the cluster-local names and each tag\'s URL', () => {
    expect([...hostsOf(route)].map(([h, e]) => `${h} ${e.tag ?? ''}`.trim())).toEqual([
      'hello.shop.localhost', 'hello.shop.svc.cluster.local', 'hello.shop.svc', 'hello.shop', 'old-hello.shop.localhost old', 'next-hello.shop.localhost next',
    ]);
    expect([...hostsOf({ ...route, status: { url: 'not a url', traffic: [{ tag: 'x', url: '::' }] } }).keys()]).toEqual([]);
  });

  it('chooses by percent per request, a tag its own revision even at 0 %', () => {
    expect(pickRevision(route, undefined, 0)).toBe('hello-00001');
    expect(pickRevision(route, undefined, 0.0999)).toBe('hello-00001');
    expect(pickRevision(route, undefined, 0.1)).toBe('hello-00002');
    expect(pickRevision(route, undefined, 0.9999)).toBe('hello-00002');
    expect(pickRevision(route, 'next', 0.5)).toBe('hello-00003');
    expect(pickRevision(route, 'gone', 0.5)).toBeUndefined();
    expect(pickRevision({ ...route, status: {} }, undefined, 0.5)).toBeUndefined();
  });
});
