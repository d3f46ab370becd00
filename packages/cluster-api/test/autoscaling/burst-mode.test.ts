/**
 * target-burst-capacity on `cluster-api serve` (the built CLI, its node running the probe
 * function's image as processes), driven with kubectl and requests with the Route's Host to the
 * gateway: the autoscaler marks the Revision `Serve` (its traffic straight to the pods) or `Proxy`
 * (through the activator) as Knative's KPA sets its ServerlessService's mode, from the excess burst
 * capacity, and the gateway follows. With containerConcurrency 1 on a single pod, more concurrent
 * requests than the pod's own queue holds (1 running + 10 waiting): in Serve they all reach the pod
 * and the surplus is refused there (503, as queue-proxy's breaker refuses); in Proxy the activator
 * holds them and every one succeeds. A malformed target-burst-capacity keeps the default, said in a
 * Warning. Timings are not asserted.
 */
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveKubectl } from '../serve/process.js';
import { startServingServe, type ServingServe } from '../support/serving-serve.js';
import { until } from '../../testing/src/poll.js';

const ModeAnnotation = 'networking.internal.knative.dev/serviceMode';

describe.runIf(haveKubectl)('target-burst-capacity: the activator in the path or not', () => {
  let serve: ServingServe;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  const ok = (...args: string[]) => serve.ok(...args);
  const apply = (name: string, yaml: string) => serve.apply(name, yaml);
  const setBurstCapacity = (value: string) => ok('patch', 'configmap', 'config-autoscaler', '-n', 'knative-serving', '--type', 'merge', '-p', JSON.stringify({ data: { 'target-burst-capacity': value } }));
  const revision = async (name: string) => (await custom.getNamespacedCustomObject({ group: 'serving.knative.dev', version: 'v1', namespace: 'default', plural: 'revisions', name })) as any;
  const modeOf = async (name: string) => (await revision(name)).metadata.annotations?.[ModeAnnotation];
  const eventsOf = async (name: string) => (await core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${name}` })).items;

  beforeAll(async () => {
    serve = await startServingServe();
    core = serve.kc.makeApiClient(CoreV1Api);
    custom = serve.kc.makeApiClient(CustomObjectsApi);
    // target-burst-capacity 0: the activator in the path only at zero.
    await serve.knativeConfig('config-autoscaler', { 'target-burst-capacity': '0' });
  }, 240_000);
  afterAll(() => serve?.s.close());

  it('Serve sends a burst straight to the pod (its queue refuses the surplus); Proxy holds it at the activator (all succeed)', async () => {
    await apply('one', `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: one
spec:
  template:
    metadata:
      annotations:
        autoscaling.knative.dev/min-scale: "1"
        autoscaling.knative.dev/max-scale: "1"
    spec:
      containerConcurrency: 1
      containers:
        - image: probe:v1
`);
    await ok('wait', '--for=condition=Ready', 'ksvc/one', '--timeout=180s');
    const host = 'one.default.localhost';
    const podName = (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'serving.knative.dev/revision=one-00001' })).items[0]?.metadata?.name;
    expect(podName).toBeDefined();
    const burst = (ms: number) => Promise.all(Array.from({ length: 13 }, () => serve.send(host, `/slow?ms=${ms}`)));

    // target-burst-capacity 0: excess burst capacity 0, Serve.
    await until('one-00001 in Serve', async () => (await modeOf('one-00001')) === 'Serve', { timeoutMs: 60_000, everyMs: 200 });
    const outOfPath = (await eventsOf('one-00001')).find((e) => e.reason === 'ActivatorOutOfPath');
    expect(outOfPath?.message).toMatch(/^Traffic straight to the pods: excess burst capacity 0 \(target-burst-capacity 0, \d+ ready × 1,/);
    // 13 at once to one pod that runs 1 and queues 10: the pod refuses the surplus.
    const served = await burst(2000);
    const refused = served.filter((a) => a.status === 503);
    expect(refused.length, JSON.stringify(served)).toBeGreaterThan(0);
    expect(refused.every((a) => a.body.includes('is running its limit of 1 concurrent requests and 10 more are waiting'))).toBe(true);
    expect(served.filter((a) => a.status === 200).every((a) => a.body === 'slow done')).toBe(true);
    expect(served.filter((a) => a.status === 200).length + refused.length).toBe(13);

    // -1: the activator always in the path (Proxy), whatever the pods.
    await setBurstCapacity('-1');
    await until('one-00001 in Proxy', async () => (await modeOf('one-00001')) === 'Proxy', { timeoutMs: 60_000, everyMs: 200 });
    const proxy = (await eventsOf('one-00001')).find((e) => e.reason === 'ActivatorInPath');
    expect(proxy?.message).toMatch(/^Traffic through the activator: excess burst capacity -1 \(target-burst-capacity -1,/);
    // The same burst: the activator holds what the pod has no room for, one at a time; all succeed.
    const proxied = await burst(200);
    expect(proxied.map((a) => a.status)).toEqual(Array(13).fill(200));

    // A malformed value: the default (211) kept, named in a Warning; 1 pod × 1 − 211 < 0: still Proxy.
    await setBurstCapacity('-0.5');
    const warning = await until('the Warning', async () => (await eventsOf('one-00001')).find((e) => e.reason === 'InvalidAutoscaling'), { timeoutMs: 60_000, everyMs: 200 });
    expect(warning.type).toBe('Warning');
    expect(warning.message).toContain('target-burst-capacity: "-0.5"');
    expect(await modeOf('one-00001')).toBe('Proxy');

    // Back to 0: Serve again. The mark is the Revision's, not its pods': the pod was not rolled.
    await setBurstCapacity('0');
    await until('one-00001 back in Serve', async () => (await modeOf('one-00001')) === 'Serve', { timeoutMs: 60_000, everyMs: 200 });
    const pods = (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'serving.knative.dev/revision=one-00001' })).items.filter((p) => !p.metadata?.deletionTimestamp);
    expect(pods.map((p) => p.metadata?.name)).toEqual([podName]);
    expect(pods[0]!.metadata?.annotations?.[ModeAnnotation]).toBeUndefined();
  }, 300_000);
});
