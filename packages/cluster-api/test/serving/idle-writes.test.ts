/**
 * The serving controllers write only what changes. `cluster-api serve --disable-controller-manager`
 * with `cluster-api controller-manager` as a command of its own, so every write the controllers make
 * is an HTTP request the API server counts (apiserver_request_total, read with `kubectl get --raw
 * /metrics`): once two Knative Services (one with a tagged traffic target), their Configurations,
 * Routes, Revisions, Deployments and Services and a DomainMapping are Ready and settled, waking each
 * controller (an annotation on what it watches) makes no update (PUT) or patch beyond the
 * annotations themselves, and moves no other object's resourceVersion. Before, the revision
 * controller sent its Deployment's spec again on every wake-up: compared with the stored one, which
 * the API server had defaulted, it always differed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, haveKubectl } from '../serve/process.js';
import { startServingServe, type ServingServe } from '../support/serving-serve.js';
import { until } from '../../testing/src/poll.js';

/** What the serving controllers write: the kinds and subresources, as apiserver_request_total names them. */
const Written = new Set(['services', 'deployments', 'configurations', 'routes', 'revisions', 'domainmappings']);

/** Updates (PUT) and patches the server answered, by resource[/subresource], from its /metrics text (verbs as kube-apiserver reports them). */
function writesOf(metrics: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const m of metrics.matchAll(/^apiserver_request_total\{([^}]*)\} (\d+)$/gm)) {
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (!Written.has(labels.resource!) || (labels.verb !== 'PUT' && labels.verb !== 'PATCH')) continue;
    const key = labels.subresource ? `${labels.resource}/${labels.subresource}` : labels.resource!;
    counts[key] = (counts[key] ?? 0) + Number(m[2]);
  }
  return counts;
}

