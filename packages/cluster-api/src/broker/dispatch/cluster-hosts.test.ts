import { describe, expect, it } from 'vitest';
import { gatewayRouter, isClusterLocal } from './cluster-hosts.js';

describe('cluster-local addresses through the gateway', () => {
  it('knows a Knative cluster-local name, and nothing else', () => {
    expect(['hello.default.svc.cluster.local', 'hello.default.svc', 'HELLO.shop.svc.cluster.local.'].map(isClusterLocal)).toEqual([true, true, true]);
    expect(['hello.default.localhost', '127.0.0.1', 'svc.cluster.local', 'a.b.c.svc.cluster.local', 'example.com'].map(isClusterLocal)).toEqual([false, false, false, false, false]);
  });

  it('sends a cluster-local URL to the gateway with its name as the Host, path and query kept; others as they are', () => {
    const route = gatewayRouter(() => 'http://127.0.0.1:8092');
    const routed = route(new URL('http://hello.default.svc.cluster.local/log?msg=x'))!;
    expect({ connect: routed.connect.href, host: routed.host }).toEqual({ connect: 'http://127.0.0.1:8092/log?msg=x', host: 'hello.default.svc.cluster.local' });
    expect(route(new URL('http://127.0.0.1:9000/'))).toBeUndefined();
    expect(gatewayRouter(() => undefined)(new URL('http://hello.default.svc.cluster.local/'))).toBeUndefined();
  });
});
