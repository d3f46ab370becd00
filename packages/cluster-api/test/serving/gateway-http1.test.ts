/**
 * The gateway's HTTP/1.1 forwarding path (http1-forward.ts) against a real API server (only the
 * CRDs' controller: the test writes the Routes, Revisions and Endpoints as the serving and
 * endpoints controllers would), with raw `net` clients writing exact bytes: pipelining, streamed
 * bodies both ways, framing (HEAD, 204, 304, chunked, close-delimited), the pod or the client going
 * away, `Connection: close`, what is handed to node:http (and answered as node:http answers it), and
 * what a pod may answer that cannot be passed on (502).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
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

/** A connection to the gateway: what it wrote so far, and whether it closed. */
interface Client { socket: Socket; text: () => string; closed: () => boolean }

describe('the gateway\'s HTTP/1.1 forwarding path', () => {
  let api: Awaited<ReturnType<typeof startServer>>;
  let kube: KubeClient;
  let gateway: Gateway;
  const servers: (Server | NetServer)[] = [];
  const clients: Socket[] = [];
  const podSockets = new Set<Socket>();
  /** What the node:http pod saw, by path. */
  const seen = new Map<string, { req: IncomingMessage; body: string; closed: boolean; remotePort?: number }>();
  /** Responses the node:http pod holds until the test lets them go. */
  const held = new Map<string, ServerResponse>();
  /** The raw pod's answer, by the request's path: bytes to write, then close or not. */
  const scripts = new Map<string, { bytes: string; close?: boolean }>();

  /** A Route whose host sends everything to revision `name`, that revision, and its Endpoints listing a pod at `port` ready. */
  const revision = async (name: string, port: number, timeoutSeconds = 30) => {
    await kube.create(RevisionType, { apiVersion: 'serving.knative.dev/v1', kind: 'Revision', metadata: { name, namespace: 'default' }, spec: { timeoutSeconds, containers: [{ image: 'pod:v1', ports: [{ containerPort: 8080 }] }] } });
    const route = await kube.create(RouteType, { apiVersion: 'serving.knative.dev/v1', kind: 'Route', metadata: { name, namespace: 'default' }, spec: { traffic: [{ revisionName: name, percent: 100 }] } });
    await kube.update(RouteType, { ...route, status: { url: `http://${name}.default.example.com`, traffic: [{ revisionName: name, percent: 100 }] } }, { subresource: 'status' });
    await kube.create(Resources.endpoints, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace: 'default' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port }] }] });
  };

  const listen = async (s: Server | NetServer): Promise<number> => {
    servers.push(s);
    s.on('connection', (c: Socket) => podSockets.add(c.once('close', () => podSockets.delete(c))));
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return (s.address() as AddressInfo).port;
  };

  const open = (): Client => {
    const url = new URL(gateway.url);
    const socket = connect(Number(url.port), url.hostname);
    clients.push(socket);
    let text = '';
    let closed = false;
    socket.setEncoding('latin1').on('data', (d: string) => (text += d)).on('close', () => (closed = true)).on('error', () => undefined);
    return { socket, text: () => text, closed: () => closed };
  };

  /** Sends `bytes` on a new connection and waits for the gateway to close it; everything it answered. */
  const exchange = async (bytes: string): Promise<string> => {
    const c = open();
    c.socket.write(bytes, 'latin1');
    await until('the gateway closes the connection', () => c.closed());
    return c.text();
  };

  const plain = 'plain.default.example.com';
  const raw = 'raw.default.example.com';

  beforeAll(async () => {
    api = await startServer({ storage: new MemoryStorage(), controllers: ['crd-controller'], log: () => undefined, authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])) });
    await installBuiltinCrds(api.registry, { eventing: false });
    kube = new KubeClient({ server: api.url, credentials: { token: TestToken }, namespace: 'default', context: 't', files: [], insecureSkipTlsVerify: false });
    await until('the serving kinds are served', () => kube.list(RevisionType, { namespace: 'default' }).then(() => true, () => false));
    gateway = await startGateway({ kube, host: '127.0.0.1', port: 0 });

    // A node:http pod: records each request, answers by path.
    const httpPod = createServer((req, res) => {
      const path = req.url ?? '/';
      const record = { req, body: '', closed: false, remotePort: req.socket.remotePort };
      seen.set(path, record);
      res.on('close', () => (record.closed = true));
      req.setEncoding('latin1').on('data', (d: string) => (record.body += d));
      if (path === '/204') return void res.writeHead(204).end();
      if (path === '/304') return void res.writeHead(304, { etag: '"x"' }).end();
      if (path.startsWith('/hold')) return void held.set(path, res.writeHead(200, { 'content-type': 'text/plain' }));
      req.on('end', () => {
        const body = JSON.stringify({ path, method: req.method, body: record.body, headers: req.headers });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'x-pod-hop', 'x-pod-hop': '1', 'keep-alive': 'timeout=5' }).end(body);
      });
    });
    await revision('plain', await listen(httpPod));

    // A raw pod: reads a request head and writes what the script for its path says.
    const rawPod = createNetServer((s) => {
      let buf = '';
      s.setEncoding('latin1').on('error', () => undefined).on('data', (d: string) => {
        buf += d;
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const path = buf.split(' ')[1]!;
        buf = buf.slice(end + 4);
        const script = scripts.get(path) ?? { bytes: 'HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n' };
        s.write(script.bytes, 'latin1');
        if (script.close) s.end();
      });
    });
    await revision('raw', await listen(rawPod));
    await until('the gateway routes both hosts', async () => {
      const [a, b] = await Promise.all([exchange(`GET /ready HTTP/1.1\r\nHost: ${plain}\r\nConnection: close\r\n\r\n`), exchange(`GET /ready HTTP/1.1\r\nHost: ${raw}\r\nConnection: close\r\n\r\n`)]);
      return a.startsWith('HTTP/1.1 200') && b.startsWith('HTTP/1.1 404 Not Found');
    });
  });

  afterAll(async () => {
    for (const c of clients) c.destroy();
    for (const r of held.values()) r.destroy();
    await gateway?.stop();
    for (const s of podSockets) s.destroy();
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    await api?.close();
  });

  /** The JSON bodies of the answers in `text`, in order. */
  const bodies = (text: string) => [...text.matchAll(/\r\n\r\n(\{.*?\})(?=HTTP\/1\.1|$)/gs)].map((m) => JSON.parse(m[1]!));

  it('answers pipelined requests on one connection in order; the pod gets Host and X-Forwarded-*, not this hop\'s headers', async () => {
    const c = open();
    c.socket.write([1, 2, 3].map((n) => `GET /p${n} HTTP/1.1\r\nHost: ${plain}\r\nConnection: keep-alive, x-hop\r\nX-Hop: 1\r\nX-Forwarded-For: 10.1.2.3\r\nX-End: ${n}\r\n\r\n`).join(''));
    await until('three answers', () => bodies(c.text()).length === 3);
    const answers = bodies(c.text());
    expect(answers.map((a) => a.path)).toEqual(['/p1', '/p2', '/p3']);
    expect(answers[0].headers).toMatchObject({ host: plain, 'x-forwarded-for': '10.1.2.3, 127.0.0.1', 'x-forwarded-host': plain, 'x-forwarded-proto': 'http', 'x-end': '1' });
    expect(answers[0].headers['x-hop']).toBeUndefined();
    // The pod's own hop headers do not reach the client.
    expect(c.text()).not.toMatch(/x-pod-hop|keep-alive/i);
    expect(c.closed()).toBe(false);
  });

  it('reuses its connection to the pod for the next request', async () => {
    await exchange(`GET /reuse1 HTTP/1.1\r\nHost: ${plain}\r\nConnection: close\r\n\r\n`);
    await exchange(`GET /reuse2 HTTP/1.1\r\nHost: ${plain}\r\nConnection: close\r\n\r\n`);
    expect(seen.get('/reuse2')!.remotePort).toBe(seen.get('/reuse1')!.remotePort);
  });

  it('streams a request body to the pod as it comes', async () => {
    const c = open();
    c.socket.write(`POST /slow HTTP/1.1\r\nHost: ${plain}\r\nContent-Length: 10\r\n\r\nhello`);
    await until('the pod has the first half', () => seen.get('/slow')?.body === 'hello');
    c.socket.write('world');
    await until('the answer', () => bodies(c.text()).length === 1);
    expect(bodies(c.text())[0]).toMatchObject({ method: 'POST', body: 'helloworld' });
  });

  it('streams a chunked answer to the client as the pod writes it', async () => {
    const c = open();
    c.socket.write(`GET /hold-chunks HTTP/1.1\r\nHost: ${plain}\r\n\r\n`);
    await until('the pod has the request', () => held.get('/hold-chunks'));
    const res = held.get('/hold-chunks')!;
    res.write('first;');
    await until('the first chunk reached the client', () => c.text().includes('first;'));
    expect(c.text()).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*transfer-encoding: chunked\r\n/i);
    res.end('second');
    await until('the last chunk', () => c.text().endsWith('0\r\n\r\n'));
    // The connection goes on: the next request is answered.
    c.socket.write(`GET /after-chunks HTTP/1.1\r\nHost: ${plain}\r\n\r\n`);
    await until('the next answer', () => bodies(c.text()).length === 1);
  });

  it('sends no body after HEAD, 204 or 304, and the next answer on the connection is read right', async () => {
    const c = open();
    c.socket.write(`HEAD /head HTTP/1.1\r\nHost: ${plain}\r\n\r\nGET /204 HTTP/1.1\r\nHost: ${plain}\r\n\r\nGET /304 HTTP/1.1\r\nHost: ${plain}\r\n\r\nGET /last HTTP/1.1\r\nHost: ${plain}\r\n\r\n`);
    await until('the last answer', () => bodies(c.text()).some((b) => b.path === '/last'));
    const heads = c.text().split(/(?=HTTP\/1\.1 )/);
    expect(heads.map((h) => h.slice(0, 12))).toEqual(['HTTP/1.1 200', 'HTTP/1.1 204', 'HTTP/1.1 304', 'HTTP/1.1 200']);
    expect(heads[0]).toMatch(/content-length: \d+\r\n[^]*\r\n\r\n$/i);
    expect(heads[1]).toMatch(/\r\n\r\n$/);
    expect(heads[2]).toMatch(/\r\n\r\n$/);
  });

  it('passes an answer that ends when the pod closes, and closes the client\'s connection after it', async () => {
    scripts.set('/until-close', { bytes: 'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nall of it', close: true });
    const text = await exchange(`GET /until-close HTTP/1.1\r\nHost: ${raw}\r\n\r\n`);
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\ncontent-type: text\/plain\r\nconnection: close\r\n\r\nall of it$/);
  });

  it('closes the client\'s connection when the pod closes in the middle of an answer', async () => {
    scripts.set('/cut', { bytes: 'HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc', close: true });
    const text = await exchange(`GET /cut HTTP/1.1\r\nHost: ${raw}\r\n\r\n`);
    expect(text).toBe('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc');
  });

  it('does not reuse a pod connection the pod said it closes; the client\'s stays open', async () => {
    scripts.set('/pod-closes', { bytes: 'HTTP/1.1 200 OK\r\ncontent-length: 3\r\nconnection: close\r\n\r\none', close: true });
    scripts.set('/after-pod-closed', { bytes: 'HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\ntwo' });
    const c = open();
    c.socket.write(`GET /pod-closes HTTP/1.1\r\nHost: ${raw}\r\n\r\nGET /after-pod-closed HTTP/1.1\r\nHost: ${raw}\r\n\r\n`);
    await until('both answers', () => c.text().endsWith('two'));
    expect(c.text()).toBe('HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\noneHTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\ntwo');
    expect(c.closed()).toBe(false);
  });

  it('passes a 1xx answer and then the final one', async () => {
    scripts.set('/hints', { bytes: 'HTTP/1.1 103 Early Hints\r\nlink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok' });
    const c = open();
    c.socket.write(`GET /hints HTTP/1.1\r\nHost: ${raw}\r\n\r\n`);
    await until('the final answer', () => c.text().endsWith('ok'));
    expect(c.text()).toBe('HTTP/1.1 103 Early Hints\r\nlink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
  });

  it('ends the pod\'s request when the client goes away in the middle of the answer', async () => {
    const c = open();
    c.socket.write(`GET /hold-gone HTTP/1.1\r\nHost: ${plain}\r\n\r\n`);
    await until('the pod has the request', () => held.get('/hold-gone'));
    held.get('/hold-gone')!.write('part');
    await until('the client has a part', () => c.text().includes('part'));
    c.socket.destroy();
    await until('the pod\'s request is closed', () => seen.get('/hold-gone')!.closed);
  });

  it('answers with connection: close and closes when the client asks', async () => {
    const text = await exchange(`GET /bye HTTP/1.1\r\nHost: ${plain}\r\nConnection: close\r\n\r\n`);
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*connection: close\r\n\r\n\{/i);
    expect(bodies(text)).toHaveLength(1);
  });

  it.each([
    ['a bad status line', 'HTTP/1.1 OK\r\ncontent-length: 0\r\n\r\n'],
    ['Content-Length with chunked', 'HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n'],
    ['a head over 16 KiB', `HTTP/1.1 200 OK\r\nx-big: ${'y'.repeat(17 * 1024)}\r\ncontent-length: 0\r\n\r\n`],
    ['a 101 to a request that asked no upgrade', 'HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n'],
    ['broken chunks', 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n'],
  ])('answers 502 for a pod answer with %s', async (_what, bytes) => {
    const path = `/bad-${scripts.size}`;
    scripts.set(path, { bytes });
    const c = open();
    c.socket.write(`GET ${path} HTTP/1.1\r\nHost: ${raw}\r\n\r\n`);
    await until('an answer', () => c.text().endsWith('the revision could not be reached\n'));
    expect(c.text()).toMatch(/^HTTP\/1\.1 502 Bad Gateway\r\n/);
  });

  describe('hands to node:http what it does not take, answered as node:http answers', () => {
    it('a request with Content-Length and Transfer-Encoding: 400', async () => {
      expect(await exchange(`POST /x HTTP/1.1\r\nHost: ${plain}\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`)).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    });

    it('a request head over 16 KiB: 431', async () => {
      expect(await exchange(`GET / HTTP/1.1\r\nHost: ${plain}\r\nX-Big: ${'y'.repeat(17 * 1024)}\r\n\r\n`)).toMatch(/^HTTP\/1\.1 431 /);
    });

    it('a header line with a space before its colon: 400', async () => {
      expect(await exchange(`GET / HTTP/1.1\r\nHost: ${plain}\r\nX-A : b\r\n\r\n`)).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    });

    it('a request without Host: 400', async () => {
      expect(await exchange('GET / HTTP/1.1\r\nX: y\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    });

    it('a host no Route answers on: 404', async () => {
      const text = await exchange('GET / HTTP/1.1\r\nHost: nobody.default.example.com\r\nConnection: close\r\n\r\n');
      expect(text).toMatch(/^HTTP\/1\.1 404 Not Found[^]*no Route answers for host "nobody.default.example.com"\n$/);
    });

    it('a chunked request body, an HTTP/1.0 request and Expect: 100-continue, each forwarded by node:http after requests the fast path answered', async () => {
      const c = open();
      c.socket.write(`GET /before HTTP/1.1\r\nHost: ${plain}\r\n\r\nPOST /chunked HTTP/1.1\r\nHost: ${plain}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`);
      await until('both answers', () => bodies(c.text()).length === 2);
      expect(bodies(c.text()).map((b) => [b.path, b.body])).toEqual([['/before', ''], ['/chunked', 'hello']]);
      const old = await exchange(`GET /old HTTP/1.0\r\nHost: ${plain}\r\n\r\n`);
      expect(bodies(old)[0]).toMatchObject({ path: '/old' });
      const e = open();
      e.socket.write(`POST /expect HTTP/1.1\r\nHost: ${plain}\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n`);
      await until('100 Continue', () => e.text().startsWith('HTTP/1.1 100 Continue'));
      e.socket.write('ok');
      await until('the answer', () => bodies(e.text().replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '')).length === 1);
      expect(seen.get('/expect')!.body).toBe('ok');
    });
  });

  it('answers 503 at the end of the hold while a large body waits, reads the rest of it, and goes on with the next request', async () => {
    await kube.create(RevisionType, { apiVersion: 'serving.knative.dev/v1', kind: 'Revision', metadata: { name: 'empty', namespace: 'default' }, spec: { timeoutSeconds: 1, containers: [{ image: 'pod:v1' }] } });
    const route = await kube.create(RouteType, { apiVersion: 'serving.knative.dev/v1', kind: 'Route', metadata: { name: 'empty', namespace: 'default' }, spec: { traffic: [{ revisionName: 'empty', percent: 100 }] } });
    await kube.update(RouteType, { ...route, status: { url: 'http://empty.default.example.com', traffic: [{ revisionName: 'empty', percent: 100 }] } }, { subresource: 'status' });
    await until('the gateway routes it', async () => !(await exchange('GET / HTTP/1.1\r\nHost: empty.default.example.com\r\nConnection: close\r\n\r\n')).startsWith('HTTP/1.1 404'), { timeoutMs: 30_000 });
    const c = open();
    const size = 512 * 1024;
    c.socket.write(`POST /big HTTP/1.1\r\nHost: empty.default.example.com\r\nContent-Length: ${size}\r\n\r\n`);
    c.socket.write(Buffer.alloc(size, 'a'));
    c.socket.write(`GET /next HTTP/1.1\r\nHost: ${plain}\r\n\r\n`);
    await until('both answers', () => bodies(c.text()).length === 1, { timeoutMs: 30_000 });
    expect(c.text()).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n[^]*\r\n\r\nno ready endpoint for revision "empty"\nHTTP\/1\.1 200 OK/);
  });

  it('cuts a connection whose request head trickles in past the headers deadline, never a request whose head came', async () => {
    const strict = await startGateway({ kube, host: '127.0.0.1', port: 0, headersTimeoutMs: 300 });
    try {
      const url = new URL(strict.url);
      await until('the second gateway routes', async () => {
        const c = connect(Number(url.port), url.hostname);
        let text = '';
        c.setEncoding('latin1').on('data', (d: string) => (text += d)).on('error', () => undefined);
        c.write(`GET /strict HTTP/1.1\r\nHost: ${plain}\r\nConnection: close\r\n\r\n`);
        await new Promise((r) => c.once('close', r));
        return text.startsWith('HTTP/1.1 200');
      });
      const slow = connect(Number(url.port), url.hostname);
      clients.push(slow);
      let text = '';
      let closed = false;
      slow.setEncoding('latin1').on('data', (d: string) => (text += d)).on('close', () => (closed = true)).on('error', () => undefined);
      // A first request answered, then a head that never ends.
      slow.write(`GET /hold-long HTTP/1.1\r\nHost: ${plain}\r\n\r\n`);
      await until('the pod has the request', () => held.get('/hold-long'));
      let dripped = 0;
      const drip = setInterval(() => slow.writable && slow.write('X-A: b\r\n') && dripped++, 50);
      try {
        // The request in flight is not cut while the next head trickles in past the deadline (12 × 50 ms > 300 ms): its answer comes.
        await until('the drip ran past the deadline', () => dripped >= 12);
        expect(closed).toBe(false);
        held.get('/hold-long')!.end('done');
        await until('the answer', () => text.includes('done'));
        await until('the trickling head is cut', () => closed);
      } finally {
        clearInterval(drip);
      }
      expect(text).toMatch(/^HTTP\/1\.1 200 OK/);
      expect(text).not.toContain('X-A');
    } finally {
      await strict.stop();
    }
  });

  it('answers 502 when the pod cannot be reached, and 504 at the revision\'s timeout', async () => {
    const closed = createNetServer();
    const port = await listen(closed);
    await new Promise((r) => closed.close(r));
    servers.splice(servers.indexOf(closed), 1);
    await revision('gone', port);
    // It reads (and drops) what comes, so it sees the gateway close.
    const silent = createNetServer((s) => s.on('error', () => undefined).resume());
    await revision('silent', await listen(silent), 1);
    await until('the gateway routes them', async () => !(await exchange('GET / HTTP/1.1\r\nHost: gone.default.example.com\r\nConnection: close\r\n\r\n')).startsWith('HTTP/1.1 404'));
    expect(await exchange('GET / HTTP/1.1\r\nHost: gone.default.example.com\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 502 Bad Gateway[^]*\r\n\r\nthe revision could not be reached\n$/);
    const c = open();
    c.socket.write('POST / HTTP/1.1\r\nHost: silent.default.example.com\r\nContent-Length: 2\r\n\r\nhi');
    await until('504', () => c.text().endsWith('request timeout\n'), { timeoutMs: 30_000 });
    expect(c.text()).toMatch(/^HTTP\/1\.1 504 Gateway Timeout\r\n/);
  });
});
