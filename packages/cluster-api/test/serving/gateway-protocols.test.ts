/**
 * The gateway's other protocols on `cluster-api serve` (the built CLI, its node running pods in
 * process mode): websockets through a Route's host, a tag host and a DomainMapping, to a pod that
 * speaks them (a small Node.js program as the container's command), a revision at zero woken by
 * the upgrade; HTTP/2 in clear text with prior knowledge (node:http2's client) on the same port,
 * to an HTTP/1.1 pod and to a pod whose port is named `h2c` (spoken to over HTTP/2), through a
 * traffic split. And what is refused: an unknown host (404 before any upgrade), a pod that cannot
 * be reached (502 on the socket), a pod that answers the upgrade with something else (relayed).
 */
import { connect as netConnect } from 'node:net';
import { connect as h2Connect, type ClientHttp2Session } from 'node:http2';
import { request } from 'node:http';
import { AppsV1Api } from '@kubernetes/client-node';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveKubectl, type ServeProcess } from '../serve/process.js';
import { startServingServe, type ServingServe } from '../support/serving-serve.js';
import { until } from '../../testing/src/poll.js';

/**
 * A pod that speaks HTTP/1.1 and websockets: a plain request is answered with what it came as
 * (JSON), `/stream` in three chunks, `/echo` with its body; an upgrade to `/refuse` with a 403; any
 * other upgrade is accepted, its first message what the upgrade request carried, then each text
 * message echoed (frames of under 64 KiB: enough for a test).
 */
const wsPod = String.raw`
const http = require('node:http'), crypto = require('node:crypto');
const rev = process.env.K_REVISION;
const s = http.createServer((req, res) => {
  if (req.url === '/stream') {
    res.writeHead(200, { 'content-type': 'text/plain', 'x-rev': rev });
    let n = 0;
    const t = setInterval(() => { res.write('chunk' + n + '\n'); if (++n === 3) { clearInterval(t); res.end(); } }, 20);
    return;
  }
  let body = '';
  req.setEncoding('utf8').on('data', (d) => (body += d)).on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'x-rev': rev });
    res.end(JSON.stringify({ rev, httpVersion: req.httpVersion, host: req.headers.host, method: req.method, body }));
  });
});
const frame = (text) => { const p = Buffer.from(text); return Buffer.concat([Buffer.from(p.length < 126 ? [0x81, p.length] : [0x81, 126, p.length >> 8, p.length & 255]), p]); };
s.on('upgrade', (req, socket) => {
  if (req.url === '/refuse') return socket.end('HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nx-why: refused\r\ncontent-length: 7\r\n\r\nrefused');
  const accept = crypto.createHash('sha1').update(req.headers['sec-websocket-key'] + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
  socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ' + accept + '\r\n\r\n');
  socket.write(frame(JSON.stringify({ rev, host: req.headers.host, forwardedHost: req.headers['x-forwarded-host'], forwardedFor: req.headers['x-forwarded-for'], path: req.url })));
  let buf = Buffer.alloc(0);
  socket.on('error', () => socket.destroy());
  socket.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 2) {
      const op = buf[0] & 15;
      let len = buf[1] & 127, at = 2;
      if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); at = 4; }
      if (buf.length < at + 4 + len) return;
      const mask = buf.subarray(at, at + 4);
      const payload = Buffer.from(buf.subarray(at + 4, at + 4 + len)).map((b, i) => b ^ mask[i % 4]);
      buf = buf.subarray(at + 4 + len);
      if (op === 8) return void socket.end(Buffer.from([0x88, 0]));
      if (op === 1) socket.write(frame('echo:' + Buffer.from(payload).toString()));
    }
  });
});
s.listen(Number(process.env.PORT), process.env.FUNC_HOST);
`;

