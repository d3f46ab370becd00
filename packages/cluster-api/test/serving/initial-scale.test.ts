/**
 * A Knative Service created at zero pods (`autoscaling.knative.dev/initial-scale: "0"`, allowed by
 * config-autoscaler's `allow-zero-initial-scale`) on `cluster-api serve`, driven with kubectl and
 * client-node: as Knative's KPA has it (its scale target initialized at 0 ready of 0 wanted), the
 * Revision is Ready with no pod — ResourcesAvailable and ContainerHealthy True, Active False
 * NoTraffic — and so are its Route and Service; the first request through the gateway wakes it
 * through the activator (200, one pod). Without `allow-zero-initial-scale` the annotation is
 * refused at admission, as is a malformed value, with Knative's webhook message.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiException, AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveKubectl } from '../serve/process.js';
import { startServingServe, type ServingServe } from '../support/serving-serve.js';
import { until } from '../../testing/src/poll.js';

describe.runIf(haveKubectl)('initial-scale 0 on serve', () => {
  let serve: ServingServe;
  let apps: AppsV1Api;
  let core: CoreV1Api;
  let custom: CustomObjectsApi;
  const ksvc = (name: string, initialScale: string) => `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: ${name}
spec:
  template:
    metadata:
      annotations:
        autoscaling.knative.dev/initial-scale: "${initialScale}"
    spec:
      containers:
        - image: probe:v1
`;
  const replicas = async (rev: string) => (await apps.readNamespacedDeployment({ name: `${rev}-deployment`, namespace: 'default' })).spec?.replicas;
  const livePods = async (rev: string) => (await core.listNamespacedPod({ namespace: 'default', labelSelector: `serving.knative.dev/revision=${rev}` })).items.filter((p) => !p.metadata?.deletionTimestamp);
  const get = async (plural: string, name: string) => (await custom.getNamespacedCustomObject({ group: 'serving.knative.dev', version: 'v1', namespace: 'default', plural, name })) as any;
  const conditions = (o: any) => Object.fromEntries((o.status?.conditions ?? []).map((c: any) => [c.type, c.reason ? `${c.status} ${c.reason}` : c.status]));

  beforeAll(async () => {
    serve = await startServingServe();
    apps = serve.kc.makeApiClient(AppsV1Api);
    core = serve.kc.makeApiClient(CoreV1Api);
    custom = serve.kc.makeApiClient(CustomObjectsApi);
  }, 240_000);
  afterAll(() => serve?.s.close());

  it('without allow-zero-initial-scale, 0 is refused, as is a malformed value, with Knative\'s webhook message (kubectl and client-node)', async () => {
    for (const [name, value] of [['one', '0'], ['bad', 'lots']] as const) {
      const file = join(serve.s.dir, `${name}.yaml`);
      writeFileSync(file, ksvc(name, value));
      const r = await serve.s.kubectl('apply', '-f', file);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(`admission webhook "validation.webhook.serving.knative.dev" denied the request: validation failed: invalid value: ${value}: spec.template.metadata.annotations.autoscaling.knative.dev/initial-scale`);
      expect((await serve.s.kubectl('get', 'ksvc', name)).code).not.toBe(0);
    }
    const err = await custom.createNamespacedCustomObject({ group: 'serving.knative.dev', version: 'v1', namespace: 'default', plural: 'services', body: {
      apiVersion: 'serving.knative.dev/v1', kind: 'Service', metadata: { name: 'bad2' },
      spec: { template: { metadata: { annotations: { 'autoscaling.knative.dev/initial-scale': '-1' } }, spec: { containers: [{ image: 'probe:v1' }] } } },
    } }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ApiException);
    expect((err as ApiException<string>).code).toBe(400);
    expect(JSON.parse((err as ApiException<string>).body)).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: expect.stringContaining('invalid value: -1: spec.template.metadata.annotations.autoscaling.knative.dev/initial-scale') });
  }, 60_000);

  it('allowed: Ready with 0 pods, the Route serving it; the first request wakes it (200, then 1 pod)', async () => {
    await serve.knativeConfig('config-autoscaler', { 'allow-zero-initial-scale': 'true' });
    await serve.apply('zero', ksvc('zero', '0'));
    await until('ksvc/zero Ready', async () => conditions(await get('services', 'zero')).Ready === 'True', { timeoutMs: 180_000, everyMs: 250 });
    await serve.ok('wait', '--for=condition=Ready', 'ksvc/zero', '--timeout=20s');

    const rev = await get('revisions', 'zero-00001');
    expect(conditions(rev)).toEqual({ Active: 'False NoTraffic', ContainerHealthy: 'True', Ready: 'True', ResourcesAvailable: 'True' });
    expect(rev.status).toMatchObject({ actualReplicas: 0, desiredReplicas: 0 });
    expect(await replicas('zero-00001')).toBe(0);
    expect(await livePods('zero-00001')).toEqual([]);
    const svc = await get('services', 'zero');
    expect(conditions(svc)).toEqual({ ConfigurationsReady: 'True', Ready: 'True', RoutesReady: 'True' });
    expect(svc.status).toMatchObject({ url: 'http://zero.default.localhost', latestReadyRevisionName: 'zero-00001', traffic: [{ revisionName: 'zero-00001', percent: 100 }] });
    expect(conditions(await get('routes', 'zero'))).toMatchObject({ AllTrafficAssigned: 'True', Ready: 'True' });

    // The first request: held by the activator while the revision wakes, then answered by its pod.
    const first = await serve.send('zero.default.localhost');
    expect(first.status).toBe(200);
    expect(first.body).toMatch(/^hello from zero-00001-deployment-/);
    expect(await replicas('zero-00001')).toBe(1);
    const woken = await until('status at 1 pod', async () => {
      const r = await get('revisions', 'zero-00001');
      return r.status?.actualReplicas === 1 && r;
    }, { timeoutMs: 30_000, everyMs: 250 });
    expect(conditions(woken)).toMatchObject({ Active: 'True', Ready: 'True' });
    expect((await serve.send('zero.default.localhost', '/echo', 'again')).body).toBe('again');
  }, 240_000);
});
