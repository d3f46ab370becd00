/**
 * What a node agent's credentials allow, end to end through the authorizer chain (Node,RBAC) and
 * NodeRestriction admission: its own Node and Lease, created and renewed; another node's refused
 * with kube-apiserver's messages, as are pods and Secrets it has no business with.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerWithUsers, type TestServer } from '../support/helpers.js';

const node = (name: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
const lease = (name: string) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: name, leaseDurationSeconds: 40 } });
const leases = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';

describe('a node\'s credentials', () => {
  let s: TestServer;
  const asNode = (method: string, path: string, body?: unknown) => s.request(method, path, { body, token: 'node-a-token' });
  beforeAll(async () => (s = await startServerWithUsers()));
  afterAll(async () => s?.close());

  it('create and renew its own Node and Lease', async () => {
    expect((await asNode('POST', '/api/v1/nodes', node('a'))).status).toBe(201);
    expect((await asNode('POST', leases, lease('a'))).status).toBe(201);
    const got = await asNode('GET', `${leases}/a`);
    expect(got.status).toBe(200);
    expect((await asNode('PUT', `${leases}/a`, { ...got.json, spec: { ...got.json.spec, leaseDurationSeconds: 20 } })).status).toBe(200);
  });

  it('create no other node\'s Node or Lease, as NodeRestriction refuses them', async () => {
    const other = await asNode('POST', '/api/v1/nodes', node('b'));
    expect(other.status).toBe(403);
    expect(other.json.message).toBe('nodes "b" is forbidden: node "a" is not allowed to modify node "b"');
    const otherLease = await asNode('POST', leases, lease('b'));
    expect(otherLease.status).toBe(403);
    expect(otherLease.json.message).toBe('leases.coordination.k8s.io "b" is forbidden: can only access node lease with the same name as the requesting node');
    expect((await s.request('GET', '/api/v1/nodes/b')).status).toBe(404);
    expect((await s.request('GET', `${leases}/b`)).status).toBe(404);
  });

  it('leave the admin free to write any Node', async () => {
    expect((await s.request('POST', '/api/v1/nodes', { body: node('b') })).status).toBe(201);
  });

  it('change no other node\'s Lease and read no Secret its pods do not reference', async () => {
    expect((await s.request('POST', leases, { body: lease('b') })).status).toBe(201);
    const gone = await asNode('DELETE', `${leases}/b`);
    expect(gone.status).toBe(403);
    expect(gone.json.message).toMatch(/can only access node lease with the same name as the requesting node/);
    expect((await s.request('POST', '/api/v1/namespaces/default/secrets', { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db' } } })).status).toBe(201);
    const secret = await asNode('GET', '/api/v1/namespaces/default/secrets/db');
    expect(secret.status).toBe(403);
    expect(secret.json.message).toMatch(/no relationship found between node 'a' and this object/);
    expect((await asNode('POST', '/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } })).status).toBe(403);
  });
});
