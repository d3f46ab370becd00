import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { emit } from '../../sources/emit.js';
import { send } from './sender.js';
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

  it('a send and a source\'s emit reach the gateway with the cluster-local Host (a real server on 127.0.0.1)', async () => {
    const seen: string[] = [];
    const gateway = createServer((req, res) => (seen.push(`${req.headers.host} ${req.url} ${req.headers['ce-type']}`), res.writeHead(202).end()));
    await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
    try {
      const router = gatewayRouter(() => `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`);
      const event = { attributes: { specversion: '1.0', id: '1', source: '/t', type: 'test.routed' } };
      expect(await send('http://audit.default.svc.cluster.local/in?x=1', event, { timeoutMs: 5000, preferReply: false, maxReplyBytes: 1024, router })).toEqual({ kind: 'done' });
      expect((await emit('http://audit.default.svc.cluster.local/', event, undefined, router)).kind).toBe('done');
      expect(seen).toEqual(['audit.default.svc.cluster.local /in?x=1 test.routed', 'audit.default.svc.cluster.local / test.routed']);
    } finally {
      gateway.close();
    }
  });
});
