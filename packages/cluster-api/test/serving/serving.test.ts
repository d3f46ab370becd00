/**
 * Knative Serving on `cluster-api serve` (the built CLI, its embedded node running the probe
 * function's image), driven as a Knative user drives it: kubectl with Knative's hello-world Service
 * manifest, `kubectl wait --for=condition=Ready ksvc/…`, curl with the Route's Host to the gateway
 * the `listening` line names; revisions per template change, traffic splits and tags, Knative's
 * validation messages, Knative's own CRDs applied over the server's, and cascading deletion.
 * The steps build on each other, in order, on one server.
 */
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiException, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { cli, haveKubectl, type ServeProcess } from '../serve/process.js';
import { startServingServe } from '../support/serving-serve.js';
import { until } from '../../testing/src/poll.js';

const run = promisify(execFile);
const KnativeCrds = '/work/shared/crds';

interface Answer { status: number; body: string; headers: Record<string, string | string[] | undefined> }

describe.runIf(haveKubectl)('Knative Serving on serve', () => {
  let s: ServeProcess;
  let gateway: URL;
  let custom: CustomObjectsApi;

  /** A request to the gateway with `host` as its Host, on a connection of its own; a body is sent in 64 KiB chunks (chunked). */
  const send = (host: string, path = '/', body?: string, headers: Record<string, string> = {}) => new Promise<Answer>((resolve, reject) => {
    const req = request({ host: gateway.hostname, port: gateway.port, path, method: body === undefined ? 'GET' : 'POST', headers: { host, ...(body !== undefined && { 'content-type': 'text/plain' }), ...headers }, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d)).on('end', () => resolve({ status: res.statusCode!, body: text, headers: res.headers }));
    });
    req.on('error', reject);
    for (let at = 0; body !== undefined && at < body.length; at += 65_536) req.write(body.slice(at, at + 65_536));
    req.end();
  });
  const get = (host: string, path = '/', headers: Record<string, string> = {}) => send(host, path, undefined, headers);
  const ok = async (...args: string[]) => {
    const r = await s.kubectl(...args);
    expect(r.code, `kubectl ${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r.stdout;
  };
  const json = async (...args: string[]) => JSON.parse(await ok('get', ...args, '-o', 'json'));
  const apply = (name: string, yaml: string) => {
    const file = join(s.dir, `${name}.yaml`);
    writeFileSync(file, yaml);
    return s.kubectl('apply', '-f', file);
  };
  /** Knative's hello-world Service (knative.dev docs), the image a function's. */
  const hello = (target: string, extra = '') => `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: hello
spec:
  template:
    spec:
      containers:
        - image: probe:v1
          ports:
            - containerPort: 8080
          env:
            - name: TARGET
              value: "${target}"
${extra}`;
  const split = `  traffic:
    - revisionName: hello-00001
      percent: 50
      tag: old
    - latestRevision: true
      percent: 50
`;
  /** Which revision answered: the probe function answers `hello from <pod name>`, the pod named for its revision's Deployment. */
  const revisionOf = (body: string) => /^hello from (.+)-deployment-/.exec(body)?.[1];
  const routeServes = (name: string, want: (traffic: any[]) => boolean) =>
    until(`route ${name}'s traffic`, async () => {
      const rt = await json('routes.serving.knative.dev', name);
      return rt.status?.observedGeneration === rt.metadata.generation && want(rt.status?.traffic ?? []) && rt;
    }, { timeoutMs: 120_000, everyMs: 200 });

  beforeAll(async () => {
    let kc: KubeConfig;
    ({ s, gateway, kc } = await startServingServe());
    custom = kc.makeApiClient(CustomObjectsApi);
  }, 240_000);
  afterAll(() => s?.close());

  it('serves the Knative kinds from start: short names, categories, and Broker and Trigger', async () => {
    await until('the serving kinds served', async () => (await s.kubectl('get', 'ksvc,kcfg,rev,rt,brokers,triggers,domainmappings')).code === 0, { timeoutMs: 30_000, everyMs: 200 });
    const resources = await ok('api-resources', '--api-group=serving.knative.dev', '--no-headers');
    for (const line of [/^configurations\s+config,cfg,kcfg\s+serving\.knative\.dev\/v1\s+true\s+Configuration$/m, /^revisions\s+rev\s+serving\.knative\.dev\/v1\s+true\s+Revision$/m,
      /^routes\s+rt\s+serving\.knative\.dev\/v1\s+true\s+Route$/m, /^services\s+kservice,ksvc\s+serving\.knative\.dev\/v1\s+true\s+Service$/m,
      /^domainmappings\s+dm\s+serving\.knative\.dev\/v1beta1\s+true\s+DomainMapping$/m]) expect(resources).toMatch(line);
    expect(await ok('get', 'brokers')).toBe('');
    // The gateway reads as an identity of its own, allowed to read what it routes by and nothing more.
    const can = async (...a: string[]) => (await s.kubectl('auth', 'can-i', ...a, '--as', 'system:serving-gateway')).stdout.trim();
    expect(await can('watch', 'routes.serving.knative.dev')).toBe('yes');
    expect(await can('list', 'domainmappings.serving.knative.dev')).toBe('yes');
    expect(await can('list', 'endpoints')).toBe('yes');
    expect(await can('update', 'routes.serving.knative.dev')).toBe('no');
    expect(await can('get', 'secrets')).toBe('no');
    expect(await can('list', 'services')).toBe('no');
  }, 60_000);

  it('makes Knative\'s hello-world Service Ready with a URL the gateway answers on', async () => {
    const applied = await apply('hello', hello('World'));
    expect(applied.stdout).toContain('service.serving.knative.dev/hello created');
    await ok('wait', '--for=condition=Ready', 'ksvc/hello', '--timeout=180s');
    const ksvc = await json('ksvc', 'hello');
    expect(ksvc.status.url).toBe('http://hello.default.localhost');
    expect(ksvc.status.address.url).toBe('http://hello.default.svc.cluster.local');
    expect(ksvc.status).toMatchObject({ latestCreatedRevisionName: 'hello-00001', latestReadyRevisionName: 'hello-00001', observedGeneration: 1, traffic: [{ revisionName: 'hello-00001', latestRevision: true, percent: 100 }] });
    expect(ksvc.status.conditions.map((c: any) => `${c.type}=${c.status}`)).toEqual(['ConfigurationsReady=True', 'Ready=True', 'RoutesReady=True']);
    // Knative's placeholder Service: the cluster-local name resolves in cluster DNS, to the gateway's Service.
    const placeholder = await until('the placeholder Service', async () => (await s.kubectl('get', 'service', 'hello', '-o', 'json')).code === 0 && json('service', 'hello'));
    expect(placeholder.spec).toMatchObject({ type: 'ExternalName', externalName: 'gateway.knative-serving.svc.cluster.local' });
    expect(placeholder.metadata.ownerReferences).toMatchObject([{ kind: 'Route', name: 'hello', controller: true }]);
    expect(placeholder.metadata.labels).toMatchObject({ 'serving.knative.dev/route': 'hello', 'serving.knative.dev/service': 'hello' });
    const table = await ok('get', 'ksvc', 'hello');
    expect(table).toMatch(/^NAME\s+URL\s+LATESTCREATED\s+LATESTREADY\s+READY\s+REASON\n/);
    expect(table).toMatch(/^hello\s+http:\/\/hello\.default\.localhost\s+hello-00001\s+hello-00001\s+True\s*$/m);
    // What the Revision runs as: its Deployment and Service, with Knative's labels.
    const rev = await json('rev', 'hello-00001');
    expect(rev.status.conditions.map((c: any) => `${c.type}=${c.status}`)).toEqual(['Active=True', 'ContainerHealthy=True', 'Ready=True', 'ResourcesAvailable=True']);
    const labels = { 'serving.knative.dev/service': 'hello', 'serving.knative.dev/configuration': 'hello', 'serving.knative.dev/revision': 'hello-00001', 'serving.knative.dev/revisionUID': rev.metadata.uid };
    expect((await json('deployment', 'hello-00001-deployment')).metadata.labels).toMatchObject(labels);
    expect((await json('service', 'hello-00001')).metadata.labels).toMatchObject(labels);

    // curl, as the user would, with the URL's host.
    const { stdout } = await run('curl', ['-sS', '-H', 'Host: hello.default.localhost', `${gateway.href}`]);
    expect(revisionOf(stdout)).toBe('hello-00001');
    // The runtime contract's environment, and the headers the gateway adds.
    for (const [name, value] of Object.entries({ K_SERVICE: 'hello', K_CONFIGURATION: 'hello', K_REVISION: 'hello-00001', PORT: '8080', TARGET: 'World' }))
      expect((await get('hello.default.localhost', `/env?name=${name}`)).body).toBe(value);
    expect((await get('hello.default.localhost:80', '/env?name=HOSTNAME')).body).toMatch(/^hello-00001-deployment-/);
    expect((await get('hello.default.localhost', '/header?name=x-forwarded-host')).body).toBe('hello.default.localhost');
    expect((await get('hello.default.localhost', '/header?name=x-forwarded-proto')).body).toBe('http');
    expect((await get('hello.default.localhost', '/header?name=x-forwarded-for')).body).toBe('127.0.0.1');
    expect((await get('hello.default.localhost', '/header?name=x-forwarded-for', { 'x-forwarded-for': '10.1.2.3' })).body).toBe('10.1.2.3, 127.0.0.1');
    // A body of 1 MiB goes through and back, streamed.
    const big = 'x'.repeat(1 << 20);
    const echoed = await send('hello.default.localhost', '/echo', big);
    expect(echoed.status).toBe(200);
    expect(echoed.body.length).toBe(big.length);
    expect(echoed.body === big).toBe(true);
  }, 240_000);

  it('delivers a Trigger\'s events to a Knative Service by reference, through the gateway by its cluster-local name', async () => {
    const broker = /"msg":"listening".*"broker":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(s.log())?.[1];
    expect(broker, s.log()).toBeDefined();
    expect((await apply('eventing', `apiVersion: eventing.knative.dev/v1
kind: Broker
metadata:
  name: default
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: to-hello
spec:
  broker: default
  subscriber:
    ref: {apiVersion: serving.knative.dev/v1, kind: Service, name: hello}
    uri: /log?msg=delivered-through-the-gateway
`)).code).toBe(0);
    await ok('wait', '--for=condition=Ready', 'trigger/to-hello', '--timeout=60s');
    expect((await json('trigger', 'to-hello')).status.subscriberUri).toBe('http://hello.default.svc.cluster.local/log?msg=delivered-through-the-gateway');
    const post = () => fetch(`${broker}/default/default`, { method: 'POST', headers: { 'ce-specversion': '1.0', 'ce-id': `e-${Date.now()}`, 'ce-source': '/test', 'ce-type': 'test.event', 'content-type': 'text/plain' }, body: 'hi' });
    expect((await post()).status).toBe(202);
    await until('the function logging the delivery', async () => (await s.kubectl('logs', '-l', 'serving.knative.dev/service=hello', '--tail=-1')).stdout.includes('delivered-through-the-gateway'), { timeoutMs: 60_000, everyMs: 500 });
    await ok('delete', 'trigger', 'to-hello');
  }, 120_000);

  it('answers 404 for a host no Route has', async () => {
    const r = await get('nothing.default.localhost');
    expect(r.status).toBe(404);
    expect((await get('')).status).toBe(404);
  });

  it('makes hello-00002 when the template changes, and moves the latest revision\'s traffic to it with no request failing', async () => {
    // A request loop runs through the rollout: every answer is a 200 from one revision or the other.
    const answers: string[] = [];
    let rolling = true;
    const loop = (async () => {
      while (rolling) {
        const r = await get('hello.default.localhost');
        answers.push(r.status === 200 ? (revisionOf(r.body) ?? r.body) : `${r.status} ${r.body}`);
      }
    })();
    expect((await apply('hello', hello('Again'))).code).toBe(0);
    await routeServes('hello', (t) => t.length === 1 && t[0].revisionName === 'hello-00002');
    await until('hello-00002 answering', async () => answers.at(-1) === 'hello-00002', { timeoutMs: 60_000, everyMs: 100 });
    rolling = false;
    await loop;
    expect(answers.filter((a) => a !== 'hello-00001' && a !== 'hello-00002')).toEqual([]);
    expect(answers.indexOf('hello-00002')).toBeGreaterThan(0);
    for (let i = 0; i < 10; i++) expect(revisionOf((await get('hello.default.localhost')).body)).toBe('hello-00002');
    const ksvc = await json('ksvc', 'hello');
    expect(ksvc.status).toMatchObject({ latestCreatedRevisionName: 'hello-00002', latestReadyRevisionName: 'hello-00002' });
    // The first revision is kept, immutable: still Ready, its spec as it was.
    const first = await json('rev', 'hello-00001');
    expect(first.spec.containers[0].env).toEqual([{ name: 'TARGET', value: 'World' }]);
    const changed = await s.kubectl('patch', 'rev', 'hello-00001', '--type=merge', '-p', '{"spec":{"timeoutSeconds":30}}');
    expect(changed.code).not.toBe(0);
    expect(changed.stderr).toContain('admission webhook "validation.webhook.serving.knative.dev" denied the request: validation failed: Immutable fields changed (-old +new): spec');
  }, 240_000);

  it('splits traffic 50/50 per request, and gives a tag its own URL reaching only its revision', async () => {
    expect((await apply('hello', hello('Again', split))).code).toBe(0);
    const rt = await routeServes('hello', (t) => t.length === 2);
    expect(rt.status.traffic).toEqual([
      { tag: 'old', revisionName: 'hello-00001', latestRevision: false, percent: 50, url: 'http://old-hello.default.localhost' },
      { revisionName: 'hello-00002', latestRevision: true, percent: 50 },
    ]);
    await until('the gateway following the split', async () => revisionOf((await get('old-hello.default.localhost')).body) === 'hello-00001', { timeoutMs: 30_000, everyMs: 100 });
    const counts: Record<string, number> = {};
    // 1,000 requests, 10 at a time: a fair 50/50 choice lands outside 45-55 % once in about 650 runs (3.2 standard deviations).
    for (let i = 0; i < 100; i++) {
      for (const body of await Promise.all(Array.from({ length: 10 }, async () => (await get('hello.default.localhost')).body))) {
        const who = revisionOf(body) ?? 'none';
        counts[who] = (counts[who] ?? 0) + 1;
      }
    }
    expect(Object.keys(counts).sort()).toEqual(['hello-00001', 'hello-00002']);
    expect(counts['hello-00001']!).toBeGreaterThanOrEqual(450);
    expect(counts['hello-00001']!).toBeLessThanOrEqual(550);
    for (let i = 0; i < 20; i++) expect(revisionOf((await get('old-hello.default.localhost')).body)).toBe('hello-00001');
  }, 240_000);

  it('runs the gateway as a role of its own too (cluster-api gateway), and refuses a port that is none', async () => {
    const kubeconfig = join(s.dir, 'data', 'kubeconfig.yaml');
    const child = spawn(process.execPath, [cli, 'gateway', '--kubeconfig', kubeconfig, '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      let log = '';
      child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
      const url = await until('the gateway listening', () => /"msg":"listening","gateway":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(log)?.[1], { timeoutMs: 30_000 });
      const own = new URL(url);
      const answer = await until('an answer through the second gateway', () => new Promise<string | undefined>((resolve) => {
        request({ host: own.hostname, port: own.port, path: '/', headers: { host: 'old-hello.default.localhost' }, agent: false }, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve(res.statusCode === 200 ? body : undefined));
        }).on('error', () => resolve(undefined)).end();
      }), { timeoutMs: 30_000, everyMs: 100 });
      expect(revisionOf(answer)).toBe('hello-00001');
    } finally {
      child.kill('SIGTERM');
    }
    for (const [args, message] of [
      [['--port', '70000'], 'cluster-api: --port: "70000" is not a port (0-65535)\n'],
      [['--port', String(gateway.port)], `cluster-api: the gateway's port ${gateway.port} on 127.0.0.1 is in use: pick another with --port\n`],
    ] as const) {
      const err = await run(process.execPath, [cli, 'gateway', '--kubeconfig', kubeconfig, ...args]).then(() => undefined, (e: { code: number; stderr: string }) => e);
      expect(err?.code).toBe(1);
      expect(err!.stderr).toBe(message);
    }
  }, 120_000);

  it('refuses traffic that does not sum to 100 with Knative\'s message (kubectl and client-node)', async () => {
    const bad = await apply('bad', `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: bad
spec:
  template:
    spec:
      containers:
        - image: probe:v1
  traffic:
    - latestRevision: true
      percent: 90
`);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('admission webhook "validation.webhook.serving.knative.dev" denied the request: validation failed: Traffic targets sum to 90, want 100: spec.traffic');
    const err = await custom.createNamespacedCustomObject({ group: 'serving.knative.dev', version: 'v1', namespace: 'default', plural: 'routes', body: {
      apiVersion: 'serving.knative.dev/v1', kind: 'Route', metadata: { name: 'bad' },
      spec: { traffic: [{ revisionName: 'hello-00001', percent: 120, tag: 'Not_A_Label' }, { revisionName: 'hello-00002', tag: 'Not_A_Label' }] },
    } }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ApiException);
    expect((err as ApiException<string>).code).toBe(400);
    const status = JSON.parse((err as ApiException<string>).body);
    expect(status).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest' });
    expect(status.message).toContain('expected 0 <= 120 <= 100: spec.traffic[0].percent');
    expect(status.message).toContain('not a DNS 1035 label: "Not_A_Label": spec.traffic[0].tag');
    expect(status.message).toContain('Traffic targets sum to 0, want 100: spec.traffic');
    expect((await s.kubectl('get', 'ksvc', 'bad')).code).not.toBe(0);
    expect((await s.kubectl('get', 'routes.serving.knative.dev', 'bad')).code).not.toBe(0);
  }, 60_000);

  it('reports a revision whose container keeps exiting: not Ready, with the reason up to the Service', async () => {
    expect((await apply('crash', `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: crash
spec:
  template:
    spec:
      containers:
        - image: probe:v1
          env:
            - name: CRASH_ON_START
              value: "as asked"
`)).code).toBe(0);
    const ksvc = await until('crash not Ready', async () => {
      const o = await json('ksvc', 'crash');
      return (o.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'False') && o;
    }, { timeoutMs: 120_000, everyMs: 250 });
    const ready = ksvc.status.conditions.find((c: any) => c.type === 'Ready');
    expect(ready.reason).toBe('RevisionFailed');
    expect(ready.message).toMatch(/^Revision "crash-00001" failed with message: /);
    const healthy = (await json('rev', 'crash-00001')).status.conditions.find((c: any) => c.type === 'ContainerHealthy');
    expect(healthy).toMatchObject({ status: 'False' });
    expect(healthy.reason).toMatch(/^(ExitCode\d+|CrashLoopBackOff)$/);
    expect(ksvc.status.latestReadyRevisionName).toBeUndefined();
    // Nothing to route to: the gateway does not answer for it.
    expect((await get('crash.default.localhost')).status).toBe(503);
    await ok('delete', 'ksvc', 'crash');
  }, 180_000);

  it('answers 504 past the revision\'s timeoutSeconds, and 503 while it has no ready endpoint', async () => {
    expect((await apply('ready', `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: ready
spec:
  template:
    spec:
      timeoutSeconds: 1
      containers:
        - image: probe:v1
          readinessProbe:
            httpGet:
              path: /health/readiness
            periodSeconds: 1
            failureThreshold: 1
`)).code).toBe(0);
    await ok('wait', '--for=condition=Ready', 'ksvc/ready', '--timeout=180s');
    await until('ready answering', async () => (await get('ready.default.localhost')).status === 200, { timeoutMs: 30_000, everyMs: 100 });
    expect(await get('ready.default.localhost', '/slow?ms=10')).toMatchObject({ status: 200, body: 'slow done' });
    expect(await get('ready.default.localhost', '/slow?ms=5000')).toMatchObject({ status: 504, body: 'request timeout\n' });
    // The pod's readiness taken down through the gateway (retried: a slow probe under load may have flapped it meanwhile).
    await until('readiness set down', async () => (await get('ready.default.localhost', '/ready?set=false')).body === 'ready=false', { timeoutMs: 30_000, everyMs: 200 });
    const unready = await until('a 503 from the gateway', async () => {
      const r = await get('ready.default.localhost');
      return r.status === 503 && r;
    }, { timeoutMs: 60_000, everyMs: 200 });
    expect(unready.body).toContain('no ready endpoint for revision "ready-00001"');
  }, 240_000);

  it('takes the domain from the config-domain ConfigMap in knative-serving, as Knative does', async () => {
    expect((await apply('domain', `apiVersion: v1
kind: Namespace
metadata:
  name: knative-serving
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: config-domain
  namespace: knative-serving
data:
  example.test: ""
  web.example.test: |
    selector:
      app: web
  broken.example.test: "selector: [unclosed"
`)).code).toBe(0);
    await until('ready\'s URL in the configured domain', async () => (await json('ksvc', 'ready')).status?.url === 'http://ready.default.example.test', { timeoutMs: 60_000, everyMs: 200 });
    await ok('label', 'ksvc', 'ready', 'app=web');
    await until('ready\'s URL in the selected domain', async () => (await json('ksvc', 'ready')).status?.url === 'http://ready.default.web.example.test', { timeoutMs: 60_000, everyMs: 200 });
    await until('the gateway on the new host', async () => (await get('ready.default.web.example.test')).status !== 404, { timeoutMs: 30_000, everyMs: 100 });
    expect((await get('ready.default.localhost')).status).toBe(404);
    // Without the ConfigMap, the default domain again.
    await ok('delete', 'configmap', 'config-domain', '-n', 'knative-serving');
    await until('hello\'s URL back under localhost', async () => (await json('ksvc', 'hello')).status?.url === 'http://hello.default.localhost', { timeoutMs: 60_000, everyMs: 200 });
  }, 180_000);

  it('serves a DomainMapping\'s domain for the Service it names, one namespace per domain', async () => {
    // ready's pod made ready again, through the API server's pod proxy.
    const pod = (await ok('get', 'pods', '-l', 'serving.knative.dev/revision=ready-00001', '-o', 'jsonpath={.items[0].metadata.name}')).trim();
    expect((await ok('get', '--raw', `/api/v1/namespaces/default/pods/${pod}:8080/proxy/ready?set=true`))).toBe('ready=true');
    const mapping = (ns: string, kind = 'Service', apiVersion = 'serving.knative.dev/v1') => `apiVersion: serving.knative.dev/v1beta1
kind: DomainMapping
metadata:
  name: ready.example.org
  namespace: ${ns}
spec:
  ref:
    name: ready
    kind: ${kind}
    apiVersion: ${apiVersion}
`;
    expect((await apply('dm', mapping('default'))).code).toBe(0);
    await ok('wait', '--for=condition=Ready', 'domainmapping/ready.example.org', '--timeout=60s');
    const dm = await json('domainmapping', 'ready.example.org');
    expect(dm.status).toMatchObject({ url: 'http://ready.example.org', address: { url: 'http://ready.example.org' } });
    const answer = await until('the mapped domain answering', async () => {
      const r = await get('ready.example.org');
      return r.status === 200 && r;
    }, { timeoutMs: 30_000, everyMs: 100 });
    expect(revisionOf(answer.body)).toBe('ready-00001');
    // The same domain in another namespace: not claimed, not served from there.
    await ok('create', 'namespace', 'other');
    expect((await apply('dm-other', mapping('other'))).code).toBe(0);
    const other = await until('the second claim refused', async () => {
      const o = await json('domainmapping', 'ready.example.org', '-n', 'other');
      return (o.status?.conditions ?? []).find((c: any) => c.type === 'DomainClaimed' && c.status === 'False');
    }, { timeoutMs: 30_000, everyMs: 200 });
    expect(other).toMatchObject({ reason: 'DomainAlreadyClaimed', message: 'The domain name is already in use by another DomainMapping in namespace "default"' });
    // A ref to what is not a Knative Service or Route does not resolve.
    expect((await apply('dm-bad', mapping('other', 'Deployment', 'apps/v1').replace('ready.example.org', 'bad.example.org'))).code).toBe(0);
    const bad = await until('the bad ref reported', async () => {
      const o = await json('domainmapping', 'bad.example.org', '-n', 'other');
      return (o.status?.conditions ?? []).find((c: any) => c.type === 'ReferenceResolved' && c.status === 'False');
    }, { timeoutMs: 30_000, everyMs: 200 });
    expect(bad.message).toBe('ref must name a serving.knative.dev Service or Route, not "apps/v1 Deployment"');
    expect((await get('bad.example.org')).status).toBe(404);
    expect(revisionOf((await get('ready.example.org')).body)).toBe('ready-00001');
  }, 180_000);

  it('keeps Services Ready and reconciled when Knative\'s own CRDs are applied over the server\'s', async () => {
    for (const dir of ['knative-serving', 'knative-eventing']) expect((await s.kubectl('apply', '--server-side', '--force-conflicts', '-f', join(KnativeCrds, dir))).code).toBe(0);
    const crd = await json('crd', 'services.serving.knative.dev');
    expect(crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.template).toBeDefined();
    await ok('wait', '--for=condition=Established', 'crd/services.serving.knative.dev', 'crd/routes.serving.knative.dev', '--timeout=60s');
    await ok('wait', '--for=condition=Ready', 'ksvc/hello', '--timeout=60s');
    // The controllers follow the replaced kinds: a new template still makes a revision that gets traffic.
    expect((await apply('hello', hello('Third', split))).code).toBe(0);
    await routeServes('hello', (t) => t.some((x) => x.revisionName === 'hello-00003'));
    await ok('wait', '--for=condition=Ready', 'ksvc/hello', '--timeout=120s');
    expect((await json('ksvc', 'hello')).status.latestReadyRevisionName).toBe('hello-00003');
    await until('hello-00003 answering', async () => revisionOf((await get('hello.default.localhost')).body) === 'hello-00003', { timeoutMs: 60_000, everyMs: 100 });
    expect(revisionOf((await get('old-hello.default.localhost')).body)).toBe('hello-00001');
  }, 300_000);

  it('marks which revisions are routed, and collects the others as config-gc says', async () => {
    const revs = 'revisions.serving.knative.dev';
    const states = async () => Object.fromEntries((await json(revs, '-l', 'serving.knative.dev/configuration=hello')).items
      .map((r: any) => [r.metadata.name, r.metadata.labels['serving.knative.dev/routingState']]));
    // -00001 keeps its tag, -00003 is the latest, -00002 was routed before.
    await until('routing states', async () => JSON.stringify(await states()) === JSON.stringify({ 'hello-00001': 'active', 'hello-00002': 'reserve', 'hello-00003': 'active' }), { timeoutMs: 30_000, everyMs: 200 });
    const reserved = await json(revs, 'hello-00002');
    expect(Date.parse(reserved.metadata.annotations['serving.knative.dev/routingStateModified'])).toBeGreaterThan(Date.parse(reserved.metadata.creationTimestamp) - 1);
    expect(reserved.metadata.annotations['serving.knative.dev/routes']).toBeUndefined();
    expect((await json(revs, 'hello-00001')).metadata.annotations['serving.knative.dev/routes']).toBe('hello');
    // Knative's defaults keep it (20 non-active revisions, 48 h); keeping none, with no wait, collects it and what it ran as.
    expect((await apply('gc', `apiVersion: v1
kind: ConfigMap
metadata:
  name: config-gc
  namespace: knative-serving
data:
  retain-since-create-time: disabled
  retain-since-last-active-time: disabled
  min-non-active-revisions: "0"
  max-non-active-revisions: "0"
`)).code).toBe(0);
    await until('hello-00002 collected', async () => JSON.stringify(Object.keys(await states())) === JSON.stringify(['hello-00001', 'hello-00003']), { timeoutMs: 60_000, everyMs: 200 });
    await until('its Deployment gone', async () => (await s.kubectl('get', 'deployment', 'hello-00002-deployment')).code !== 0, { timeoutMs: 60_000, everyMs: 200 });
    expect(revisionOf((await get('old-hello.default.localhost')).body)).toBe('hello-00001');
    expect(revisionOf((await get('hello.default.localhost', '/', {})).body)).toMatch(/^hello-0000[13]$/);
  }, 180_000);

  it('forgets a Route deleted alone on the revisions it routed to', async () => {
    const routes = async () => (await json('revisions.serving.knative.dev', 'hello-00001')).metadata.annotations?.['serving.knative.dev/routes'];
    expect((await apply('pin', `apiVersion: serving.knative.dev/v1
kind: Route
metadata:
  name: pin
spec:
  traffic:
    - revisionName: hello-00001
      percent: 100
`)).code).toBe(0);
    await until('hello-00001 routed by pin too', async () => (await routes()) === 'hello,pin', { timeoutMs: 30_000, everyMs: 200 });
    await until('pin answering from hello-00001', async () => revisionOf((await get('pin.default.localhost')).body) === 'hello-00001', { timeoutMs: 30_000, everyMs: 100 });
    await ok('delete', 'routes.serving.knative.dev', 'pin');
    await until('hello-00001 routed by hello alone', async () => (await routes()) === 'hello', { timeoutMs: 30_000, everyMs: 200 });
    expect((await json('revisions.serving.knative.dev', 'hello-00001')).metadata.labels['serving.knative.dev/routingState']).toBe('active');
    await until('the gateway forgetting pin', async () => (await get('pin.default.localhost')).status === 404, { timeoutMs: 30_000, everyMs: 100 });
  }, 120_000);

  it('removes the Configuration, Revisions, Route, Deployments and the gateway\'s hosts with the Service', async () => {
    await ok('delete', 'ksvc', 'hello', '--wait=false');
    // By full names: Knative's CRDs, applied above, have no `kcfg`.
    const left = async () => (await ok('get', 'configurations.serving.knative.dev,revisions.serving.knative.dev,routes.serving.knative.dev,deployments,services', '-l', 'serving.knative.dev/service=hello', '-o', 'name')).trim();
    await until('everything of hello gone', async () => (await left()) === '', { timeoutMs: 120_000, everyMs: 250 });
    await until('the gateway forgetting hello', async () => (await get('hello.default.localhost')).status === 404, { timeoutMs: 30_000, everyMs: 100 });
    expect((await get('old-hello.default.localhost')).status).toBe(404);
    expect(s.alive()).toBe(true);
  }, 180_000);
});
