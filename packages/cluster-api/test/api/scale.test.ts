/** The scale subresource of ReplicationControllers over a real server, as `kubectl scale` and autoscalers use it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProtobuf } from '../../src/protobuf/codec.js';
import { namespace, startTestServer, TestToken, type TestServer } from '../support/helpers.js';

const base = '/api/v1/namespaces/scaling/replicationcontrollers';
const rc = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ReplicationController',
  metadata: { name },
  spec: { replicas: 2, selector: { tier: 'b', app: 'x' }, template: { metadata: { labels: { app: 'x', tier: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] } } },
});

describe('replicationcontrollers/scale', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer('sqlite');
    expect((await s.request('POST', '/api/v1/namespaces', { body: namespace('scaling') })).status).toBe(201);
    expect((await s.request('POST', base, { body: rc('web') })).status).toBe(201);
  });
  afterAll(() => s.close());

  it('is listed in discovery as autoscaling/v1 Scale with get, patch and update', async () => {
    const list = await s.request('GET', '/api/v1');
    expect(list.json.resources.find((r: { name: string }) => r.name === 'replicationcontrollers/scale')).toEqual({
      name: 'replicationcontrollers/scale', singularName: '', namespaced: true, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'],
    });
  });

  it('reads the replica counts and the selector, in JSON or in protobuf (autoscaling/v1 Scale)', async () => {
    const r = await s.request('GET', `${base}/web/scale`);
    expect([r.status, r.headers.get('content-type')]).toEqual([200, 'application/json']);
    expect(r.json).toMatchObject({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web', namespace: 'scaling' }, spec: { replicas: 2 }, status: { replicas: 0, selector: 'app=x,tier=b' } });
    const res = await fetch(`${s.url}${base}/web/scale`, { headers: { authorization: `Bearer ${TestToken}`, accept: 'application/vnd.kubernetes.protobuf' } });
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'application/vnd.kubernetes.protobuf']);
    expect(decodeProtobuf(Buffer.from(await res.arrayBuffer()))).toMatchObject({ kind: 'Scale', spec: { replicas: 2 }, status: { selector: 'app=x,tier=b' } });
  });

  it('sets spec.replicas by PUT, bumping generation and leaving the rest of the object alone', async () => {
    const before = (await s.request('GET', `${base}/web`)).json;
    const put = await s.request('PUT', `${base}/web/scale`, { body: { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web' }, spec: { replicas: 4 } } });
    expect([put.status, put.json.kind, put.json.spec.replicas]).toEqual([200, 'Scale', 4]);
    const after = (await s.request('GET', `${base}/web`)).json;
    expect(after.spec.replicas).toBe(4);
    expect(after.metadata.generation).toBe(before.metadata.generation + 1);
    expect(after.spec.template).toEqual(before.spec.template);
    expect(put.json.metadata.resourceVersion).toBe(after.metadata.resourceVersion);
  });

  it('sets spec.replicas by merge and JSON patch, as kubectl scale sends them', async () => {
    const merge = await s.request('PATCH', `${base}/web/scale`, { body: { spec: { replicas: 6 } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect([merge.status, merge.json.spec.replicas]).toEqual([200, 6]);
    const json = await s.request('PATCH', `${base}/web/scale`, { body: [{ op: 'replace', path: '/spec/replicas', value: 1 }], headers: { 'content-type': 'application/json-patch+json' } });
    expect([json.status, json.json.spec.replicas]).toEqual([200, 1]);
    expect((await s.request('GET', `${base}/web`)).json.spec.replicas).toBe(1);
  });

  it('refuses a stale resourceVersion (409), a bad count (422), another name (400); a missing object is 404', async () => {
    const stale = await s.request('PUT', `${base}/web/scale`, { body: { metadata: { name: 'web', resourceVersion: '1' }, spec: { replicas: 3 } } });
    expect([stale.status, stale.json.reason]).toEqual([409, 'Conflict']);
    for (const replicas of [-1, 1.5, 'three', null]) {
      const bad = await s.request('PUT', `${base}/web/scale`, { body: { metadata: { name: 'web' }, spec: { replicas } } });
      expect([bad.status, bad.json.reason, bad.json.details.causes[0].field]).toEqual([422, 'Invalid', 'spec.replicas']);
    }
    const badPatch = await s.request('PATCH', `${base}/web/scale`, { body: { spec: { replicas: -2 } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(badPatch.status).toBe(422);
    const other = await s.request('PUT', `${base}/web/scale`, { body: { metadata: { name: 'db' }, spec: { replicas: 3 } } });
    expect(other.status).toBe(400);
    expect((await s.request('GET', `${base}/nosuch/scale`)).status).toBe(404);
    expect((await s.request('GET', `${base}/web`)).json.spec.replicas).toBe(1);
  });

  it('exists only where Kubernetes has it: not on pods, and no create or delete', async () => {
    await s.request('POST', '/api/v1/namespaces/scaling/pods', { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } });
    expect((await s.request('GET', '/api/v1/namespaces/scaling/pods/p/scale')).status).toBe(404);
    expect((await s.request('DELETE', `${base}/web/scale`)).status).toBe(405);
  });
});
