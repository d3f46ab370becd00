/** The replica calculator, over pods and metrics built here and a fixed `now` (no clock, no timing). */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.js';
import { groupPods, podRequests, rawResourceReplicas, resourceReplicas, DefaultCalculatorSettings, type PodMetric } from './replicas.js';

const now = Date.parse('2026-01-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

/** A Running pod, Ready since `readySince`, started `startedAgo` ms before now, requesting `cpu` millicores. */
const pod = (name: string, o: { cpu?: string; phase?: string; ready?: boolean; startedAgo?: number; readySince?: number; deleting?: boolean } = {}): KubeObject => ({
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name, namespace: 'default', ...(o.deleting && { deletionTimestamp: iso(now) }) },
  spec: { containers: [{ name: 'app', resources: o.cpu === undefined ? {} : { requests: { cpu: o.cpu, memory: '100Mi' } } }] },
  status: {
    phase: o.phase ?? 'Running',
    startTime: iso(now - (o.startedAgo ?? 10 * 60_000)),
    conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: iso(o.readySince ?? now - 9 * 60_000) }],
  },
});

const metrics = (values: Record<string, number>, at = now - 1000, windowMs = 15_000): Map<string, PodMetric> =>
  new Map(Object.entries(values).map(([n, v]) => [n, { value: v, timestamp: at, windowMs }]));

const cpu = { resource: 'cpu', now };

describe('resourceReplicas (Utilization)', () => {
  it('scales up by the ratio of utilization to target', () => {
    const pods = ['a', 'b', 'c'].map((n) => pod(n, { cpu: '1' }));
    const r = resourceReplicas({ ...cpu, currentReplicas: 3, pods, metrics: metrics({ a: 900, b: 1000, c: 1100 }), targetUtilization: 30 });
    expect(r).toMatchObject({ replicas: 10, utilization: 100, rawAverage: 1000 });
  });

  it('keeps the count within the tolerance (0.1)', () => {
    const pods = ['a', 'b'].map((n) => pod(n, { cpu: '1' }));
    expect(resourceReplicas({ ...cpu, currentReplicas: 2, pods, metrics: metrics({ a: 540, b: 540 }), targetUtilization: 50 }).replicas).toBe(2);
    expect(resourceReplicas({ ...cpu, currentReplicas: 2, pods, metrics: metrics({ a: 560, b: 560 }), targetUtilization: 50 }).replicas).toBe(3);
  });

  it('scales down', () => {
    const pods = ['a', 'b', 'c'].map((n) => pod(n, { cpu: '1' }));
    expect(resourceReplicas({ ...cpu, currentReplicas: 3, pods, metrics: metrics({ a: 100, b: 300, c: 500 }), targetUtilization: 50 })).toMatchObject({ replicas: 2, utilization: 30 });
  });

  it('takes a pod without metrics as using its whole request on a scale-down (here: within tolerance, so no change)', () => {
    const pods = ['a', 'b', 'c', 'd'].map((n) => pod(n, { cpu: '1' }));
    expect(resourceReplicas({ ...cpu, currentReplicas: 4, pods, metrics: metrics({ a: 100, b: 300, c: 500 }), targetUtilization: 50 }).replicas).toBe(4);
  });

  it('takes a pod without metrics as using nothing on a scale-up', () => {
    const pods = ['a', 'b', 'c'].map((n) => pod(n, { cpu: '1' }));
    // Ready pods at 100 % of a 50 % target: 2 × 2 = 4 without the missing pod; with it at 0: 2000/3000 → ceil(1.33 × 3) = 4.
    expect(resourceReplicas({ ...cpu, currentReplicas: 3, pods, metrics: metrics({ a: 1000, b: 1000 }), targetUtilization: 50 }).replicas).toBe(4);
  });

  it('counts an unready (Pending) pod as using nothing on a scale-up, and a deleted one not at all', () => {
    const pods = [pod('a', { cpu: '1' }), pod('b', { cpu: '1' }), pod('c', { cpu: '1', phase: 'Pending' }), pod('d', { cpu: '1', deleting: true })];
    const r = resourceReplicas({ ...cpu, currentReplicas: 4, pods, metrics: metrics({ a: 1000, b: 1000, d: 5000 }), targetUtilization: 50 });
    expect(r).toMatchObject({ replicas: 4, utilization: 100 });
  });

  it('treats a starting pod measured before its readiness plus a window as unready (CPU)', () => {
    const starting = pod('b', { cpu: '1', startedAgo: 20_000, readySince: now - 5000 });
    const g = groupPods([pod('a', { cpu: '1' }), starting], metrics({ a: 500, b: 900 }, now - 1000, 15_000), 'cpu', now, DefaultCalculatorSettings);
    expect([...g.unready]).toEqual(['b']);
    // Memory does not wait for readiness.
    expect(groupPods([starting], metrics({ b: 900 }), 'memory', now, DefaultCalculatorSettings).readyCount).toBe(1);
    // Past the initialization period, a pod that turned unready after its initial delay is ready for CPU.
    const old = pod('c', { cpu: '1', ready: false, startedAgo: 10 * 60_000, readySince: now - 60_000 });
    expect(groupPods([old], metrics({ c: 1 }), 'cpu', now, DefaultCalculatorSettings).readyCount).toBe(1);
  });

  it('refuses what it cannot compute, with kube-controller-manager\'s messages', () => {
    expect(() => resourceReplicas({ ...cpu, currentReplicas: 1, pods: [], metrics: metrics({}), targetUtilization: 50 })).toThrow('no pods returned by selector while calculating replica count');
    expect(() => resourceReplicas({ ...cpu, currentReplicas: 1, pods: [pod('a', { cpu: '1', phase: 'Pending' })], metrics: metrics({ a: 1 }), targetUtilization: 50 })).toThrow('did not receive metrics for targeted pods (pods might be unready)');
    expect(() => resourceReplicas({ ...cpu, currentReplicas: 1, pods: [pod('a')], metrics: metrics({ a: 1 }), targetUtilization: 50 })).toThrow('missing request for cpu in container app of Pod a');
    expect(() => podRequests([pod('a', { cpu: 'lots' })], 'cpu')).toThrow('missing request for cpu in container app of Pod a');
  });
});

describe('rawResourceReplicas (AverageValue)', () => {
  it('scales by the average against the target value, keeping the count within tolerance', () => {
    const pods = ['a', 'b'].map((n) => pod(n, { cpu: '1' }));
    expect(rawResourceReplicas({ ...cpu, currentReplicas: 2, pods, metrics: metrics({ a: 1000, b: 1000 }), targetAverage: 500 })).toMatchObject({ replicas: 4, rawAverage: 1000 });
    expect(rawResourceReplicas({ ...cpu, currentReplicas: 2, pods, metrics: metrics({ a: 520, b: 480 }), targetAverage: 500 }).replicas).toBe(2);
    // A missing pod counts as the target on a scale-down: (100 + 500) / 2 = 300 → ceil(0.6 × 2) = 2.
    const three = ['a', 'b', 'c'].map((n) => pod(n, { cpu: '1' }));
    expect(rawResourceReplicas({ ...cpu, resource: 'memory', currentReplicas: 3, pods: three, metrics: metrics({ a: 100, b: 100 }), targetAverage: 500 }).replicas).toBe(2);
  });
});
