/**
 * The kinds of issue 18 over HTTP, on a real SQLite file and on a real etcd: a Deployment read,
 * watched, patched and scaled through apps/v1, apps/v1beta1 and extensions/v1beta1 as one object;
 * core and events.k8s.io Events as one object set with the field selectors `kubectl describe` uses;
 * pods/eviction against a PodDisruptionBudget; nodes/proxy without a kubelet; APIService; the
 * version conversions of PodDisruptionBudget and HorizontalPodAutoscaler; and the malformed case of
 * every new input answered by a Status with causes, with nothing else lost.
 */
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { AdminUser } from '../../src/auth/credentials.js';
import { startServer, type ClusterApiServer } from '../../src/server.js';
import { openStorage } from '../../src/storage/factory.js';
import { startEtcd, type EtcdCluster } from '../../testing/src/etcd-cluster.js';
import { namespace, openWatch, request, tempDir, TestToken } from '../support/helpers.js';

type Obj = Record<string, any>;
const ns = 'kinds';
const at = (gv: string, plural: string, name = '') => `${gv.includes('/') ? `/apis/${gv}` : `/api/${gv}`}/namespaces/${ns}/${plural}${name ? `/${name}` : ''}`;
const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] } };
const causes = (r: { json: Obj }) => (r.json.details?.causes ?? []).map((c: Obj) => c.field);

