/**
 * ResourceQuota under concurrent creates through two API servers on one etcd: each server charges
 * the quota's status.used with the quota's resourceVersion before storing a pod, so 50 creates split
 * between them against `pods: 10` admit exactly 10, and both servers answer the others with
 * kube-apiserver's Forbidden.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServerProcess } from '../../testing/src/etcd-api-servers.js';
import { startEtcd, type EtcdCluster } from '../../testing/src/etcd-cluster.js';
import { until } from '../../testing/src/poll.js';
import { pod } from '../support/helpers.js';

let etcd: EtcdCluster;
let a: ApiServerProcess;
let b: ApiServerProcess;

beforeAll(async () => {
  etcd = await startEtcd({ members: 1, dataRoot: existsSync('/dev/shm') ? '/dev/shm' : undefined });
  [a, b] = await Promise.all([startApiServer(etcd.url), startApiServer(etcd.url)]);
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await etcd?.stop();
});

describe('a quota shared by two API servers on one etcd', () => {
  it('50 parallel creates split between the servers against pods: 10 admit exactly 10', async () => {
    expect((await a.request('POST', '/api/v1/namespaces', { metadata: { name: 'shared' } })).status).toBe(201);
    expect((await a.request('POST', '/api/v1/namespaces/shared/resourcequotas', { metadata: { name: 'ten' }, spec: { hard: { pods: '10' } } })).status).toBe(201);
    await until('the quota counted', async () => (await b.request('GET', '/api/v1/namespaces/shared/resourcequotas/ten')).json.status?.used?.pods === '0' || undefined);
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).request('POST', '/api/v1/namespaces/shared/pods', pod(`p${i}`))));
    expect(replies.filter((r) => r.status === 201)).toHaveLength(10);
    const refused = replies.filter((r) => r.status !== 201);
    expect(new Set(refused.map((r) => r.status))).toEqual(new Set([403]));
    for (const r of refused) expect(r.json.message).toMatch(/^pods "p\d+" is forbidden: exceeded quota: ten, requested: pods=1, used: pods=10, limited: pods=10$/);
    expect((await a.request('GET', '/api/v1/namespaces/shared/pods')).json.items).toHaveLength(10);
    expect((await b.request('GET', '/api/v1/namespaces/shared/resourcequotas/ten')).json.status.used).toEqual({ pods: '10' });
  });

  it('a malformed quota is 422 through either server', async () => {
    const bad = await b.request('POST', '/api/v1/namespaces/shared/resourcequotas', { metadata: { name: 'bad' }, spec: { hard: { pods: 'ten' } } });
    expect(bad.status).toBe(422);
    expect(bad.json.message).toBe(`ResourceQuota "bad" is invalid: spec.hard[pods]: Invalid value: "ten": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
  });
});
