import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.js';
import { MemoryStorage } from '../../storage/memory/memory.js';
import { createRegistry } from '../../registry/index.js';
import { quotaSelects } from './scopes.js';
import { evaluatorFor, kindOf } from './usage.js';

const registry = createRegistry(new MemoryStorage());
const pods = registry.find('', 'v1', 'pods')!;
const quotas = registry.find('', 'v1', 'resourcequotas')!;
const services = registry.find('', 'v1', 'services')!;
const claims = registry.find('', 'v1', 'persistentvolumeclaims')!;

const pod = (name: string, resources: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'app', image: 'nginx', resources }], ...extra },
});
const refusal = async (p: Promise<unknown>) => {
  const err = (await p.then(() => undefined, (e: unknown) => e)) as { code?: number; message?: string } | undefined;
  return err && { code: err.code, message: err.message };
};
/** A quota whose usage has been counted (as the quota controller counts it) at `used`. */
const quota = async (ns: string, name: string, hard: Record<string, string>, used: Record<string, string>, extra: Record<string, unknown> = {}) => {
  await quotas.create({ namespace: ns }, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name }, spec: { hard, ...extra } });
  const q = await quotas.get({ namespace: ns }, name);
  await quotas.update({ namespace: ns }, name, { ...q, status: { hard, used } }, 'status');
};
const usedOf = async (ns: string, name: string) => ((await quotas.get({ namespace: ns }, name)).status as { used: Record<string, string> }).used;

