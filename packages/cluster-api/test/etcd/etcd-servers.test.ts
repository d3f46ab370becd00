/**
 * Several `cluster-api serve` processes on one etcd behave as one API: what is written through one
 * is read and watched through the other at the same resourceVersion, and optimistic locking holds
 * across them.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWatch, startApiServer, type ApiServerProcess } from '../../testing/src/etcd-api-servers.js';
import { startEtcd, type EtcdCluster } from '../../testing/src/etcd-cluster.js';
import { pod } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

let etcd: EtcdCluster;
let a: ApiServerProcess;
let b: ApiServerProcess;

beforeAll(async () => {
  etcd = await startEtcd({ members: 1, dataRoot: existsSync('/dev/shm') ? '/dev/shm' : undefined });
  [a, b] = await Promise.all([startApiServer(etcd.url), startApiServer(etcd.url)]);
  expect((await a.request('POST', '/api/v1/namespaces', { metadata: { name: 'shared' } })).status).toBe(201);
});

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await etcd?.stop();
});

describe('two API servers on one etcd', () => {
  it('a create through one is read through the other at the same resourceVersion', async () => {
    const created = await a.request('POST', '/api/v1/namespaces/shared/pods', pod('p1', { app: 'x' }));
    expect(created.status).toBe(201);
    const got = await b.request('GET', '/api/v1/namespaces/shared/pods/p1');
    expect(got.status).toBe(200);
    expect(got.json.metadata).toMatchObject({ uid: created.json.metadata.uid, resourceVersion: created.json.metadata.resourceVersion });
    const [la, lb] = await Promise.all([a.request('GET', '/api/v1/namespaces/shared/pods'), b.request('GET', '/api/v1/namespaces/shared/pods')]);
    expect(lb.json.items.map((p: any) => p.metadata.name)).toEqual(la.json.items.map((p: any) => p.metadata.name));
    // Both servers read the one etcd revision: the list RV of each is at least the write's.
    for (const l of [la, lb]) expect(Number(l.json.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(created.json.metadata.resourceVersion));
  });

  it('a watch through one server sees writes made through the other, in order, with their resourceVersions', async () => {
    const list = await b.request('GET', '/api/v1/namespaces/shared/pods');
    const watch = await openWatch(b, `/api/v1/namespaces/shared/pods?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`);
    try {
      const c = await a.request('POST', '/api/v1/namespaces/shared/pods', pod('p2'));
      const u = await a.request('PUT', '/api/v1/namespaces/shared/pods/p2', { ...c.json, metadata: { ...c.json.metadata, labels: { v: '2' } } });
      const d = await a.request('DELETE', '/api/v1/namespaces/shared/pods/p2?gracePeriodSeconds=0');
      expect([c.status, u.status, d.status]).toEqual([201, 200, 200]);
      // A pod delete may pass through MODIFIED (deletionTimestamp) before DELETED, as graceful deletion does.
      await until('the DELETED event', () => watch.events.some((e) => e.type === 'DELETED'), { timeoutMs: 15_000 });
      const types = watch.events.map((e) => e.type);
      expect(types.slice(0, 2)).toEqual(['ADDED', 'MODIFIED']);
      expect(types.at(-1)).toBe('DELETED');
      expect(watch.events.every((e) => e.object.metadata.name === 'p2')).toBe(true);
      const rvs = watch.events.map((e) => Number(e.object.metadata.resourceVersion));
      expect(rvs).toEqual([...rvs].sort((x, y) => x - y));
      expect(watch.events[0].object.metadata.resourceVersion).toBe(c.json.metadata.resourceVersion);
      expect(watch.events[1].object.metadata.resourceVersion).toBe(u.json.metadata.resourceVersion);
      expect(watch.events[1].object.metadata.labels).toEqual({ v: '2' });
    } finally {
      watch.close();
    }
  });

  it('an optimistic-lock conflict is detected whichever server each writer used', async () => {
    const base = await a.request('POST', '/api/v1/namespaces/shared/pods', pod('p3'));
    const seenByB = await b.request('GET', '/api/v1/namespaces/shared/pods/p3');
    expect(seenByB.json.metadata.resourceVersion).toBe(base.json.metadata.resourceVersion);
    const fromA = await a.request('PUT', '/api/v1/namespaces/shared/pods/p3', { ...base.json, metadata: { ...base.json.metadata, labels: { by: 'a' } } });
    expect(fromA.status).toBe(200);
    const fromB = await b.request('PUT', '/api/v1/namespaces/shared/pods/p3', { ...seenByB.json, metadata: { ...seenByB.json.metadata, labels: { by: 'b' } } });
    expect(fromB.status).toBe(409);
    expect(fromB.json).toMatchObject({ kind: 'Status', reason: 'Conflict', code: 409 });
    expect((await b.request('GET', '/api/v1/namespaces/shared/pods/p3')).json.metadata.labels).toEqual({ by: 'a' });
    // Racing writers through both servers with one resourceVersion: exactly one wins.
    const rv = fromA.json;
    const race = await Promise.all(
      [a, b, a, b].map((s, i) => s.request('PUT', '/api/v1/namespaces/shared/pods/p3', { ...rv, metadata: { ...rv.metadata, labels: { by: `w${i}` } } })),
    );
    expect(race.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
  });

  it('a create of one name through both servers at once: one 201, one 409 AlreadyExists', async () => {
    const [x, y] = await Promise.all([a.request('POST', '/api/v1/namespaces/shared/pods', pod('p4')), b.request('POST', '/api/v1/namespaces/shared/pods', pod('p4'))]);
    expect([x.status, y.status].sort()).toEqual([201, 409]);
    expect([x.json.reason, y.json.reason]).toContain('AlreadyExists');
  });
});