/** A pod that speaks only HTTP/2 in clear text: its answer says how it was asked; `/stream` comes in three chunks and ends with a trailer, as gRPC's do. */
const h2cPod = String.raw`
const http2 = require('node:http2');
const rev = process.env.K_REVISION;
const s = http2.createServer();
s.on('stream', (stream, headers) => {
  if (headers[':path'] === '/stream') {
    stream.respond({ ':status': 200, 'content-type': 'text/plain', 'x-rev': rev }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    let n = 0;
    const t = setInterval(() => { stream.write('chunk' + n + '\n'); if (++n === 3) { clearInterval(t); stream.end(); } }, 20);
    return;
  }
  let body = '';
  stream.setEncoding('utf8').on('data', (d) => (body += d)).on('end', () => {
    stream.respond({ ':status': 201, 'content-type': 'application/json', 'x-rev': rev });
    stream.end(JSON.stringify({ rev, protocol: 'h2', authority: headers[':authority'], method: headers[':method'], forwardedHost: headers['x-forwarded-host'], body }));
  });
});
s.listen(Number(process.env.PORT), process.env.FUNC_HOST);
`;

/** A pod that is ready (its probe's port answers) but not on its serving port: every connection to it is refused. */
const refusingPod = String.raw`require('node:net').createServer((s) => s.end()).listen(8081, process.env.FUNC_HOST);`;

interface Answer { status: number; headers: Record<string, unknown>; body: string; chunks: number; trailers?: Record<string, unknown> }

