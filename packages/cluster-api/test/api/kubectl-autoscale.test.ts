/**
 * `kubectl autoscale` posts a typed HorizontalPodAutoscaler in protobuf (kubectl 1.32): it is created,
 * read back, scaled and deleted as on kube-apiserver, with no exchange refused for its media type.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlStatuses, runKubectl, startKubectlServer, type KubectlServer } from '../support/helpers.js';

describe('kubectl autoscale', () => {
  let k: KubectlServer;
  const kubectl = (...args: string[]) => runKubectl('kubectl', k.env, args);
  beforeAll(async () => {
    k = await startKubectlServer();
    const r = await kubectl('create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=1');
    expect(r.code, r.stderr).toBe(0);
  });
  afterAll(() => k?.close());

  it('creates the HorizontalPodAutoscaler from a protobuf body', async () => {
    const r = await kubectl('autoscale', 'deploy', 'web', '--max=3', '--cpu-percent=70', '-v=8');
    expect(r.code, r.stderr.slice(-1500)).toBe(0);
    expect(r.stdout).toContain('horizontalpodautoscaler.autoscaling/web autoscaled');
    expect(r.stderr).toMatch(/Request Headers:[\s\S]*Content-Type: application\/vnd\.kubernetes\.protobuf/);
    expect(kubectlStatuses(r.stderr).filter((c) => c === 406 || c === 415)).toEqual([]);
    const hpa = JSON.parse((await kubectl('get', 'hpa', 'web', '-o', 'json')).stdout);
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec).toMatchObject({ scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3 });
    expect(hpa.spec.metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }]);
  });

  it('lists it with the kube-apiserver columns and reads it at autoscaling/v1', async () => {
    const r = await kubectl('get', 'hpa', '-o', 'wide');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')[0]!.split(/\s{2,}/)).toEqual(['NAME', 'REFERENCE', 'TARGETS', 'MINPODS', 'MAXPODS', 'REPLICAS', 'AGE']);
    expect(r.stdout).toMatch(/^web\s+Deployment\/web\s+/m);
    const raw = await kubectl('get', 'horizontalpodautoscalers.v1.autoscaling', 'web', '-o', 'yaml');
    expect(raw.stdout).toContain('targetCPUUtilizationPercentage: 70');
  });

  it('a second autoscale of the same target is AlreadyExists, a missing target NotFound', async () => {
    const again = await kubectl('autoscale', 'deploy', 'web', '--max=3');
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('AlreadyExists');
    const none = await kubectl('autoscale', 'deploy', 'nothing', '--max=3');
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/NotFound|not found/);
  });
});