describe('ResourceQuota admission', () => {
  beforeAll(async () => {
    for (const name of ['q-count', 'q-compute', 'q-uncounted', 'q-svc', 'q-scope']) await registry.find('', 'v1', 'namespaces')!.create({}, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  });

  it('charges each create in status.used and refuses the one over hard with kube-apiserver\'s message', async () => {
    await quota('q-count', 'q1', { pods: '2', 'count/configmaps': '5' }, { pods: '0', 'count/configmaps': '0' });
    await pods.create({ namespace: 'q-count' }, pod('a'));
    expect(await usedOf('q-count', 'q1')).toEqual({ pods: '1', 'count/configmaps': '0' });
    await pods.create({ namespace: 'q-count' }, pod('b'));
    expect(await refusal(pods.create({ namespace: 'q-count' }, pod('c')))).toEqual({
      code: 403, message: 'pods "c" is forbidden: exceeded quota: q1, requested: pods=1, used: pods=2, limited: pods=2' });
    await expect(pods.get({ namespace: 'q-count' }, 'c')).rejects.toMatchObject({ code: 404 });
    // Dry runs are checked and charge nothing.
    await registry.find('', 'v1', 'configmaps')!.create({ namespace: 'q-count', dryRun: true }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry' } });
    expect(await usedOf('q-count', 'q1')).toEqual({ pods: '2', 'count/configmaps': '0' });
    await registry.find('', 'v1', 'configmaps')!.create({ namespace: 'q-count' }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'real' } });
    expect((await usedOf('q-count', 'q1'))['count/configmaps']).toBe('1');
  });

  it('counts any kind by count/<resource>.<group>', async () => {
    await registry.find('', 'v1', 'namespaces')!.create({}, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'q-jobs' } });
    await quota('q-jobs', 'jobs', { 'count/jobs.batch': '1' }, { 'count/jobs.batch': '0' });
    const jobs = registry.find('batch', 'v1', 'jobs')!;
    const job = (name: string) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } });
    await jobs.create({ namespace: 'q-jobs' }, job('one'));
    expect(await refusal(jobs.create({ namespace: 'q-jobs' }, job('two')))).toEqual({
      code: 403, message: 'jobs.batch "two" is forbidden: exceeded quota: jobs, requested: count/jobs.batch=1, used: count/jobs.batch=1, limited: count/jobs.batch=1' });
  });

  it('requires the requests and limits a quota tracks, and sums quantities exactly', async () => {
    await quota('q-compute', 'compute', { 'requests.memory': '1Gi', 'limits.cpu': '2', 'requests.cpu': '1' }, { 'requests.memory': '0', 'limits.cpu': '0', 'requests.cpu': '0' });
    expect(await refusal(pods.create({ namespace: 'q-compute' }, pod('bare')))).toEqual({
      code: 403, message: 'pods "bare" is forbidden: failed quota: compute: must specify limits.cpu for: app; requests.cpu for: app; requests.memory for: app' });
    await pods.create({ namespace: 'q-compute' }, pod('p1', { requests: { memory: '512Mi', cpu: '250m' }, limits: { cpu: '500m' } }));
    await pods.create({ namespace: 'q-compute' }, pod('p2', { requests: { memory: '256Mi', cpu: '250m' }, limits: { cpu: '500m' } }));
    expect(await usedOf('q-compute', 'compute')).toEqual({ 'limits.cpu': '1', 'requests.cpu': '500m', 'requests.memory': '768Mi' });
    expect(await refusal(pods.create({ namespace: 'q-compute' }, pod('p3', { requests: { memory: '512Mi', cpu: '100m' }, limits: { cpu: '100m' } })))).toEqual({
      code: 403, message: 'pods "p3" is forbidden: exceeded quota: compute, requested: requests.memory=512Mi, used: requests.memory=768Mi, limited: requests.memory=1Gi' });
  });

  it('refuses while the quota is not counted yet', async () => {
    await quotas.create({ namespace: 'q-uncounted' }, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'fresh' }, spec: { hard: { pods: '5', secrets: '1' } } });
    expect(await refusal(pods.create({ namespace: 'q-uncounted' }, pod('early')))).toEqual({ code: 403, message: 'pods "early" is forbidden: status unknown for quota: fresh, resources: pods' });
  });

  it('charges an update by what it adds: a service turned LoadBalancer, a claim grown', async () => {
    await quota('q-svc', 'net', { 'services.loadbalancers': '1', 'requests.storage': '5Gi' }, { 'services.loadbalancers': '0', 'requests.storage': '0' });
    const svc = (name: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }] } });
    await services.create({ namespace: 'q-svc' }, svc('one'));
    await services.create({ namespace: 'q-svc' }, svc('two'));
    await services.patch({ namespace: 'q-svc' }, 'one', 'merge', { spec: { type: 'LoadBalancer' } });
    expect((await usedOf('q-svc', 'net'))['services.loadbalancers']).toBe('1');
    expect(await refusal(services.patch({ namespace: 'q-svc' }, 'two', 'merge', { spec: { type: 'LoadBalancer' } }))).toEqual({
      code: 403, message: 'services "two" is forbidden: exceeded quota: net, requested: services.loadbalancers=1, used: services.loadbalancers=1, limited: services.loadbalancers=1' });
    const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } } };
    await claims.create({ namespace: 'q-svc' }, claim);
    await claims.patch({ namespace: 'q-svc' }, 'data', 'merge', { spec: { resources: { requests: { storage: '4Gi' } } } });
    expect((await usedOf('q-svc', 'net'))['requests.storage']).toBe('4Gi');
    expect((await refusal(claims.patch({ namespace: 'q-svc' }, 'data', 'merge', { spec: { resources: { requests: { storage: '6Gi' } } } })))?.code).toBe(403);
  });

  it('counts only what a scoped quota selects', async () => {
    await quota('q-scope', 'besteffort', { pods: '1' }, { pods: '0' }, { scopes: ['BestEffort'] });
    await quota('q-scope', 'high', { pods: '1' }, { pods: '0' }, { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } });
    await pods.create({ namespace: 'q-scope' }, pod('be'));
    expect((await refusal(pods.create({ namespace: 'q-scope' }, pod('be2'))))?.message).toContain('exceeded quota: besteffort');
    // Not BestEffort, no priority class: no quota selects it.
    await pods.create({ namespace: 'q-scope' }, pod('burst', { requests: { cpu: '1m' } }));
    // A scoped quota never counts other kinds.
    expect(quotaSelects((await quotas.get({ namespace: 'q-scope' }, 'besteffort')), '', 'services', { apiVersion: 'v1', kind: 'Service', metadata: {} })).toBe(false);
    const terminating = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: {}, spec: { scopes: ['Terminating'] } };
    expect(quotaSelects(terminating, '', 'pods', pod('t', {}, { activeDeadlineSeconds: 10 }))).toBe(true);
    expect(quotaSelects(terminating, '', 'pods', pod('n'))).toBe(false);
  });

  it('counts what kube counts: finished pods and pods past their grace are free, count/ names every kind', () => {
    const ev = evaluatorFor('', 'pods');
    const at = Date.parse('2026-01-01T00:00:00Z');
    const running = { ...pod('r', { requests: { cpu: '1' } }), status: { phase: 'Running' } };
    expect(Object.fromEntries([...ev.usage(running, at)].map(([k, v]) => [k, v.milli]))).toEqual({ 'count/pods': 1000n, pods: 1000n, cpu: 1000n, 'requests.cpu': 1000n });
    expect([...ev.usage({ ...running, status: { phase: 'Succeeded' } }, at).keys()]).toEqual(['count/pods']);
    const deleting = { ...running, metadata: { name: 'r', deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 30 } };
    expect(ev.usage(deleting, at + 10_000).has('pods')).toBe(true);
    expect(ev.usage(deleting, at + 31_000).has('pods')).toBe(false);
    expect(kindOf('count/jobs.batch')).toEqual({ group: 'batch', plural: 'jobs' });
    expect(kindOf('count/secrets')).toEqual({ group: '', plural: 'secrets' });
    expect(kindOf('requests.storage')).toMatchObject({ group: '', plural: 'persistentvolumeclaims' });
    expect(kindOf('no-such-thing')).toBeUndefined();
  });

  it('answers malformed quotas and quantities with 422, never 500', async () => {
    expect((await refusal(quotas.create({ namespace: 'q-count' }, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'bad' }, spec: { hard: { pods: '1.2.3' } } })))?.code).toBe(422);
    expect((await refusal(quotas.create({ namespace: 'q-count' }, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'bad' }, spec: { hard: { pods: { n: 1 } } } })))?.code).toBe(422);
    expect((await refusal(pods.create({ namespace: 'q-compute' }, pod('junk', { requests: { memory: 'much' } }))))?.code).toBe(422);
    const q = await quotas.get({ namespace: 'q-count' }, 'q1');
    expect((await refusal(quotas.update({ namespace: 'q-count' }, 'q1', { ...q, status: { hard: { pods: '2' }, used: { pods: 'x1' } } }, 'status')))?.code).toBe(422);
  });
});
