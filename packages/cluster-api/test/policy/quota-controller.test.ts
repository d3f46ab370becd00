/**
 * The resource quota controller over HTTP on a real SQLite file: it counts what a namespace held
 * before its quota (per scope, per kind, `count/<resource>.<group>`), gives usage back when objects
 * go, and stops counting a pod being deleted once its grace period has passed although the pod is
 * still there (its node never finishes it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../testing/src/poll.js';
import { freshNamespace, startWorkloadServer, type Call } from '../support/workload-helpers.js';

const podBody = (name: string, spec: Record<string, unknown> = {}, resources: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'app', image: 'nginx', resources }], ...spec },
});

describe('the resource quota controller', () => {
  let call: Call;
  let close: () => Promise<void>;
  beforeAll(async () => ({ call, close } = await startWorkloadServer('sqlite')), 60_000);
  afterAll(async () => close?.());

  const used = async (ns: string, name: string) => (await call('GET', `/api/v1/namespaces/${ns}/resourcequotas/${name}`)).json.status?.used;
  const quota = async (ns: string, name: string, spec: Record<string, unknown>) => {
    const r = await call('POST', `/api/v1/namespaces/${ns}/resourcequotas`, { body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name }, spec } });
    expect(r.status, r.text).toBe(201);
  };

  it('counts what was there before, by scope and by kind, and gives back what is deleted', async () => {
    const ns = await freshNamespace(call, 'count');
    for (const body of [
      podBody('besteffort'),
      podBody('burstable', {}, { requests: { cpu: '250m', memory: '64Mi' }, limits: { memory: '128Mi' } }),
      podBody('deadline', { activeDeadlineSeconds: 60 }, { requests: { cpu: '1' } }),
    ]) {
      const r = await call('POST', `/api/v1/namespaces/${ns}/pods`, { body });
      expect(r.status, r.text).toBe(201);
    }
    const svc = await call('POST', `/api/v1/namespaces/${ns}/services`, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'np' }, spec: { type: 'NodePort', ports: [{ name: 'http', port: 80 }, { name: 'https', port: 443 }] } } });
    expect(svc.status, svc.text).toBe(201);
    const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { suspend: true, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } };
    const jobReply = await call('POST', `/apis/batch/v1/namespaces/${ns}/jobs`, { body: job });
    expect(jobReply.status, jobReply.text).toBe(201);

    await quota(ns, 'all', { hard: { pods: '10', 'requests.cpu': '4', 'requests.memory': '1Gi', 'limits.memory': '1Gi', services: '5', 'services.nodeports': '5', 'count/jobs.batch': '3' } });
    await quota(ns, 'besteffort', { hard: { pods: '10' }, scopes: ['BestEffort'] });
    await quota(ns, 'terminating', { hard: { pods: '10', 'requests.cpu': '4' }, scopes: ['Terminating'] });
    await quota(ns, 'services-scoped', { hard: { services: '5' }, scopes: ['NotTerminating'] });
    expect(await until('all counted', async () => {
      const u = await used(ns, 'all');
      return u?.['count/jobs.batch'] === '1' && u;
    })).toEqual({ pods: '3', 'requests.cpu': '1250m', 'requests.memory': '64Mi', 'limits.memory': '128Mi', services: '1', 'services.nodeports': '2', 'count/jobs.batch': '1' });
    expect(await until('besteffort counted', () => used(ns, 'besteffort'))).toEqual({ pods: '1' });
    expect(await until('terminating counted', () => used(ns, 'terminating'))).toEqual({ pods: '1', 'requests.cpu': '1' });
    // A scoped quota counts pods only.
    expect(await until('services-scoped counted', () => used(ns, 'services-scoped'))).toEqual({ services: '0' });

    expect((await call('DELETE', `/apis/batch/v1/namespaces/${ns}/jobs/j`)).status).toBe(200);
    expect((await call('DELETE', `/api/v1/namespaces/${ns}/pods/deadline?gracePeriodSeconds=0`)).status).toBe(200);
    expect(await until('usage given back', async () => {
      const u = await used(ns, 'all');
      return u?.['count/jobs.batch'] === '0' && u.pods === '2' && u;
    })).toMatchObject({ 'requests.cpu': '250m' });
    expect(await until('terminating given back', async () => (await used(ns, 'terminating'))?.pods === '0' && used(ns, 'terminating'))).toEqual({ pods: '0', 'requests.cpu': '0' });
  });

  it('stops counting a pod being deleted once its grace period has passed, though the pod stays', async () => {
    const ns = await freshNamespace(call, 'grace');
    // A node that exists but whose agent never finishes the pod: it stays Terminating.
    await call('POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: `idle-${ns}` } } });
    await quota(ns, 'q', { hard: { pods: '5' } });
    await until('counted', async () => (await used(ns, 'q'))?.pods === '0' || undefined);
    expect((await call('POST', `/api/v1/namespaces/${ns}/pods`, { body: podBody('held', { nodeName: `idle-${ns}` }) })).status).toBe(201);
    const deleted = await call('DELETE', `/api/v1/namespaces/${ns}/pods/held?gracePeriodSeconds=1`);
    expect(deleted.json.metadata.deletionTimestamp).toBeDefined();
    expect((await used(ns, 'q')).pods).toBe('1');
    await until('the pod no longer counted', async () => (await used(ns, 'q'))?.pods === '0' || undefined);
    const still = await call('GET', `/api/v1/namespaces/${ns}/pods/held`);
    expect([still.status, Boolean(still.json.metadata.deletionTimestamp)]).toEqual([200, true]);
  });
});
