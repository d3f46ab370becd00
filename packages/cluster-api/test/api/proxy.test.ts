/**
 * pods/proxy and services/proxy over a real server, with kubectl (`get --raw`) and raw HTTPS: paths,
 * query, methods, bodies, kube-apiserver's header and Location rewriting, a WebSocket to the pod, and
 * every refusal as kube-apiserver words it. A local HTTP server stands in for the pod.
 */
import { createServer as createHttpsServer } from 'node:https';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { namespace, TestToken } from '../support/helpers.js';
import { runningPod, startStreamingCluster, type StreamingCluster } from '../support/streaming-helpers.js';

const podIp = '10.244.0.7';
const base = '/api/v1/namespaces/shop/pods';

/** Answers what it was asked, plus a few fixed answers to exercise the rewriting. */
function echoServer(): (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void {
  return (req, res) => {
    if (req.url === '/redirect') return void res.writeHead(302, { Location: '/login' }).end();
    if (req.url === '/absolute-redirect') return void res.writeHead(302, { Location: `http://${podIp}:8080/abs?x=1` }).end();
    if (req.url === '/elsewhere') return void res.writeHead(302, { Location: 'https://example.com/' }).end();
    if (req.url === '/cors') return void res.writeHead(200, { 'Access-Control-Allow-Origin': '*', 'X-Kept': 'yes' }).end('cors');
    if (req.url === '/fail') return void res.writeHead(500, { 'Content-Type': 'text/plain' }).end('boom');
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
    });
  };
}

const listen = async (server: Server | import('node:https').Server): Promise<number> => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
};

