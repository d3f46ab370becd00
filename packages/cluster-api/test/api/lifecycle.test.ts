/**
 * The deletion lifecycle over real HTTP with the built-in controllers running: DeleteOptions from
 * body and query, graceful pod deletion ended by the pod reaper, finalizers, the garbage collector
 * on a ReplicationController → Pod ownership chain under each propagation policy, and namespace
 * deletion end to end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namespace, startTestServer, type TestServer } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

let s: TestServer;
const NS = 'life';
const base = `/api/v1/namespaces/${NS}`;

beforeAll(async () => {
  s = await startTestServer('memory');
  expect((await s.request('POST', '/api/v1/namespaces', { body: namespace(NS) })).status).toBe(201);
});
afterAll(() => s.close());

const podBody = (name: string, grace: number, meta: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: 'chain' }, ...meta },
  // Scheduled: only a pod some node runs has a grace period to wait out.
  spec: { terminationGracePeriodSeconds: grace, nodeName: 'node-1', containers: [{ name: 'c', image: 'nginx' }] },
});
const status = async (path: string) => (await s.request('GET', path)).status;

describe('DeleteOptions', () => {
  it('rejects malformed and conflicting options, and checks preconditions', async () => {
    await s.request('POST', `${base}/pods`, { body: podBody('opts', 0) });
    const both = await s.request('DELETE', `${base}/pods/opts?orphanDependents=true`, { body: { propagationPolicy: 'Background' } });
    expect([both.status, both.json.reason]).toEqual([422, 'Invalid']);
    expect((await s.request('DELETE', `${base}/pods/opts`, { body: { gracePeriodSeconds: -1 } })).status).toBe(422);
    expect((await s.request('DELETE', `${base}/pods/opts?propagationPolicy=Sideways`)).status).toBe(400);
    expect((await s.request('DELETE', `${base}/pods/opts`, { body: '{"gracePeriodSeconds":' })).status).toBe(400);
    const pre = await s.request('DELETE', `${base}/pods/opts`, { body: { preconditions: { resourceVersion: '1' } } });
    expect([pre.status, pre.json.reason]).toEqual([409, 'Conflict']);
    expect(pre.json.message).toContain('Precondition failed: ResourceVersion in precondition: 1');
    expect((await s.request('DELETE', `${base}/pods/opts`)).status).toBe(200);
    expect(await status(`${base}/pods/opts`)).toBe(404);
  });
});

describe('graceful pod deletion', () => {
  it('marks the pod with its grace period and removes it when the period is over', async () => {
    await s.request('POST', `${base}/pods`, { body: podBody('slow', 1) });
    const del = await s.request('DELETE', `${base}/pods/slow`);
    expect(del.status).toBe(200);
    expect(del.json.metadata.deletionGracePeriodSeconds).toBe(1);
    expect(Date.parse(del.json.metadata.deletionTimestamp)).toBeGreaterThan(Date.now() - 1000);
    const again = await s.request('DELETE', `${base}/pods/slow`);
    expect(again.json.metadata.deletionTimestamp).toBe(del.json.metadata.deletionTimestamp);
    expect(await status(`${base}/pods/slow`)).toBe(200);
    await until('pod slow gone', async () => (await status(`${base}/pods/slow`)) === 404, { timeoutMs: 8000 });
  });

  it('defaults to 30 s, and gracePeriodSeconds=0 removes at once (also shortening a running grace period)', async () => {
    await s.request('POST', `${base}/pods`, { body: { ...podBody('dflt', 0), spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'nginx' }] } } });
    const marked = await s.request('DELETE', `${base}/pods/dflt`);
    expect(marked.json.metadata.deletionGracePeriodSeconds).toBe(30);
    const now = await s.request('DELETE', `${base}/pods/dflt?gracePeriodSeconds=0`);
    expect([now.status, now.json.kind, now.json.status]).toEqual([200, 'Status', 'Success']);
    expect(await status(`${base}/pods/dflt`)).toBe(404);
  });

  it('removes an unscheduled pod at once, as Kubernetes does, so `kubectl delete pod` does not wait', async () => {
    await s.request('POST', `${base}/pods`, { body: { ...podBody('pending', 30), spec: { terminationGracePeriodSeconds: 30, containers: [{ name: 'c', image: 'nginx' }] } } });
    const del = await s.request('DELETE', `${base}/pods/pending`);
    expect([del.status, del.json.kind, del.json.status]).toEqual([200, 'Status', 'Success']);
    expect(await status(`${base}/pods/pending`)).toBe(404);
  });
});

describe('finalizers', () => {
  it('keep a deleted object until an update removes the last one; none may be added meanwhile', async () => {
    const created = await s.request('POST', `${base}/secrets`, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
    expect(created.status).toBe(201);
    const del = await s.request('DELETE', `${base}/secrets/held`);
    expect([del.status, Boolean(del.json.metadata.deletionTimestamp)]).toEqual([200, true]);
    const add = await s.request('PATCH', `${base}/secrets/held`, {
      body: { metadata: { finalizers: ['example.com/hold', 'example.com/more'] } }, headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect([add.status, add.json.details.causes[0].field]).toEqual([422, 'metadata.finalizers']);
    const rm = await s.request('PATCH', `${base}/secrets/held`, { body: { metadata: { finalizers: null } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(rm.status).toBe(200);
    expect(await status(`${base}/secrets/held`)).toBe(404);
  });
});

describe('garbage collection of a ReplicationController and its pods', () => {
  const rcBody = (name: string) => ({
    apiVersion: 'v1', kind: 'ReplicationController', metadata: { name },
    spec: { replicas: 2, selector: { rc: name }, template: { metadata: { labels: { rc: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  });
  /** An RC owning two pods, as the replication manager would make them. */
  const chain = async (name: string, podMeta: Record<string, unknown> = {}) => {
    const rc = (await s.request('POST', `${base}/replicationcontrollers`, { body: rcBody(name) })).json;
    const ref = { apiVersion: 'v1', kind: 'ReplicationController', name, uid: rc.metadata.uid, controller: true, blockOwnerDeletion: true };
    for (const i of [1, 2]) {
      const r = await s.request('POST', `${base}/pods`, { body: podBody(`${name}-${i}`, 0, { labels: { rc: name }, ownerReferences: [ref], ...podMeta }) });
      expect(r.status).toBe(201);
    }
    return rc;
  };
  const podsOf = async (name: string) => (await s.request('GET', `${base}/pods?labelSelector=rc%3D${name}`)).json.items as any[];

  it('Background: the owner goes at once, then its dependents', async () => {
    await chain('bg');
    const del = await s.request('DELETE', `${base}/replicationcontrollers/bg`, { body: { propagationPolicy: 'Background' } });
    expect(del.json.status).toBe('Success');
    await until('the pods of bg gone', async () => (await podsOf('bg')).length === 0, { timeoutMs: 8000 });
  });

  it('Orphan (and the v1 default): the owner goes, the dependents stay without the reference', async () => {
    for (const [name, opts] of [['orphan', { propagationPolicy: 'Orphan' }], ['dflt', undefined]] as const) {
      await chain(name);
      const del = await s.request('DELETE', `${base}/replicationcontrollers/${name}`, opts ? { body: opts } : {});
      expect(del.json.metadata.finalizers).toEqual(['orphan']);
      await until(`replicationcontroller ${name} gone`, async () => (await status(`${base}/replicationcontrollers/${name}`)) === 404, { timeoutMs: 8000 });
      const pods = await podsOf(name);
      expect(pods.map((p) => [p.metadata.name, p.metadata.ownerReferences])).toEqual([[`${name}-1`, undefined], [`${name}-2`, undefined]]);
    }
  });

  it('Foreground: the owner waits, marked, until every blocking dependent is gone', async () => {
    await chain('fg', { finalizers: ['example.com/hold'] });
    const del = await s.request('DELETE', `${base}/replicationcontrollers/fg?propagationPolicy=Foreground`);
    expect([del.status, del.json.metadata.finalizers]).toEqual([200, ['foregroundDeletion']]);
    const marked = await until('the pods of fg marked for deletion', async () => {
      const items = await podsOf('fg');
      return items.every((p) => p.metadata.deletionTimestamp) && items;
    }, { timeoutMs: 8000 });
    expect(marked).toHaveLength(2);
    expect(await status(`${base}/replicationcontrollers/fg`)).toBe(200);
    for (const p of marked) {
      await s.request('PATCH', `${base}/pods/${p.metadata.name}`, { body: { metadata: { finalizers: null } }, headers: { 'content-type': 'application/merge-patch+json' } });
    }
    await until('replicationcontroller fg gone', async () => (await status(`${base}/replicationcontrollers/fg`)) === 404, { timeoutMs: 8000 });
    expect(await podsOf('fg')).toEqual([]);
  });

  it('a dependent with a remaining owner only loses the reference to the deleted one', async () => {
    const a = (await s.request('POST', `${base}/secrets`, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'owner-a' } } })).json;
    const b = (await s.request('POST', `${base}/secrets`, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'owner-b' } } })).json;
    const refs = [a, b].map((o) => ({ apiVersion: 'v1', kind: 'Secret', name: o.metadata.name, uid: o.metadata.uid }));
    await s.request('POST', `${base}/pods`, { body: podBody('shared', 0, { ownerReferences: refs }) });
    await s.request('DELETE', `${base}/secrets/owner-a`);
    const pod = await until('pod shared down to one owner', async () => {
      const p = (await s.request('GET', `${base}/pods/shared`)).json;
      return p.metadata.ownerReferences?.length === 1 && p;
    }, { timeoutMs: 8000 });
    expect(pod.metadata.ownerReferences[0].name).toBe('owner-b');
  });
});