describe.each(['sqlite', 'etcd'] as const)('the new kinds on %s', (backend) => {
  let server: ClusterApiServer;
  let etcd: EtcdCluster | undefined;
  const dir = tempDir();
  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => request(server.url, method, path, { body, headers, token: TestToken });
  const patch = (path: string, body: unknown, type = 'application/merge-patch+json') => call('PATCH', path, JSON.stringify(body), { 'content-type': type });

  beforeAll(async () => {
    if (backend === 'etcd') etcd = await startEtcd({ members: 1, dataRoot: '/dev/shm' });
    const storage = await openStorage(etcd ? etcd.url : `sqlite:${join(dir, 'state.db')}`);
    // The kinds themselves, as stored and served: no deployment or disruption controller writes status
    // or Events here (their behaviour is pinned in test/deployment.test.ts and test/policy/pdb-eviction.test.ts).
    server = await startServer({ storage, authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])), log: () => {}, controllers: ['*', '-deployment', '-disruption'] });
    expect((await call('POST', '/api/v1/namespaces', namespace(ns))).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves one Deployment through apps/v1, apps/v1beta1 and extensions/v1beta1, each with its own defaults', async () => {
    const made = await call('POST', at('extensions/v1beta1', 'deployments'), { apiVersion: 'extensions/v1beta1', kind: 'Deployment', metadata: { name: 'web' }, spec: { template } });
    expect([made.status, made.json.spec.selector, made.json.metadata.labels]).toEqual([201, { matchLabels: { app: 'web' } }, { app: 'web' }]);
    expect(made.json.spec).toMatchObject({ replicas: 1, revisionHistoryLimit: 2147483647, progressDeadlineSeconds: 2147483647, strategy: { rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } } });
    const v1 = (await call('GET', at('apps/v1', 'deployments', 'web'))).json;
    const beta = (await call('GET', at('apps/v1beta1', 'deployments', 'web'))).json;
    expect([v1.apiVersion, beta.apiVersion, v1.metadata.uid, beta.metadata.resourceVersion]).toEqual(['apps/v1', 'apps/v1beta1', made.json.metadata.uid, v1.metadata.resourceVersion]);
    expect(v1.status).toEqual({});
    const later = await call('POST', at('apps/v1', 'deployments'), { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'api' }, spec: { selector: { matchLabels: { app: 'web' } }, template } });
    expect(later.json.spec).toMatchObject({ revisionHistoryLimit: 10, progressDeadlineSeconds: 600, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } } });
    const listed = (await call('GET', at('extensions/v1beta1', 'deployments'))).json;
    expect(listed.items.map((d: Obj) => [d.apiVersion, d.metadata.name])).toEqual([['extensions/v1beta1', 'api'], ['extensions/v1beta1', 'web']]);
  });

  it('watches through one version what a patch and a scale through the others change', async () => {
    const rv = (await call('GET', at('apps/v1beta1', 'deployments'))).json.metadata.resourceVersion;
    const w = await openWatch(server, `${at('apps/v1beta1', 'deployments')}?watch=true&resourceVersion=${rv}&fieldSelector=metadata.name%3Dweb`);
    try {
      expect((await patch(at('extensions/v1beta1', 'deployments', 'web'), { metadata: { annotations: { note: 'x' } } })).status).toBe(200);
      const scaled = await call('PUT', `${at('apps/v1', 'deployments', 'web')}/scale`, { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web' }, spec: { replicas: 3 } });
      expect([scaled.status, scaled.json.spec.replicas, scaled.json.status.selector]).toEqual([200, 3, 'app=web']);
      const first = await w.next();
      const second = await w.next();
      expect([first.type, first.object.apiVersion, first.object.metadata.annotations.note, first.object.metadata.generation]).toEqual(['MODIFIED', 'apps/v1beta1', 'x', 2]);
      expect([second.type, second.object.spec.replicas, second.object.metadata.generation]).toEqual(['MODIFIED', 3, 3]);
    } finally {
      w.close();
    }
    const legacyScale = (await call('GET', `${at('extensions/v1beta1', 'deployments', 'web')}/scale`)).json;
    expect(legacyScale).toMatchObject({ apiVersion: 'extensions/v1beta1', kind: 'Scale', spec: { replicas: 3 }, status: { selector: { app: 'web' }, targetSelector: 'app=web' } });
  });

  it('keeps the selector fixed in apps/v1 only, and keeps a v1beta1 rollbackTo in its annotation', async () => {
    const moved = await patch(at('apps/v1', 'deployments', 'web'), { spec: { selector: { matchLabels: { app: 'web', tier: 'x' } }, template: { metadata: { labels: { app: 'web', tier: 'x' } } } } });
    expect([moved.status, causes(moved)]).toEqual([422, ['spec.selector']]);
    const rollback = await patch(at('apps/v1beta1', 'deployments', 'web'), { spec: { rollbackTo: { revision: 1 } } });
    expect([rollback.status, rollback.json.spec.rollbackTo]).toEqual([200, { revision: 1 }]);
    const v1 = (await call('GET', at('apps/v1', 'deployments', 'web'))).json;
    expect([v1.spec.rollbackTo, v1.metadata.annotations['deprecated.deployment.rollback.to']]).toEqual([undefined, '1']);
    const table = await call('GET', at('apps/v1', 'deployments'), undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    expect(table.json.columnDefinitions.map((c: Obj) => c.name)).toEqual(['Name', 'Ready', 'Up-to-date', 'Available', 'Age', 'Containers', 'Images', 'Selector']);
    expect(table.json.rows.map((r: Obj) => r.cells.slice(0, 4))).toEqual([['api', '0/1', 0, 0], ['web', '0/3', 0, 0]]);
  });

  it('answers every malformed new object with a Status naming its causes, and loses nothing', async () => {
    const cm = await call('POST', at('v1', 'configmaps'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fixed' }, data: { a: '1' }, immutable: true });
    expect(cm.status).toBe(201);
    const cases: [string, string, Obj, (string | undefined)[]][] = [
      ['apps/v1', 'deployments', { kind: 'Deployment', metadata: { name: 'mismatch' }, spec: { selector: { matchLabels: { app: 'other' } }, template } }, ['spec.template.metadata.labels']],
      ['apps/v1', 'deployments', { kind: 'Deployment', metadata: { name: 'nosel' }, spec: { selector: { matchExpressions: [{ key: 'app', operator: 'Near' }] }, template } }, ['spec.selector.matchExpressions[0].operator', 'spec.selector']],
      ['batch/v1', 'cronjobs', { kind: 'CronJob', metadata: { name: 'cj' }, spec: { schedule: '61 * * * *', jobTemplate: { spec: { template: { spec: { containers: template.spec.containers, restartPolicy: 'Never' } } } } } }, ['spec.schedule']],
      ['batch/v1', 'jobs', { kind: 'Job', metadata: { name: 'j' }, spec: { template: { spec: { containers: template.spec.containers, restartPolicy: 'Always' } } } }, ['spec.template.spec.restartPolicy']],
      ['coordination.k8s.io/v1', 'leases', { kind: 'Lease', metadata: { name: 'l' }, spec: { leaseDurationSeconds: -5, leaseTransitions: -1 } }, ['spec.leaseDurationSeconds', 'spec.leaseTransitions']],
      ['policy/v1', 'poddisruptionbudgets', { kind: 'PodDisruptionBudget', metadata: { name: 'p' }, spec: { minAvailable: 1, maxUnavailable: 1 } }, ['spec']],
      // The size cause names no field (Kubernetes' field.NewPath(""); an empty field is omitted from the Status).
      ['v1', 'configmaps', { kind: 'ConfigMap', metadata: { name: 'big' }, data: { a: 'x'.repeat(1024 * 1024 + 1) } }, [undefined]],
      ['v1', 'events', { kind: 'Event', metadata: { name: 'e' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'elsewhere' } }, ['involvedObject.namespace']],
    ];
    for (const [gv, plural, body, fields] of cases) {
      const r = await call('POST', at(gv, plural), { apiVersion: gv, ...body });
      expect([plural, r.status, r.json.kind, r.json.reason, causes(r)]).toEqual([plural, 422, 'Status', 'Invalid', fields]);
    }
    const cron = await call('POST', at('batch/v1', 'cronjobs'), { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'cj' }, spec: { schedule: 'every day', jobTemplate: { spec: { template: { spec: { containers: template.spec.containers, restartPolicy: 'Never' } } } } } });
    expect(cron.json.message).toContain('spec.schedule: Invalid value: "every day": expected exactly 5 fields, found 2: [every day]');
    const frozen = await patch(at('v1', 'configmaps', 'fixed'), { data: { a: '2' } });
    expect([frozen.status, causes(frozen), frozen.json.message]).toEqual([422, ['data'], 'ConfigMap "fixed" is invalid: data: Forbidden: field is immutable when `immutable` is set']);
    expect((await call('GET', at('v1', 'configmaps', 'fixed'))).json.data).toEqual({ a: '1' });
    expect((await call('GET', at('apps/v1', 'deployments'))).json.items.map((d: Obj) => d.metadata.name)).toEqual(['api', 'web']);
    for (const plural of ['cronjobs', 'jobs']) expect((await call('GET', at('batch/v1', plural))).json.items).toEqual([]);
  });

  it('serves core and events.k8s.io Events as one set, selected by the involved object as kubectl describe asks', async () => {
    // Recent: Events older than the TTL (1 h) are removed.
    const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const web = (await call('GET', at('apps/v1', 'deployments', 'web'))).json;
    const involved = { kind: 'Deployment', namespace: ns, name: 'web', uid: web.metadata.uid, apiVersion: 'apps/v1' };
    const core = await call('POST', at('v1', 'events'), { apiVersion: 'v1', kind: 'Event', metadata: { name: 'web.1' }, involvedObject: involved, reason: 'ScalingReplicaSet', message: 'Scaled up replica set web-1 to 3', type: 'Normal', source: { component: 'deployment-controller' }, firstTimestamp: now(), lastTimestamp: now(), count: 1 });
    expect(core.status).toBe(201);
    const strict = await call('POST', at('events.k8s.io/v1', 'events'), { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'web.2' }, regarding: involved, reason: 'Rolled', note: 'rolled out', type: 'Normal', action: 'Rollout', eventTime: new Date().toISOString(), reportingController: 'example.com/rollouts', reportingInstance: 'r-1' });
    expect(strict.status).toBe(201);
    const loose = await call('POST', at('events.k8s.io/v1', 'events'), { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'web.3' }, regarding: involved, reason: 'X', type: 'Normal' });
    expect([loose.status, causes(loose)]).toEqual([422, ['eventTime']]);
    const selector = encodeURIComponent(`involvedObject.name=web,involvedObject.namespace=${ns},involvedObject.kind=Deployment,involvedObject.uid=${web.metadata.uid}`);
    const described = (await call('GET', `${at('v1', 'events')}?fieldSelector=${selector}`)).json.items;
    expect(described.map((e: Obj) => [e.metadata.name, e.message, e.reportingComponent ?? ''])).toEqual([['web.1', 'Scaled up replica set web-1 to 3', ''], ['web.2', 'rolled out', 'example.com/rollouts']]);
    const asV1 = (await call('GET', `${at('events.k8s.io/v1', 'events')}?fieldSelector=${encodeURIComponent('regarding.name=web,reason=ScalingReplicaSet')}`)).json.items;
    expect(asV1.map((e: Obj) => [e.apiVersion, e.note, e.regarding.kind, e.deprecatedCount])).toEqual([['events.k8s.io/v1', 'Scaled up replica set web-1 to 3', 'Deployment', 1]]);
    expect((await call('GET', `${at('v1', 'events')}?fieldSelector=involvedObject.colour%3Dred`)).status).toBe(400);
  });

  it('evicts a pod only as its disruption budget allows (429 with the cause otherwise)', async () => {
    const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'postgres' }] } });
    const running = async (name: string, ready = true) => {
      await call('POST', at('v1', 'pods'), pod(name));
      await patch(`${at('v1', 'pods', name)}/status`, { status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } });
    };
    const evict = (name: string) => call('POST', `${at('v1', 'pods', name)}/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name } });
    await call('POST', at('v1', 'pods'), pod('pending'));
    expect((await evict('pending')).json).toMatchObject({ kind: 'Status', status: 'Success' });
    expect((await call('GET', at('v1', 'pods', 'pending'))).status).toBe(404);
    expect((await call('POST', `${at('v1', 'pods', 'x')}/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'y' } })).status).toBe(400);
    await running('db-0');
    await running('db-1');
    const pdb = (await call('POST', at('policy/v1', 'poddisruptionbudgets'), { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'db' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'db' } } } })).json;
    const unobserved = await evict('db-0');
    expect([unobserved.status, unobserved.json.reason, unobserved.json.details.causes]).toEqual([429, 'TooManyRequests', [{ reason: 'DisruptionBudget', message: 'The disruption budget db is still being processed by the server.' }]]);
    await patch(`${at('policy/v1', 'poddisruptionbudgets', 'db')}/status`, { status: { observedGeneration: pdb.metadata.generation, disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 } });
    const allowed = await evict('db-0');
    expect([allowed.status, allowed.json.status]).toEqual([201, 'Success']);
    expect((await call('GET', at('v1', 'pods', 'db-0'))).status).toBe(404);
    const spent = (await call('GET', at('policy/v1', 'poddisruptionbudgets', 'db'))).json.status;
    expect([spent.disruptionsAllowed, Object.keys(spent.disruptedPods)]).toEqual([0, ['db-0']]);
    const refused = await evict('db-1');
    expect([refused.status, refused.json.details.causes[0].message]).toEqual([429, 'The disruption budget db needs 1 healthy pods and has 2 currently']);
    expect((await call('GET', at('v1', 'pods', 'db-1'))).status).toBe(200);
    // A pod that is not Ready goes without spending while the budget has its healthy pods (IfHealthyBudget).
    await running('db-2', false);
    expect((await evict('db-2')).status).toBe(201);
    expect((await call('GET', at('policy/v1', 'poddisruptionbudgets', 'db'))).json.status.disruptedPods).toEqual({ 'db-0': expect.any(String) });
    await patch(`${at('policy/v1', 'poddisruptionbudgets', 'db')}/status`, { status: { currentHealthy: 0 } });
    await running('db-3', false);
    expect((await evict('db-3')).status).toBe(429);
    await patch(at('policy/v1', 'poddisruptionbudgets', 'db'), { spec: { unhealthyPodEvictionPolicy: 'AlwaysAllow' } });
    await patch(`${at('policy/v1', 'poddisruptionbudgets', 'db')}/status`, { status: { observedGeneration: 2 } });
    expect((await evict('db-3')).status).toBe(201);
  });

  it('keeps a Node\'s registered status, writes status only through /status, and proxies as kube-apiserver does without a kubelet', async () => {
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'node-role.kubernetes.io/worker': '' } }, status: { capacity: { cpu: '2' }, nodeInfo: { kubeletVersion: 'v1.32.0' } } };
    const made = await call('POST', '/api/v1/nodes', node);
    expect([made.status, made.json.status.allocatable, made.json.status.capacity]).toEqual([201, { cpu: '2' }, { cpu: '2' }]);
    const put = await call('PUT', '/api/v1/nodes/n1', { ...made.json, spec: { unschedulable: true }, status: { capacity: { cpu: '64' } } });
    expect([put.status, put.json.spec.unschedulable, put.json.status.capacity]).toEqual([200, true, { cpu: '2' }]);
    const noAddress = await call('GET', '/api/v1/nodes/n1/proxy/metrics');
    expect([noAddress.status, noAddress.json.reason]).toEqual([500, 'InternalError']);
    expect(noAddress.json.message).toContain('Internal error occurred: no preferred addresses found; known addresses: []');
    await patch('/api/v1/nodes/n1/status', { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.9' }], conditions: [{ type: 'Ready', status: 'True' }] } });
    const refused = await call('GET', '/api/v1/nodes/n1/proxy/healthz');
    expect([refused.status, refused.json.reason]).toEqual([503, 'ServiceUnavailable']);
    expect(refused.json.message).toContain('error trying to reach service: dial tcp 10.0.0.9:10250: connect: connection refused');
    const table = await call('GET', '/api/v1/nodes', undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    const cells = table.json.rows[0].cells;
    expect([0, 1, 2, 4, 5, 6].map((i) => cells[i])).toEqual(['n1', 'Ready,SchedulingDisabled', 'worker', 'v1.32.0', '10.0.0.9', '<none>']);
    const taints = await patch('/api/v1/nodes/n1', { spec: { taints: [{ key: 'a', effect: 'Never' }] } });
    expect([taints.status, causes(taints)]).toEqual([422, ['spec.taints[0].effect']]);
  });

  it('lists every served group version as a Local APIService', async () => {
    const list = (await call('GET', '/apis/apiregistration.k8s.io/v1/apiservices')).json;
    const names = list.items.map((s: Obj) => s.metadata.name);
    expect(names).toEqual(expect.arrayContaining(['v1.', 'v1.apps', 'v1beta1.apps', 'v1beta1.extensions', 'v1.coordination.k8s.io', 'v1.events.k8s.io', 'v2alpha1.batch']));
    expect(list.items.every((s: Obj) => s.status.conditions[0].reason === 'Local' && s.status.conditions[0].status === 'True')).toBe(true);
    expect((await call('GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.apps')).json.spec).toMatchObject({ group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 });
    expect((await call("DELETE", "/apis/apiregistration.k8s.io/v1/apiservices/v1.apps")).status).toBe(200);
  });

  it('converts a PodDisruptionBudget\'s empty policy/v1beta1 selector and an autoscaling/v1 CPU target as Kubernetes does', async () => {
    await call('POST', at('policy/v1beta1', 'poddisruptionbudgets'), { apiVersion: 'policy/v1beta1', kind: 'PodDisruptionBudget', metadata: { name: 'none' }, spec: { minAvailable: 1, selector: {} } });
    expect((await call('GET', at('policy/v1', 'poddisruptionbudgets', 'none'))).json.spec.selector).toEqual({ matchExpressions: [{ key: 'pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match', operator: 'Exists' }] });
    expect((await call('GET', at('policy/v1beta1', 'poddisruptionbudgets', 'none'))).json.spec.selector).toEqual({});
    await call('POST', at('autoscaling/v1', 'horizontalpodautoscalers'), { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5, targetCPUUtilizationPercentage: 50 } });
    const v2 = (await call('GET', at('autoscaling/v2', 'horizontalpodautoscalers', 'web'))).json;
    expect(v2.spec).toMatchObject({ minReplicas: 1, maxReplicas: 5, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }] });
    await patch(at('autoscaling/v2', 'horizontalpodautoscalers', 'web'), { spec: { metrics: [...v2.spec.metrics, { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } } }] } });
    const v1 = (await call('GET', at('autoscaling/v1', 'horizontalpodautoscalers', 'web'))).json;
    expect([v1.spec.targetCPUUtilizationPercentage, JSON.parse(v1.metadata.annotations['autoscaling.alpha.kubernetes.io/metrics'])[0].type]).toEqual([50, 'Pods']);
  });
});
