/**
 * HorizontalPodAutoscaler through the API without nodes: autoscaling/v2 behavior defaults and
 * validation (422 with the field), and the controller's answers when it cannot act — a target
 * that does not exist (AbleToScale False, FailedGetScale), pods without metrics (ScalingActive
 * False, FailedGetResourceMetric) — as conditions and Warning Events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

let s: TestServer;
beforeAll(async () => (s = await startTestServer('memory')));
afterAll(() => s.close());

const hpas = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';
const hpa = (name: string, spec: Record<string, unknown>, kind = 'Deployment') => ({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind, name }, maxReplicas: 3, ...spec } });
const workload = (kind: string, name: string, replicas: number) => ({
  apiVersion: 'apps/v1', kind, metadata: { name },
  spec: { replicas, ...(kind === 'StatefulSet' && { serviceName: name }), selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '100m' } } }] } } },
});
const condition = (o: any, type: string) => (o.status?.conditions ?? []).find((c: any) => c.type === type);
const events = async (name: string) => (await s.request('GET', `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D${name}`)).json.items as any[];

describe('autoscaling/v2 behavior', () => {
  it('completes a given behavior with the defaults, and leaves an absent one absent', async () => {
    const created = await s.request('POST', hpas, { body: hpa('partial', { behavior: { scaleDown: { stabilizationWindowSeconds: 30 } } }) });
    expect(created.status).toBe(201);
    expect(created.json.spec.behavior).toEqual({
      scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] },
      scaleDown: { stabilizationWindowSeconds: 30, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
    });
    const plain = await s.request('POST', hpas, { body: hpa('plain', {}) });
    expect(plain.json.spec.behavior).toBeUndefined();
  });

  it('refuses malformed rules with 422 naming each field', async () => {
    const r = await s.request('POST', hpas, { body: hpa('bad', { behavior: { scaleUp: { stabilizationWindowSeconds: 3601, selectPolicy: 'Most', policies: [{ type: 'Pods', value: 0, periodSeconds: 1801 }, { type: 'Cores', value: 1, periodSeconds: 15 }] }, scaleDown: { policies: [] } } }) });
    expect(r.status).toBe(422);
    expect(r.json.kind).toBe('Status');
    expect(r.json.details.causes.map((c: { field: string }) => c.field).sort()).toEqual([
      'spec.behavior.scaleDown.policies',
      'spec.behavior.scaleUp.policies[0].periodSeconds',
      'spec.behavior.scaleUp.policies[0].value',
      'spec.behavior.scaleUp.policies[1].type',
      'spec.behavior.scaleUp.selectPolicy',
      'spec.behavior.scaleUp.stabilizationWindowSeconds',
    ]);
  });
});

describe('the controller when it cannot act', () => {
  it('reports a target it cannot get the scale of', async () => {
    await s.request('POST', hpas, { body: hpa('nothing', {}) });
    const o = await until('AbleToScale False', async () => {
      const h = (await s.request('GET', `${hpas}/nothing`)).json;
      return condition(h, 'AbleToScale')?.status === 'False' ? h : undefined;
    });
    expect(condition(o, 'AbleToScale')).toMatchObject({ reason: 'FailedGetScale' });
    expect(condition(o, 'AbleToScale').message).toMatch(/^the HPA controller was unable to get the target's current scale: /);
    expect((await events('nothing')).map((e) => [e.type, e.reason])).toContainEqual(['Warning', 'FailedGetScale']);
  });

  it('brings a StatefulSet above maxReplicas down to it through /scale, without metrics', async () => {
    expect((await s.request('POST', '/apis/apps/v1/namespaces/default/statefulsets', { body: workload('StatefulSet', 'db', 5) })).status).toBe(201);
    await s.request('POST', hpas, { body: hpa('db', { minReplicas: 1, maxReplicas: 3 }, 'StatefulSet') });
    await until('the StatefulSet at 3', async () => ((await s.request('GET', '/apis/apps/v1/namespaces/default/statefulsets/db')).json.spec.replicas === 3 ? true : undefined));
    const o = await until('the status', async () => {
      const h = (await s.request('GET', `${hpas}/db`)).json;
      return h.status?.desiredReplicas === 3 ? h : undefined;
    });
    expect(condition(o, 'AbleToScale')).toMatchObject({ status: 'True', reason: 'SucceededRescale', message: 'the HPA controller was able to update the target scale to 3' });
    expect(o.status.lastScaleTime).toBeTypeOf('string');
    expect((await events('db')).map((e) => e.message)).toContain('New size: 3; reason: Current number of replicas above Spec.MaxReplicas');
  });

  it('leaves a ReplicaSet scaled to zero alone (ScalingDisabled)', async () => {
    expect((await s.request('POST', '/apis/apps/v1/namespaces/default/replicasets', { body: workload('ReplicaSet', 'idle', 0) })).status).toBe(201);
    await s.request('POST', hpas, { body: hpa('idle', { minReplicas: 1 }, 'ReplicaSet') });
    const o = await until('ScalingActive False', async () => {
      const h = (await s.request('GET', `${hpas}/idle`)).json;
      return condition(h, 'ScalingActive')?.status === 'False' ? h : undefined;
    });
    expect(condition(o, 'ScalingActive')).toMatchObject({ reason: 'ScalingDisabled', message: 'scaling is disabled since the replica count of the target is zero' });
    expect((await s.request('GET', '/apis/apps/v1/namespaces/default/replicasets/idle')).json.spec.replicas).toBe(0);
  });

  it('reports pods without metrics as ScalingActive False and leaves the replicas alone', async () => {
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '100m' } } }] } } } };
    expect((await s.request('POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment })).status).toBe(201);
    await s.request('POST', hpas, { body: hpa('web', { minReplicas: 1 }) });
    const o = await until('ScalingActive False', async () => {
      const h = (await s.request('GET', `${hpas}/web`)).json;
      return condition(h, 'ScalingActive')?.status === 'False' ? h : undefined;
    });
    expect(condition(o, 'ScalingActive')).toMatchObject({ reason: 'FailedGetResourceMetric', message: 'the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API' });
    expect(condition(o, 'AbleToScale')).toMatchObject({ status: 'True', reason: 'SucceededGetScale' });
    expect(o.status.currentReplicas).toBe(2);
    const reasons = (await events('web')).map((e) => e.reason);
    expect(reasons).toContain('FailedGetResourceMetric');
    expect(reasons).toContain('FailedComputeMetricsReplicas');
    expect((await s.request('GET', '/apis/apps/v1/namespaces/default/deployments/web')).json.spec.replicas).toBe(2);
    // v1 shows the same autoscaler, its conditions in the annotation v1 keeps them in.
    const v1 = (await s.request('GET', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web')).json;
    expect(v1.spec.targetCPUUtilizationPercentage).toBe(80);
    expect(JSON.parse(v1.metadata.annotations['autoscaling.alpha.kubernetes.io/conditions']).map((c: { type: string }) => c.type)).toContain('ScalingActive');
  });
});