describe('pods/proxy and services/proxy', () => {
  let c: StreamingCluster;
  let bare: StreamingCluster;
  let pod: Server;
  let tlsPod: import('node:https').Server;
  let ports: Record<number, number>;
  beforeAll(async () => {
    pod = createServer(echoServer());
    new WebSocketServer({ server: pod, path: '/ws' }).on('connection', (ws, req) =>
      ws.on('message', (m) => ws.send(`echo ${String(m)} auth=${req.headers.authorization ?? 'none'}`)),
    );
    const plain = await listen(pod);
    c = await startStreamingCluster((_pod, port) => ports[port]);
    tlsPod = createHttpsServer({ cert: c.tls.cert, key: c.tls.key }, echoServer());
    ports = { 8080: plain, 8443: await listen(tlsPod) };
    bare = await startStreamingCluster(() => undefined, { podNetwork: false });
    for (const k of [c, bare]) expect((await k.api('POST', '/api/v1/namespaces', namespace('shop'))).status).toBe(201);
    const spec = { containers: [{ name: 'app', image: 'func', ports: [{ name: 'http', containerPort: 8080 }, { name: 'https', containerPort: 8443 }] }] };
    for (const k of [c, bare]) await runningPod(k, 'shop', 'web', spec, { app: 'web' }, podIp);
    expect((await c.api('POST', base, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'pending' }, spec })).status).toBe(201);
    for (const name of ['web', 'empty', 'stale'])
      expect((await c.api('POST', '/api/v1/namespaces/shop/services', { apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ name: 'http', port: 80, targetPort: 'http' }] } })).status).toBe(201); // no selector: these Endpoints are written here, not by the endpoints controller
    const endpoints = (name: string, subsets: unknown[]) => c.api('POST', '/api/v1/namespaces/shop/endpoints', { apiVersion: 'v1', kind: 'Endpoints', metadata: { name }, subsets });
    const address = (ip: string) => ({ ip, targetRef: { kind: 'Pod', namespace: 'shop', name: 'web' } });
    expect((await endpoints('web', [{ addresses: [address(podIp)], ports: [{ name: 'http', port: 8080 }] }])).status).toBe(201);
    expect((await endpoints('empty', [])).status).toBe(201);
    expect((await endpoints('stale', [{ addresses: [address('10.9.9.9')], ports: [{ name: 'http', port: 8080 }] }])).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await c?.close();
    await bare?.close();
    await new Promise((r) => pod?.close(r));
    await new Promise((r) => tlsPod?.close(r));
  });

  it.runIf(existsSync('/usr/bin/kubectl'))('answers kubectl get --raw through a pod and through a service', async () => {
    for (const path of [`${base}/web:8080/proxy/x?y=1`, '/api/v1/namespaces/shop/services/web:80/proxy/x?y=1', '/api/v1/namespaces/shop/services/web:http/proxy/x?y=1']) {
      const r = await c.kubectl(['get', '--raw', path]);
      expect(r.stderr).toBe('');
      expect(JSON.parse(r.stdout)).toMatchObject({ method: 'GET', url: '/x?y=1' });
    }
    const refused = await c.kubectl(['get', '--raw', `${base}/web:9999/proxy/`]);
    expect(refused.stderr).toMatch(/Error from server \(ServiceUnavailable\): error trying to reach service: connect: connection refused/);
  });

  it('sends method, path, query and body on, and the caller’s credentials nowhere', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      const body = method === 'GET' || method === 'DELETE' ? undefined : `{"m":"${method}"}`;
      // Acting as eve in system:masters (the admin may impersonate anyone): the request is served as
      // hers, and no impersonation header reaches the pod.
      const r = await c.api(method, `${base}/web:8080/proxy/a/b%20c/?q=1&q=2`, body, { 'x-custom': 'kept', 'impersonate-user': 'eve', 'impersonate-group': 'system:masters' });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ method, url: '/a/b%20c/?q=1&q=2', body: body ?? '' });
      const headers = r.json.headers as Record<string, string>;
      expect(headers['x-custom']).toBe('kept');
      expect(headers.authorization).toBeUndefined();
      expect(headers['impersonate-user']).toBeUndefined();
      expect(headers['impersonate-group']).toBeUndefined();
      expect(headers['x-forwarded-uri']).toBe(`${base}/web:8080/proxy/a/b%20c/`);
      expect(headers['x-forwarded-for']).toBe('127.0.0.1');
      expect(headers.host).toBe(new URL(c.server.url).host);
    }
    const head = await c.api('HEAD', `${base}/web:8080/proxy/h`);
    expect([head.status, head.text]).toEqual([200, '']);
  });

  it('reaches the pod by name alone (its first port), by port name, and over TLS with https:', async () => {
    expect((await c.api('GET', `${base}/web/proxy/first`)).json).toMatchObject({ url: '/first' });
    expect((await c.api('GET', `${base}/web:http/proxy/named`)).json).toMatchObject({ url: '/named' });
    expect((await c.api('GET', `${base}/http:web:8080/proxy/scheme`)).json).toMatchObject({ url: '/scheme' });
    expect((await c.api('GET', `${base}/https:web:8443/proxy/secure`)).json).toMatchObject({ url: '/secure' });
    expect(c.dials).toEqual(expect.arrayContaining(['web:8080', 'web:8443']));
  });

  it('redirects the root asked for without its slash, and keeps a trailing slash', async () => {
    const r = await c.api('GET', `${base}/web:8080/proxy?a=b`);
    expect([r.status, r.headers.get('location')]).toEqual([301, `${base}/web:8080/proxy/?a=b`]);
    expect((await c.api('GET', `${base}/web:8080/proxy/`)).json).toMatchObject({ url: '/' });
    expect((await c.api('POST', `${base}/web:8080/proxy`, 'x')).json).toMatchObject({ method: 'POST', url: '/' });
    expect((await c.api('GET', `${base}/web:8080/proxy/dir/./../dir/`)).json).toMatchObject({ url: '/dir/' });
  });

  it('brings the pod’s redirects back through the proxy, drops its CORS headers, and passes its errors through', async () => {
    const rel = await c.api('GET', `${base}/web:8080/proxy/redirect`);
    expect([rel.status, rel.headers.get('location')]).toEqual([302, `${base}/web:8080/proxy/login`]);
    expect((await c.api('GET', `${base}/web:8080/proxy/absolute-redirect`)).headers.get('location')).toBe(`${base}/web:8080/proxy/abs?x=1`);
    expect((await c.api('GET', `${base}/web:8080/proxy/elsewhere`)).headers.get('location')).toBe('https://example.com/');
    const cors = await c.api('GET', `${base}/web:8080/proxy/cors`);
    expect([cors.headers.get('access-control-allow-origin'), cors.headers.get('x-kept'), cors.text]).toEqual([null, 'yes', 'cors']);
    const fail = await c.api('GET', `${base}/web:8080/proxy/fail`);
    expect([fail.status, fail.text]).toEqual([500, 'boom']);
  });

  it('carries a WebSocket to the pod, without the caller’s token', async () => {
    const ws = new WebSocket(`${c.server.url.replace('https', 'wss')}${base}/web:8080/proxy/ws`, { ca: c.tls.ca, headers: { authorization: `Bearer ${TestToken}` } });
    const answer = await new Promise<string>((resolve, reject) => {
      ws.once('open', () => ws.send('hi'));
      ws.once('message', (m) => resolve(String(m)));
      ws.once('error', reject);
    });
    ws.close();
    expect(answer).toBe('echo hi auth=none');
  });

  it.each([
    [`${base}/web:9999/proxy/`, 503, 'ServiceUnavailable', /^error trying to reach service: connect: connection refused/],
    [`${base}/web:nope/proxy/`, 503, 'ServiceUnavailable', /^error trying to reach service: unknown port "nope"/],
    [`${base}/a:b:c:d/proxy/`, 400, 'BadRequest', /^invalid pod request "a:b:c:d"$/],
    [`${base}/ftp:web:21/proxy/`, 400, 'BadRequest', /^invalid pod request "ftp:web:21"$/],
    [`${base}/nope:8080/proxy/`, 404, 'NotFound', /^pods "nope" not found$/],
    [`${base}/pending:8080/proxy/`, 400, 'BadRequest', /^address not allowed$/],
    ['/api/v1/namespaces/shop/services/web:81/proxy/', 503, 'ServiceUnavailable', /^no service port 81 found for service "web"/],
    ['/api/v1/namespaces/shop/services/empty/proxy/', 503, 'ServiceUnavailable', /^no endpoints available for service "empty"/],
    ['/api/v1/namespaces/shop/services/stale:80/proxy/', 503, 'ServiceUnavailable', /^no endpoints available for service "stale:80"/],
    ['/api/v1/namespaces/shop/services/nope/proxy/', 404, 'NotFound', /^services "nope" not found$/],
    [`${base}/web/status/extra`, 404, 'NotFound', /^the server could not find the requested resource$/],
    [`${base}/web/log/extra`, 404, 'NotFound', /^the server could not find the requested resource$/],
  ])('answers %s with %i %s', async (path, code, reason, message) => {
    const r = await c.api('GET', path);
    expect(r.status).toBe(code);
    expect(r.json).toMatchObject({ kind: 'Status', code, reason });
    expect(r.json.message).toMatch(message);
    // A proxy's 503 carries no retry hint: client-go would retry a dead backend for ten seconds.
    expect(r.headers.get('retry-after')).toBeNull();
  });

  it('has no route to pods without a pod network, and says which node port-forward cannot reach', async () => {
    const r = await bare.api('GET', `${base}/web:8080/proxy/`);
    expect([r.status, r.json.message]).toEqual([503, expect.stringMatching(/^error trying to reach service: connect: no route to host/)]);
    const pf = await bare.api('POST', `${base}/web/portforward`, undefined, { connection: 'Upgrade', upgrade: 'SPDY/3.1', 'x-stream-protocol-version': 'portforward.k8s.io' });
    expect([pf.status, pf.json.message]).toEqual([404, 'nodes "node-1" not found']);
  });

  it('lists the proxy subresources in discovery with kube-apiserver’s verbs and kinds', async () => {
    const resources = (await c.api('GET', '/api/v1')).json.resources as { name: string; kind: string; verbs: string[] }[];
    expect(resources.find((r) => r.name === 'pods/proxy')).toMatchObject({ kind: 'PodProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] });
    expect(resources.find((r) => r.name === 'services/proxy')).toMatchObject({ kind: 'ServiceProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] });
  });
});
