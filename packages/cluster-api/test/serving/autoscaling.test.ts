/**
 * Knative's autoscaling on `cluster-api serve` (the built CLI, its node running the probe
 * function's image), driven as a Knative user drives it (kubectl apply, requests with the Route's
 * Host to the gateway) and watched through client-node: a revision with min-scale 0 and a short
 * window goes to zero pods when idle and the next request wakes it, with no failed request across
 * the transitions; containerConcurrency 1 under 20 concurrent requests scales out, never past
 * max-scale. Timings are not asserted (bench/autoscale measures them).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveKubectl } from '../serve/process.js';
import { startServingServe, type Answer, type ServingServe } from '../support/serving-serve.js';
import { until } from '../../testing/src/poll.js';

describe.runIf(haveKubectl)('Knative autoscaling on serve', () => {
  let serve: ServingServe;
  let gateway: URL;
  let apps: AppsV1Api;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  const send = (host: string, path = '/', body?: string) => serve.send(host, path, body);
  const ok = (...args: string[]) => serve.ok(...args);
  const apply = (name: string, yaml: string) => serve.apply(name, yaml);
  const ksvc = (name: string, annotations: Record<string, string>, extra = '') => `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: ${name}
spec:
  template:
    metadata:
      annotations:
${Object.entries(annotations).map(([k, v]) => `        autoscaling.knative.dev/${k}: "${v}"`).join('\n')}
    spec:
${extra}      containers:
        - image: probe:v1
`;
  const replicas = async (rev: string) => (await apps.readNamespacedDeployment({ name: `${rev}-deployment`, namespace: 'default' })).spec?.replicas;
  /** The revision's pods not being deleted. */
  const livePods = async (rev: string) => (await core.listNamespacedPod({ namespace: 'default', labelSelector: `serving.knative.dev/revision=${rev}` })).items.filter((p) => !p.metadata?.deletionTimestamp);
  const revision = async (name: string) => (await custom.getNamespacedCustomObject({ group: 'serving.knative.dev', version: 'v1', namespace: 'default', plural: 'revisions', name })) as any;
  const eventsOf = async (rev: string) => (await core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${rev}` })).items;

  beforeAll(async () => {
    serve = await startServingServe();
    gateway = serve.gateway;
    apps = serve.kc.makeApiClient(AppsV1Api);
    core = serve.kc.makeApiClient(CoreV1Api);
    custom = serve.kc.makeApiClient(CustomObjectsApi);
    // Knative's shortest grace period, and a value that does not parse (kept at its default, said in an Event).
    await serve.knativeConfig('config-autoscaler', { 'scale-to-zero-grace-period': '6s', 'max-scale-up-rate': 'lots' });
  }, 240_000);
  afterAll(() => serve?.s.close());

  it('min-scale 0 and a 6 s window: idle → 0 pods, a request wakes it (200, back at 1), no request lost across the transitions', async () => {
    await apply('zero', ksvc('zero', { 'min-scale': '0', window: '6s' }));
    await ok('wait', '--for=condition=Ready', 'ksvc/zero', '--timeout=180s');
    const host = 'zero.default.localhost';
    const answers: Answer[] = [];
    const call = async (path = '/', body?: string) => {
      const a = await send(host, path, body);
      answers.push(a);
      return a;
    };
    expect((await call()).status).toBe(200);

    // Idle: down to zero pods, the revision's status saying so.
    await until('zero-00001 at 0 pods', async () => (await replicas('zero-00001')) === 0 && (await livePods('zero-00001')).length === 0, { timeoutMs: 120_000, everyMs: 250 });
    const idle = await until('status at zero', async () => {
      const r = await revision('zero-00001');
      return r.status?.actualReplicas === 0 && r;
    }, { timeoutMs: 30_000, everyMs: 250 });
    expect(idle.status.desiredReplicas).toBe(0);
    expect(idle.status.conditions.find((c: any) => c.type === 'Active')).toMatchObject({ status: 'False', reason: 'NoTraffic' });
    // At zero the revision (and so the Service) stays Ready.
    expect(idle.status.conditions.find((c: any) => c.type === 'Ready')).toMatchObject({ status: 'True' });

    // The next request wakes it: 200, and the revision is back at one pod.
    const woken = await call();
    expect(woken.status).toBe(200);
    expect(woken.body).toMatch(/^hello from zero-00001-deployment-/);
    expect(await replicas('zero-00001')).toBe(1);
    const back = await until('status back at 1', async () => {
      const r = await revision('zero-00001');
      return r.status?.actualReplicas === 1 && r;
    }, { timeoutMs: 30_000, everyMs: 250 });
    expect(back.status.conditions.find((c: any) => c.type === 'Active')).toMatchObject({ status: 'True' });

    // A loop across the next transitions: requests while warm, then, the moment the autoscaler
    // asks for zero (the pod draining), four at once, one with a body (which cannot be sent twice);
    // then again from zero.
    for (let i = 0; i < 5; i++) await call('/slow?ms=50');
    await until('asked for zero again', async () => (await replicas('zero-00001')) === 0, { timeoutMs: 120_000, everyMs: 50 });
    const [, , , echoed] = await Promise.all([call(), call('/slow?ms=100'), call(), call('/echo', 'kept')]);
    expect(echoed!.body).toBe('kept');
    await until('zero pods again', async () => (await replicas('zero-00001')) === 0 && (await livePods('zero-00001')).length === 0, { timeoutMs: 120_000, everyMs: 250 });
    await Promise.all(Array.from({ length: 5 }, () => call()));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(answers.length).toBe(16);

    // Decisions recorded as Events on the Revision; the setting that did not parse as a Warning.
    const events = await eventsOf('zero-00001');
    const reasons = new Set(events.map((e) => e.reason));
    expect(reasons).toContain('ScaledDown');
    expect(reasons).toContain('ScaledUp');
    expect(events.find((e) => e.reason === 'ScaledDown')?.message).toMatch(/^Scaled from 1 to 0 \(idle/);
    expect(events.find((e) => e.reason === 'InvalidAutoscaling')).toMatchObject({ type: 'Warning', message: expect.stringContaining('max-scale-up-rate: "lots"') });
    // Cold starts counted on the gateway's /metrics.
    const metrics = await send(`${gateway.host}`, '/metrics');
    const cold = /^activator_cold_start_seconds_count\{namespace="default",revision="zero-00001"\} (\d+)$/m.exec(metrics.body);
    expect(Number(cold?.[1])).toBeGreaterThanOrEqual(2);
  }, 480_000);

  it('containerConcurrency 1 and 20 concurrent requests: scales past 1, all 20 succeed, max-scale 3 never exceeded', async () => {
    // A malformed annotation is refused at admission with Knative's message; then the Service as meant.
    writeFileSync(join(serve.s.dir, 'burst-bad.yaml'), ksvc('burst', { 'max-scale': '3', 'scale-down-delay': '-5s' }, '      containerConcurrency: 1\n'));
    const bad = await serve.s.kubectl('apply', '-f', join(serve.s.dir, 'burst-bad.yaml'));
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('validation failed: expected 0s <= -5s <= 1h0m0s: spec.template.metadata.annotations.autoscaling.knative.dev/scale-down-delay');
    await apply('burst', ksvc('burst', { 'max-scale': '3' }, '      containerConcurrency: 1\n'));
    await ok('wait', '--for=condition=Ready', 'ksvc/burst', '--timeout=180s');
    const rev = await revision('burst-00001');
    expect(rev.spec.containerConcurrency).toBe(1);
    // The limit reaches the pod (the runtime enforces it), and the pod drains as queue-proxy would:
    // its listener open a moment after SIGTERM, in-flight requests given the revision's timeout.
    expect((await send('burst.default.localhost', '/env?name=CONTAINER_CONCURRENCY')).body).toBe('1');
    const template = (await apps.readNamespacedDeployment({ name: 'burst-00001-deployment', namespace: 'default' })).spec!.template.spec!;
    expect(template.terminationGracePeriodSeconds).toBe(300);
    expect(template.containers[0]!.env).toEqual(expect.arrayContaining([{ name: 'FUNC_DRAIN_DELAY', value: '1000' }, { name: 'FUNC_SHUTDOWN_TIMEOUT', value: '300000' }]));
    let most = 0;
    let mostPods = 0;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        most = Math.max(most, (await replicas('burst-00001')) ?? 0);
        mostPods = Math.max(mostPods, (await livePods('burst-00001')).length);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const answers = await Promise.all(Array.from({ length: 20 }, () => send('burst.default.localhost', '/slow?ms=300')));
    watching = false;
    await watch;
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(answers.every((a) => a.body === 'slow done')).toBe(true);
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(3);
    expect(mostPods).toBeLessThanOrEqual(3);
  }, 300_000);

  it('the gateway\'s load endpoint refuses a malformed wait', async () => {
    const r = await send(gateway.host, '/activator/stats?wait=soon');
    expect(r).toEqual({ status: 400, body: 'wait must be a whole number of milliseconds\n' });
    const now = await send(gateway.host, '/activator/stats');
    expect(JSON.parse(now.body)).toMatchObject({ periodMs: expect.any(Number), revisions: expect.any(Array) });
  });
});