describe('namespace deletion', () => {
  it('terminates, refuses new content with 403, empties the namespace, finalizes and disappears', async () => {
    expect((await s.request('POST', '/api/v1/namespaces', { body: namespace('doomed') })).status).toBe(201);
    const nsBase = '/api/v1/namespaces/doomed';
    await s.request('POST', `${nsBase}/pods`, { body: podBody('p0', 0) });
    await s.request('POST', `${nsBase}/pods`, { body: podBody('p1', 1) });
    await s.request('POST', `${nsBase}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' }, spec: { ports: [{ port: 80 }] } } });
    const del = await s.request('DELETE', nsBase);
    expect([del.status, del.json.status.phase, del.json.spec.finalizers]).toEqual([200, 'Terminating', ['kubernetes']]);
    const refused = await s.request('POST', `${nsBase}/pods`, { body: podBody('late', 0) });
    expect([refused.status, refused.json.reason, refused.json.message]).toEqual([403, 'Forbidden',
      'pods "late" is forbidden: unable to create new content in namespace doomed because it is being terminated']);
    expect(refused.json.details.causes).toEqual([{ reason: 'NamespaceTerminating', message: 'namespace doomed is being terminated', field: 'metadata.namespace' }]);
    await until('the namespace gone', async () => (await status(nsBase)) === 404, { timeoutMs: 8000 });
    for (const kind of ['pods', 'services', 'serviceaccounts']) {
      expect((await s.request('GET', `${nsBase}/${kind}`)).json.items).toEqual([]);
    }
  });

  it('refuses to delete the namespaces the server keeps, as NamespaceLifecycle does', async () => {
    for (const name of ['default', 'kube-system', 'kube-public']) {
      const r = await s.request('DELETE', `/api/v1/namespaces/${name}`);
      expect([r.status, r.json.reason, r.json.message]).toEqual([403, 'Forbidden', `namespaces "${name}" is forbidden: this namespace may not be deleted`]);
    }
  });
});