describe.runIf(haveKubectl)('the serving controllers write only what changes', () => {
  let serve: ServingServe;
  let manager: ChildProcess | undefined;
  let managerLog = '';

  beforeAll(async () => {
    serve = await startServingServe({
      args: ['--disable-controller-manager'],
      listening: async (s) => {
        manager = spawn(process.execPath, [cli, 'controller-manager', '--kubeconfig', join(s.dir, 'data', 'kubeconfig.yaml'), '--no-leader-elect'], { stdio: ['ignore', 'ignore', 'pipe'] });
        manager.stderr!.on('data', (d: Buffer) => (managerLog += d.toString()));
        await until('the controller manager running', () => managerLog.includes('"msg":"controller-manager running"'), { timeoutMs: 30_000 });
      },
    });
  }, 240_000);
  afterAll(async () => {
    if (manager && manager.exitCode === null) {
      const exited = new Promise((r) => manager!.once('exit', r));
      manager.kill('SIGTERM');
      await exited;
    }
    await serve?.s.close();
  });

  const writes = async () => writesOf(await serve.ok('get', '--raw', '/metrics'));
  const Objects = 'ksvc,configurations.serving.knative.dev,routes.serving.knative.dev,revisions.serving.knative.dev,domainmappings.serving.knative.dev,deployments,services';
  const versions = async (): Promise<Record<string, string>> =>
    Object.fromEntries(JSON.parse(await serve.ok('get', Objects, '-o', 'json')).items.map((o: any) => [`${o.kind}/${o.metadata.name}`, o.metadata.resourceVersion]));
  /** Polls `read` until two reads `quietMs` apart agree; the last. */
  const settled = <T>(what: string, read: () => Promise<T>, quietMs: number) => {
    let last: string | undefined;
    return until(what, async () => {
      const now = await read();
      const same = JSON.stringify(now) === last;
      last = JSON.stringify(now);
      return same && now;
    }, { timeoutMs: 120_000, everyMs: quietMs });
  };

  it('waking each serving controller after Ready writes nothing: no update, no resourceVersion moved', async () => {
    // min-scale 1: the autoscaler has no reason to scale it to zero while the test watches.
    await serve.apply('steady', `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: steady
spec:
  template:
    metadata:
      annotations:
        autoscaling.knative.dev/min-scale: "1"
    spec:
      containers:
        - image: probe:v1
---
apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: tagged
spec:
  template:
    metadata:
      annotations:
        autoscaling.knative.dev/min-scale: "1"
    spec:
      containers:
        - image: probe:v1
  traffic:
    - latestRevision: true
      percent: 100
      tag: current
---
apiVersion: serving.knative.dev/v1beta1
kind: DomainMapping
metadata:
  name: steady.example.com
spec:
  ref:
    apiVersion: serving.knative.dev/v1
    kind: Service
    name: steady
`);
    const ready = (kind: string, name: string) => until(`${kind} ${name} Ready`, async () =>
      (await serve.s.kubectl('get', kind, name, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')).stdout === 'True', { timeoutMs: 180_000, everyMs: 250 });
    await ready('ksvc', 'steady');
    await ready('ksvc', 'tagged');
    await ready('domainmappings.serving.knative.dev', 'steady.example.com');
    expect((await serve.send('steady.example.com')).status).toBe(200);
    expect((await serve.send('steady.default.localhost')).status).toBe(200);
    expect((await serve.send('current-tagged.default.localhost')).status).toBe(200);

    // Settled: neither the writes nor the objects move for 2 s.
    const before = await settled('the writes settled', writes, 2000);
    const versionsBefore = await settled('the objects settled', versions, 1000);
    // The counts see the controllers' writes: each serving kind's status was written over HTTP.
    for (const status of ['services/status', 'configurations/status', 'routes/status', 'revisions/status', 'domainmappings/status']) expect(before[status], status).toBeGreaterThan(0);

    // Wake each controller: the revision controller (its pod), the configuration,
    // service and route controllers (the Configuration), the route, service and domain mapping
    // controllers (the Route), the domain mapping controller (the DomainMapping).
    const pods = (await serve.ok('get', 'pods', '-l', 'serving.knative.dev/revision in (steady-00001,tagged-00001)', '-o', 'name')).trim().split('\n');
    expect(pods).toEqual([expect.stringMatching(/^pod\/(steady|tagged)-00001-deployment-/), expect.stringMatching(/^pod\/(steady|tagged)-00001-deployment-/)]);
    const poked: Record<string, string> = {};
    for (const [kind, name, key] of [
      ...pods.map((p) => ['pod', p.slice('pod/'.length), ''] as const),
      ...['steady', 'tagged'].flatMap((svc) => [
        ['configurations.serving.knative.dev', svc, `Configuration/${svc}`],
        ['routes.serving.knative.dev', svc, `Route/${svc}`],
      ] as const),
      ['domainmappings.serving.knative.dev', 'steady.example.com', 'DomainMapping/steady.example.com'],
    ] as const) {
      const rv = await serve.ok('annotate', kind, name, 'example.com/poke=1', '-o', 'jsonpath={.metadata.resourceVersion}');
      if (key) poked[key] = rv;
    }
    // What those annotations were: one PATCH each of these (the pods' are not counted here).
    const ours = { configurations: 2, routes: 2, domainmappings: 1 };
    const expected = { ...before };
    for (const [k, n] of Object.entries(ours)) expected[k] = (expected[k] ?? 0) + n;

    // Whatever the controllers do in response, they have done once the counts stand still for 3 s.
    const after = await settled('the writes after the wake-up', writes, 3000);
    expect(after).toEqual(expected);
    expect(await versions()).toEqual({ ...versionsBefore, ...poked });
    // Still serving.
    expect((await serve.send('steady.default.localhost')).status).toBe(200);
    expect((await serve.send('current-tagged.default.localhost')).status).toBe(200);
  }, 400_000);

  it('the metrics text it counts from: a line that is not a counter is skipped', () => {
    const text = [
      'apiserver_request_total{code="200",group="apps",resource="deployments",subresource="",verb="PUT",version="v1"} 2',
      'apiserver_request_total{code="200",group="apps",resource="deployments",subresource="status",verb="PUT",version="v1"} 5',
      'apiserver_request_total{code="409",group="",resource="services",subresource="",verb="PATCH",version="v1"} 1',
      'apiserver_request_total{code="200",group="",resource="pods",subresource="",verb="PATCH",version="v1"} 9',
      'apiserver_request_total{code="200",group="",resource="services",subresource="",verb="GET",version="v1"} 9',
      'apiserver_request_total{resource="routes",verb="PUT"} many',
      '# HELP apiserver_request_total Counter',
    ].join('\n');
    expect(writesOf(text)).toEqual({ deployments: 2, 'deployments/status': 5, services: 1 });
  });
});
