/** pods/{name}/binding over a real server: how a scheduler assigns a pod to a node, in JSON and protobuf. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProtobuf, encodeProtobuf, ProtobufMediaType } from '../../src/protobuf/codec.js';
import { namespace, startTestServer, TestToken, type TestServer } from '../support/helpers.js';

const base = '/api/v1/namespaces/sched/pods';
const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] } });
const binding = (name: string, node: string, extra: Record<string, unknown> = {}) =>
  ({ apiVersion: 'v1', kind: 'Binding', metadata: { name, ...extra }, target: { apiVersion: 'v1', kind: 'Node', name: node } });

describe('pods/binding', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer('memory');
    expect((await s.request('POST', '/api/v1/namespaces', { body: namespace('sched') })).status).toBe(201);
    for (const name of ['a', 'b', 'c', 'd']) expect((await s.request('POST', base, { body: pod(name) })).status).toBe(201);
  });
  afterAll(() => s.close());

  it('is listed in discovery as a create-only Binding subresource', async () => {
    const list = await s.request('GET', '/api/v1');
    expect(list.json.resources.find((r: { name: string }) => r.name === 'pods/binding')).toEqual({ name: 'pods/binding', singularName: '', namespaced: true, kind: 'Binding', verbs: ['create'] });
  });

  it('assigns the node once: spec.nodeName, the binding\'s annotations, PodScheduled; a Success Status', async () => {
    const r = await s.request('POST', `${base}/a/binding`, { body: binding('a', 'node-1', { annotations: { 'scheduler/why': 'least loaded' } }) });
    expect([r.status, r.json]).toEqual([201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }]);
    const bound = (await s.request('GET', `${base}/a`)).json;
    expect(bound.spec.nodeName).toBe('node-1');
    expect(bound.metadata.annotations).toEqual({ 'openshift.io/scc': 'anyuid', 'scheduler/why': 'least loaded' });
    expect(bound.status.conditions).toEqual([expect.objectContaining({ type: 'PodScheduled', status: 'True' })]);
    const again = await s.request('POST', `${base}/a/binding`, { body: binding('a', 'node-2') });
    expect([again.status, again.json.message]).toEqual([409, 'Operation cannot be fulfilled on pods "a": pod a is already assigned to node "node-1"']);
    // A bound pod is deleted gracefully, as a scheduled pod is.
    expect((await s.request('DELETE', `${base}/a`)).json.metadata.deletionGracePeriodSeconds).toBe(30);
  });

  it('reads a protobuf Binding, as a scheduler built on client-go sends it', async () => {
    const res = await fetch(`${s.url}${base}/b/binding`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TestToken}`, 'content-type': ProtobufMediaType, accept: `${ProtobufMediaType}, application/json` },
      body: encodeProtobuf(binding('b', 'node-3')),
    });
    expect(res.status).toBe(201);
    expect(decodeProtobuf(new Uint8Array(await res.arrayBuffer()))).toMatchObject({ kind: 'Status', status: 'Success' });
    expect((await s.request('GET', `${base}/b`)).json.spec.nodeName).toBe('node-3');
  });

  it('refuses a malformed binding, another pod\'s, a missing pod and one being deleted', async () => {
    const post = (name: string, body: unknown) => s.request('POST', `${base}/${name}/binding`, { body });
    const noTarget = await post('c', { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'c' }, target: { kind: 'Service' } });
    expect([noTarget.status, noTarget.json.details.causes.map((c: { field: string }) => c.field)]).toEqual([422, ['target.kind', 'target.name']]);
    expect((await post('c', binding('other', 'node-1'))).json).toMatchObject({ code: 400, message: 'name in URL does not match name in Binding object' });
    expect((await post('c', { kind: 'Pod' })).status).toBe(400);
    expect((await post('c', '{"target":')).status).toBe(400);
    expect((await post('nosuch', binding('nosuch', 'node-1'))).status).toBe(404);
    expect((await s.request('GET', `${base}/c`)).json.spec.nodeName).toBeUndefined();
    // A finalizer keeps a deleted, unscheduled pod: it is being deleted, so no node may take it.
    await s.request('POST', base, { body: { ...pod('held'), metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
    expect((await s.request('DELETE', `${base}/held`)).json.metadata.deletionTimestamp).toBeDefined();
    const deleting = await post('held', binding('held', 'node-1'));
    expect([deleting.status, deleting.json.message]).toEqual([409, 'Operation cannot be fulfilled on pods "held": pod held is being deleted, cannot be assigned to a host']);
    expect((await s.request('GET', `${base}/d/binding`)).status).toBe(405);
  });
});
