/**
 * The activator's own readiness probes, through the gateway against a real API server (no
 * controllers but the CRDs': the test writes the Route, the Revision and the Endpoints as the serving and
 * endpoints controllers would): a request held for a revision whose only pod the Endpoints list as
 * not ready goes to that pod once the gateway's probe of it succeeds; while the probe fails it is
 * never sent there (the pod sees probes only) and ends 503 at its hold; a pod whose container has a
 * startup probe is probed for readiness, and sent requests, only once its startup probe succeeded.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeClient, Resources, resourceType } from '@func/kube-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { AdminUser } from '../../src/auth/credentials.js';
import { startServer } from '../../src/server.js';
import { installBuiltinCrds } from '../../src/serving/crds.js';
import { startGateway, type Gateway } from '../../src/serving/gateway/gateway.js';
import { MemoryStorage } from '../../src/storage/memory/memory.js';
import { TestToken } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

const RouteType = resourceType('serving.knative.dev/v1', 'Route', 'routes');
const RevisionType = resourceType('serving.knative.dev/v1', 'Revision', 'revisions');

describe('the activator probes a held request\'s pods itself', () => {
  let api: Awaited<ReturnType<typeof startServer>>;
  let kube: KubeClient;
  let gateway: Gateway;
  const pods: Server[] = [];

  beforeAll(async () => {
    // Only the controller that serves the CRDs: the test stands for the others.
    api = await startServer({ storage: new MemoryStorage(), controllers: ['crd-controller'], log: () => undefined, authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])) });
    await installBuiltinCrds(api.registry, { eventing: false });
    kube = new KubeClient({ server: api.url, credentials: { token: TestToken }, namespace: 'default', context: 't', files: [], insecureSkipTlsVerify: false });
    await until('the serving kinds are served', () => kube.list(RevisionType, { namespace: 'default' }).then(() => true, () => false));
    gateway = await startGateway({ kube, host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await gateway?.stop();
    await Promise.all(pods.map((p) => new Promise((r) => p.close(r))));
    await api?.close();
  });

  /** A pod on a port of its own: its readiness path answers `ready()` ? 200 : 503, its startup path `started()` so, every other request 200 "served"; what reached it, by User-Agent and path. */
  const pod = async (ready: () => boolean, started: () => boolean = () => true) => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.headers['user-agent']} ${req.url}`);
      if (req.url === '/ready') return void res.writeHead(ready() ? 200 : 503).end();
      if (req.url === '/started') return void res.writeHead(started() ? 200 : 503).end();
      res.writeHead(200, { 'content-type': 'text/plain' }).end('served');
    });
    pods.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { port: (server.address() as AddressInfo).port, seen };
  };

  /** A Route whose host sends everything to revision `name`, that revision (readiness httpGet /ready, hold `timeoutSeconds`), and its Endpoints listing the pod not ready. */
  const revision = async (name: string, port: number, timeoutSeconds: number, container: Record<string, unknown> = {}) => {
    await kube.create(RevisionType, { apiVersion: 'serving.knative.dev/v1', kind: 'Revision', metadata: { name, namespace: 'default' }, spec: { timeoutSeconds, containers: [{ image: 'probe:v1', ports: [{ containerPort: 8080 }], readinessProbe: { httpGet: { path: '/ready' } }, ...container }] } });
    const route = await kube.create(RouteType, { apiVersion: 'serving.knative.dev/v1', kind: 'Route', metadata: { name, namespace: 'default' }, spec: { traffic: [{ revisionName: name, percent: 100 }] } });
    await kube.update(RouteType, { ...route, status: { url: `http://${name}.default.example.com`, traffic: [{ revisionName: name, percent: 100 }] } }, { subresource: 'status' });
    await kube.create(Resources.endpoints, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace: 'default' }, subsets: [{ notReadyAddresses: [{ ip: '127.0.0.1' }], ports: [{ port }] }] });
  };

  const send = (host: string) => new Promise<{ status: number; body: string }>((resolve, reject) => {
    const url = new URL(gateway.url);
    const req = request({ host: url.hostname, port: url.port, path: '/hello', headers: { host }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject).end();
  });

  it('forwards to a pod listed not ready once the gateway\'s probe of it succeeds, before the Endpoints say so', async () => {
    let ready = false;
    const p = await pod(() => ready);
    await revision('warming', p.port, 30);
    // Sent again while the gateway has not read the Route yet (404); then held.
    const answer = until('a request routed', async () => {
      const r = await send('warming.default.example.com');
      return r.status !== 404 && r;
    });
    await until('the held request made the gateway probe the pod', () => p.seen.some((s) => s.endsWith(' /ready')));
    expect(p.seen.every((s) => s.startsWith('kube-probe/') && s.endsWith(' /ready'))).toBe(true);
    ready = true;
    expect(await answer).toEqual({ status: 200, body: 'served' });
    expect(p.seen.at(-1)).toMatch(/ \/hello$/);
    // The Endpoints still list it not ready: the gateway's probe alone let the request through.
    const ep = await kube.get<any>(Resources.endpoints, 'warming', { namespace: 'default' });
    expect(ep.subsets[0].addresses).toBeUndefined();
  });

  it('never sends a held request to a pod whose probe fails: 503 at the end of the hold, the pod saw probes only', async () => {
    const p = await pod(() => false);
    await revision('unready', p.port, 1);
    await until('the gateway knows the revision', async () => (await send('unready.default.example.com')).status === 503);
    expect(p.seen.length).toBeGreaterThan(0);
    expect(p.seen.every((s) => s.startsWith('kube-probe/') && s.endsWith(' /ready'))).toBe(true);
  });

  it('runs a container\'s startup probe before its readiness probe: a pod that answers /ready but has not started takes no request', async () => {
    let started = false;
    const p = await pod(() => true, () => started);
    await revision('starting', p.port, 30, { startupProbe: { httpGet: { path: '/started' }, failureThreshold: 60 } });
    const answer = until('a request routed', async () => {
      const r = await send('starting.default.example.com');
      return r.status !== 404 && r;
    });
    await until('five startup probes of the pod', () => p.seen.filter((s) => s.endsWith(' /started')).length >= 5);
    // Not started: its readiness not probed, no request sent to it.
    expect(p.seen.every((s) => s.startsWith('kube-probe/') && s.endsWith(' /started'))).toBe(true);
    started = true;
    expect(await answer).toEqual({ status: 200, body: 'served' });
    expect(p.seen.slice(-2)).toEqual([expect.stringMatching(/^kube-probe\/.* \/ready$/), expect.stringMatching(/ \/hello$/)]);
  });
});