describe.runIf(haveKubectl)('the gateway\'s websockets and h2c on serve', () => {
  let s: ServeProcess;
  let gateway: URL;
  let apps: AppsV1Api;
  const sessions: ClientHttp2Session[] = [];

  let serve: ServingServe;
  const ok = (...args: string[]) => serve.ok(...args);
  const apply = (name: string, yaml: string) => serve.apply(name, yaml);
  const ksvc = (name: string, script: string, o: { env?: string; port?: string; probe?: string; annotations?: string; traffic?: string } = {}) => `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: ${name}
spec:
  template:
    metadata:
      annotations: {${o.annotations ?? ''}}
    spec:
      containers:
        - image: probe:v1
          command: ["node", "-e", ${JSON.stringify(script)}]
          env: [{ name: V, value: "${o.env ?? '1'}" }]
${o.port ? `          ports: [${o.port}]\n` : ''}${o.probe ? `          readinessProbe: ${o.probe}\n` : ''}${o.traffic ?? ''}`;

  /** A websocket through the gateway with `host` as its Host: its first message (what the pod saw), then `text` echoed back. */
  const websocket = (host: string, text: string, path = '/') => new Promise<{ first: any; echoed: string }>((resolve, reject) => {
    const ws = new WebSocket(`ws://${gateway.host}${path}`, { headers: { host } });
    const got: string[] = [];
    ws.on('message', (m) => {
      got.push(String(m));
      if (got.length === 1) ws.send(text);
      else ws.close();
    });
    ws.on('close', () => (got.length === 2 ? resolve({ first: JSON.parse(got[0]!), echoed: got[1]! }) : reject(new Error(`closed after ${got.length} messages`))));
    ws.on('error', reject);
  });
  /** A websocket handshake written by hand on a connection of its own: the answer's head and body as they came, until the gateway closes. */
  const rawUpgrade = (host: string, path = '/') => new Promise<string>((resolve, reject) => {
    const socket = netConnect(Number(gateway.port), gateway.hostname);
    let text = '';
    socket.setEncoding('utf8').on('data', (d: string) => (text += d)).on('close', () => resolve(text)).on('error', reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
  });
  /** An HTTP/2 request (prior knowledge, clear text) to the gateway on a session of its own. */
  const h2 = (authority: string, path = '/', body?: string, session?: ClientHttp2Session) => new Promise<Answer>((resolve, reject) => {
    const c = session ?? h2Connect(gateway.origin);
    if (!session) sessions.push(c);
    c.on('error', reject);
    const stream = c.request({ ':method': body === undefined ? 'GET' : 'POST', ':path': path, ':authority': authority, ...(body !== undefined && { 'content-type': 'text/plain' }) }, { endStream: body === undefined });
    let answer: Answer | undefined;
    stream.on('response', (headers) => (answer = { status: Number(headers[':status']), headers, body: '', chunks: 0 }));
    stream.on('trailers', (t) => answer && (answer.trailers = t));
    stream.setEncoding('utf8').on('data', (d: string) => answer && ((answer.body += d), answer.chunks++));
    stream.on('end', () => (answer ? resolve(answer) : reject(new Error('no response'))));
    stream.on('error', reject);
    if (body !== undefined) {
      // The body streamed, in two writes.
      stream.write(body.slice(0, 3));
      setImmediate(() => stream.end(body.slice(3)));
    }
  });
  /** An HTTP/1.1 request to the gateway. */
  const http1 = (host: string, path = '/') => new Promise<Answer>((resolve, reject) => {
    request({ host: gateway.hostname, port: gateway.port, path, headers: { host }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, chunks: 0 }));
    }).on('error', reject).end();
  });

  beforeAll(async () => {
    // The probe function's image gives the pods their filesystem; each container's command is its own program.
    serve = await startServingServe();
    ({ s, gateway } = serve);
    apps = serve.kc.makeApiClient(AppsV1Api);
    // Knative's shortest grace period before a revision goes to zero.
    await serve.knativeConfig('config-autoscaler', { 'scale-to-zero-grace-period': '6s' });
  }, 240_000);
  afterAll(async () => {
    for (const c of sessions) c.destroy();
    await s?.close();
  });

  it('passes a websocket to the Route\'s revision, its tag\'s host and a DomainMapping\'s, with the forwarded headers', async () => {
    await apply('ws', ksvc('ws', wsPod));
    await ok('wait', '--for=condition=Ready', 'ksvc/ws', '--timeout=180s');
    // A second revision, the first kept under a tag.
    await apply('ws', ksvc('ws', wsPod, { env: '2', traffic: `  traffic:
    - revisionName: ws-00001
      percent: 0
      tag: first
    - latestRevision: true
      percent: 100
` }));
    await until('ws-00002 ready and the tag routed', async () => {
      const rt = JSON.parse(await ok('get', 'routes.serving.knative.dev', 'ws', '-o', 'json'));
      return rt.status?.observedGeneration === rt.metadata.generation && rt.status?.traffic?.some((t: any) => t.tag === 'first' && t.url)
        && rt.status.traffic.some((t: any) => t.revisionName === 'ws-00002' && t.percent === 100);
    }, { timeoutMs: 120_000, everyMs: 200 });

    const main = await until('a websocket to ws-00002', async () => {
      const r = await websocket('ws.default.localhost', 'hi there', '/chat?room=1');
      return r.first.rev === 'ws-00002' && r;
    }, { timeoutMs: 30_000, everyMs: 100 });
    expect(main.echoed).toBe('echo:hi there');
    expect(main.first).toMatchObject({ host: 'ws.default.localhost', forwardedHost: 'ws.default.localhost', forwardedFor: '127.0.0.1', path: '/chat?room=1' });

    const tagged = await until('the tag\'s websocket', () => websocket('first-ws.default.localhost', 'x'.repeat(300)).catch(() => undefined), { timeoutMs: 30_000, everyMs: 100 });
    expect(tagged.first.rev).toBe('ws-00001');
    expect(tagged.echoed).toBe(`echo:${'x'.repeat(300)}`);

    await apply('dm', `apiVersion: serving.knative.dev/v1beta1
kind: DomainMapping
metadata:
  name: chat.example.org
spec:
  ref: { name: ws, kind: Service, apiVersion: serving.knative.dev/v1 }
`);
    await ok('wait', '--for=condition=Ready', 'domainmapping/chat.example.org', '--timeout=60s');
    const mapped = await until('the mapped domain\'s websocket', () => websocket('chat.example.org', 'mapped').catch(() => undefined), { timeoutMs: 30_000, everyMs: 100 });
    expect(mapped.first).toMatchObject({ rev: 'ws-00002', host: 'chat.example.org' });
    expect(mapped.echoed).toBe('echo:mapped');

    // Several at once, each its own connection through to the pod.
    const many = await Promise.all(Array.from({ length: 8 }, (_, i) => websocket('ws.default.localhost', `n${i}`)));
    expect(many.map((r) => r.echoed)).toEqual(Array.from({ length: 8 }, (_, i) => `echo:n${i}`));
  }, 300_000);

  it('answers an upgrade it cannot pass on on the socket: unknown host 404, a refused upgrade relayed, an unreachable pod 502', async () => {
    const unknown = await rawUpgrade('nothing.default.localhost');
    expect(unknown).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    expect(unknown).toContain('no Route answers for host "nothing.default.localhost"');
    expect(unknown).not.toMatch(/101|Upgrade: websocket/i);
    // No Host at all.
    const noHost = await new Promise<string>((resolve) => {
      const socket = netConnect(Number(gateway.port), gateway.hostname);
      let text = '';
      socket.setEncoding('utf8').on('data', (d: string) => (text += d)).on('close', () => resolve(text));
      socket.write('GET / HTTP/1.0\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
    });
    expect(noHost).toMatch(/^HTTP\/1\.1 404 /);

    // The pod answers the upgrade with a 403: the client gets it, headers and body, and the connection closes.
    const refused = await rawUpgrade('ws.default.localhost', '/refuse');
    expect(refused).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect(refused).toMatch(/\r\nx-why: refused\r\n/i);
    expect(refused).toMatch(/\r\nconnection: close\r\n/i);
    expect(refused.endsWith('\r\n\r\nrefused')).toBe(true);

    // A pod whose port refuses connections (ready by a probe on another port).
    await apply('refuse', ksvc('refuse', refusingPod, { probe: '{ tcpSocket: { port: 8081 }, periodSeconds: 1 }' }));
    await ok('wait', '--for=condition=Ready', 'ksvc/refuse', '--timeout=180s');
    const unreachable = await until('a 502 for the refusing pod', async () => {
      const r = await rawUpgrade('refuse.default.localhost');
      return !r.startsWith('HTTP/1.1 404') && r;
    }, { timeoutMs: 30_000, everyMs: 100 });
    expect(unreachable).toMatch(/^HTTP\/1\.1 502 Bad Gateway\r\n/);
    expect(unreachable).toContain('the revision could not be reached');
    expect(unreachable).not.toMatch(/ECONNREFUSED|127\.|Error/);
    // The ws client sees it as the server's answer.
    const seen = await new Promise<string>((resolve) => {
      const ws = new WebSocket(`ws://${gateway.host}/`, { headers: { host: 'refuse.default.localhost' } });
      ws.on('unexpected-response', (_req, res) => resolve(String(res.statusCode)));
      ws.on('error', (err) => resolve(err.message));
    });
    expect(seen).toBe('502');
  }, 300_000);

  it('wakes a revision at zero for a websocket, as for a request', async () => {
    await apply('sleepy', ksvc('sleepy', wsPod, { annotations: '"autoscaling.knative.dev/min-scale": "0", "autoscaling.knative.dev/window": "6s"' }));
    await ok('wait', '--for=condition=Ready', 'ksvc/sleepy', '--timeout=180s');
    const replicas = async () => (await apps.readNamespacedDeployment({ name: 'sleepy-00001-deployment', namespace: 'default' })).spec?.replicas;
    const pods = async () => JSON.parse(await ok('get', 'pods', '-l', 'serving.knative.dev/revision=sleepy-00001', '-o', 'json')).items.length;
    // Idle from the start: down to zero pods.
    await until('sleepy-00001 at 0 pods', async () => (await replicas()) === 0 && (await pods()) === 0, { timeoutMs: 120_000, everyMs: 250 });
    const r = await websocket('sleepy.default.localhost', 'awake?');
    expect(r.first.rev).toBe('sleepy-00001');
    expect(r.echoed).toBe('echo:awake?');
    expect(await replicas()).toBe(1);
  }, 300_000);

  it('takes HTTP/2 with prior knowledge on the same port, to an HTTP/1.1 pod: status, headers, a streamed body both ways', async () => {
    const session = h2Connect(gateway.origin);
    sessions.push(session);
    const plain = await h2('ws.default.localhost', '/', undefined, session);
    expect(plain.status).toBe(200);
    expect(plain.headers['x-rev']).toBe('ws-00002');
    expect(JSON.parse(plain.body)).toMatchObject({ rev: 'ws-00002', httpVersion: '1.1', host: 'ws.default.localhost', method: 'GET' });
    const streamed = await h2('ws.default.localhost', '/stream', undefined, session);
    expect(streamed.body).toBe('chunk0\nchunk1\nchunk2\n');
    const echoed = await h2('ws.default.localhost', '/echo', 'a body in parts', session);
    expect(JSON.parse(echoed.body)).toMatchObject({ method: 'POST', body: 'a body in parts' });
    // The tag's host, on the same session.
    expect((await h2('first-ws.default.localhost', '/', undefined, session)).headers['x-rev']).toBe('ws-00001');
    // An unknown host: 404 on the stream, the session goes on.
    const unknown = await h2('nothing.default.localhost', '/', undefined, session);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toBe('no Route answers for host "nothing.default.localhost"\n');
    expect((await h2('ws.default.localhost', '/', undefined, session)).status).toBe(200);
    // HTTP/1.1 goes on on the same port; a first line that starts as the preface and is not it is HTTP/1.1's to answer.
    expect((await http1('ws.default.localhost')).status).toBe(200);
    const notPreface = await new Promise<string>((resolve) => {
      const socket = netConnect(Number(gateway.port), gateway.hostname);
      let text = '';
      socket.setEncoding('utf8').on('data', (d: string) => (text += d)).on('close', () => resolve(text));
      socket.write('PRI * HTTP/1.1\r\nHost: ws.default.localhost\r\nConnection: close\r\n\r\n');
    });
    expect(notPreface).toMatch(/^HTTP\/1\.1 [45]\d\d /);
  }, 120_000);

  it('speaks h2c to a pod whose port is named h2c, through a 50/50 split; HTTP/1.1 clients too', async () => {
    const grpc = (env: string, traffic?: string) => ksvc('grpc', h2cPod, { env, port: '{ name: h2c, containerPort: 8080 }', traffic });
    await apply('grpc', grpc('1'));
    await ok('wait', '--for=condition=Ready', 'ksvc/grpc', '--timeout=180s');
    await apply('grpc', grpc('2', `  traffic:
    - revisionName: grpc-00001
      percent: 50
    - latestRevision: true
      percent: 50
`));
    await until('the 50/50 split', async () => {
      const rt = JSON.parse(await ok('get', 'routes.serving.knative.dev', 'grpc', '-o', 'json'));
      return rt.status?.observedGeneration === rt.metadata.generation && rt.status.traffic?.some((t: any) => t.revisionName === 'grpc-00002' && t.percent === 50);
    }, { timeoutMs: 120_000, everyMs: 200 });
    const session = h2Connect(gateway.origin);
    sessions.push(session);
    await until('grpc-00002 answering', async () => (await h2('grpc.default.localhost', '/', undefined, session)).headers['x-rev'] === 'grpc-00002', { timeoutMs: 30_000, everyMs: 100 });

    const first = await h2('grpc.default.localhost', '/', undefined, session);
    expect(first.status).toBe(201);
    expect(JSON.parse(first.body)).toMatchObject({ protocol: 'h2', authority: 'grpc.default.localhost', forwardedHost: 'grpc.default.localhost', method: 'GET' });
    // A streamed answer with its trailer (gRPC's status), and a body sent in parts.
    const streamed = await h2('grpc.default.localhost', '/stream', undefined, session);
    expect(streamed.body).toBe('chunk0\nchunk1\nchunk2\n');
    expect(streamed.trailers).toMatchObject({ 'grpc-status': '0' });
    expect(JSON.parse((await h2('grpc.default.localhost', '/echo', 'streamed up', session)).body)).toMatchObject({ method: 'POST', body: 'streamed up' });

    // The split, per request: 200 requests on one session, 50 at a time.
    const seen = new Map<string, number>();
    for (let round = 0; round < 4; round++) {
      const answers = await Promise.all(Array.from({ length: 50 }, () => h2('grpc.default.localhost', '/', undefined, session)));
      for (const a of answers) seen.set(String(a.headers['x-rev']), (seen.get(String(a.headers['x-rev'])) ?? 0) + 1);
    }
    expect([...seen.keys()].sort()).toEqual(['grpc-00001', 'grpc-00002']);
    // Far from 50/50 only by a chance under 1e-9.
    for (const n of seen.values()) expect(n).toBeGreaterThan(50);

    // An HTTP/1.1 client reaches the same h2c pod.
    const viaHttp1 = await http1('grpc.default.localhost');
    expect(viaHttp1.status).toBe(201);
    expect(JSON.parse(viaHttp1.body)).toMatchObject({ protocol: 'h2', authority: 'grpc.default.localhost' });
  }, 300_000);
});
