/**
 * Malformed and refused streaming requests, sent byte by byte over TLS: each is answered as
 * kube-apiserver and the kubelet answer it (a Status before any switch; GOAWAY or a close frame
 * after one) and the server stays up for the next client.
 */
import { connect, type TLSSocket } from 'node:tls';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GoAwayStatus, encodeFrame } from '../../src/streaming/spdy/frames.js';
import { SpdyTestClient } from '../../src/streaming/testing/spdy-client.js';
import { echo, listen, type Listening } from '../../src/streaming/testing/sockets.js';
import { namespace, TestToken } from '../support/helpers.js';
import { runningPod, startStreamingCluster, type StreamingCluster } from '../support/streaming-helpers.js';

const path = '/api/v1/namespaces/shop/pods/web/portforward';

interface Raw {
  socket: TLSSocket;
  status: number;
  headers: Record<string, string>;
  /** What came after the response head so far. */
  rest: Buffer;
  /** The whole body once the server closed the connection. */
  body(): Promise<string>;
}

/** Sends a request head by hand and reads the response head. */
async function raw(c: StreamingCluster, head: string, extra = ''): Promise<Raw> {
  const url = new URL(c.server.url);
  const socket = connect({ host: url.hostname, port: Number(url.port), ca: c.tls.ca });
  await new Promise((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
  socket.write(`${head.replace(/\n/g, '\r\n')}\r\n${extra}`);
  let buffered = Buffer.alloc(0);
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('data', (d: Buffer) => (buffered = Buffer.concat([buffered, d])));
  socket.on('error', () => undefined);
  while (buffered.indexOf('\r\n\r\n') < 0) {
    await Promise.race([new Promise((r) => socket.once('data', r)), ended]);
    if (socket.destroyed && buffered.indexOf('\r\n\r\n') < 0) throw new Error(`closed without a response: ${buffered.toString()}`);
  }
  const end = buffered.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = buffered.subarray(0, end).toString().split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  const rest = buffered.subarray(end + 4);
  return {
    socket,
    status: Number(statusLine!.split(' ')[1]),
    headers,
    rest,
    body: async () => (await ended, buffered.subarray(end + 4).toString()),
  };
}

const request = (method: string, target: string, headers: Record<string, string | undefined>) =>
  `${method} ${target} HTTP/1.1\nHost: 127.0.0.1\n${Object.entries(headers).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}: ${v}\n`).join('')}`;

const spdy = (extra: Record<string, string | undefined> = {}) =>
  request('POST', path, { Authorization: `Bearer ${TestToken}`, Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'portforward.k8s.io', 'Content-Length': '0', ...extra });

const websocket = (extra: Record<string, string | undefined> = {}) =>
  request('GET', path, {
    Authorization: `Bearer ${TestToken}`, Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13',
    'Sec-WebSocket-Key': randomBytes(16).toString('base64'), 'Sec-WebSocket-Protocol': 'SPDY/3.1+portforward.k8s.io', ...extra,
  });

describe('streaming requests that cannot be served', () => {
  let c: StreamingCluster;
  let pod: Listening;
  beforeAll(async () => {
    pod = await listen(echo);
    c = await startStreamingCluster(() => pod.port);
    expect((await c.api('POST', '/api/v1/namespaces', namespace('shop'))).status).toBe(201);
    await runningPod(c, 'shop', 'web', { containers: [{ name: 'app', image: 'func' }] });
  }, 60_000);
  afterAll(async () => {
    await c?.close();
    await pod?.close();
  });

  it.each([
    ['no token', spdy({ Authorization: undefined }), 401, /^Unauthorized$/],
    ['no upgrade at all', request('POST', path, { Authorization: `Bearer ${TestToken}`, 'Content-Length': '0', Connection: 'close' }), 400, /^Upgrade request required$/],
    ['an upgrade to neither SPDY nor WebSocket', spdy({ Upgrade: 'h2c' }), 400, /^unable to upgrade: missing upgrade headers in request$/],
    ['SPDY without a stream protocol', spdy({ 'X-Stream-Protocol-Version': undefined }), 400, /^unable to upgrade: X-Stream-Protocol-Version is required$/],
    ['SPDY in a protocol not served', spdy({ 'X-Stream-Protocol-Version': 'v4.channel.k8s.io, v5.portforward.k8s.io' }), 403,
      /^unable to upgrade: unable to negotiate protocol: client supports \[v4\.channel\.k8s\.io v5\.portforward\.k8s\.io\], server accepts \[portforward\.k8s\.io\]$/],
    ['a WebSocket in channels no kubelet speaks for port-forward', websocket({ 'Sec-WebSocket-Protocol': 'v5.channel.k8s.io' }), 403, /server accepts \[v4\.channel\.k8s\.io v4\.base64\.channel\.k8s\.io\]$/],
    ['a WebSocket tunnelling another protocol', websocket({ 'Sec-WebSocket-Protocol': 'SPDY/3.1+v2.portforward.k8s.io' }), 403, /unable to negotiate protocol/],
    ['a WebSocket of another version', websocket({ 'Sec-WebSocket-Version': '8' }), 400, /unsupported version/],
    ['a WebSocket with a malformed key', websocket({ 'Sec-WebSocket-Key': 'short' }), 400, /Sec-WebSocket-Key/],
    ['an upgrade carrying a body', spdy({ 'Content-Length': '4' }), 400, /cannot have a body/],
    ['a verb the subresource does not take', spdy().replace('POST', 'PUT'), 405, /^update is not supported on resources of kind "pods"$/],
  ])('answers %s with a Status and closes', async (_what, head, code, message) => {
    const r = await raw(c, head, head.includes('Content-Length: 4') ? 'body' : '');
    expect(r.status).toBe(code);
    const status = JSON.parse(await r.body());
    expect(status).toMatchObject({ kind: 'Status', code });
    expect(status.message).toMatch(message);
    if (code === 403) expect(r.headers['x-accepted-stream-protocol-versions']).toBe('portforward.k8s.io');
  });

  it('serves an upgrade request to a path that switches nothing as an ordinary request, then closes', async () => {
    const r = await raw(c, request('GET', '/api/v1/namespaces/shop', { Authorization: `Bearer ${TestToken}`, Connection: 'Upgrade', Upgrade: 'websocket' }));
    expect(r.status).toBe(200);
    expect(JSON.parse(await r.body())).toMatchObject({ kind: 'Namespace', metadata: { name: 'shop' } });
  });

  async function switched(): Promise<SpdyTestClient> {
    const r = await raw(c, spdy());
    expect([r.status, r.headers.upgrade, r.headers['x-stream-protocol-version']]).toEqual([101, 'SPDY/3.1', 'portforward.k8s.io']);
    const client = new SpdyTestClient(r.socket);
    if (r.rest.length) r.socket.unshift(r.rest);
    return client;
  }

  it('forwards over a hand-made SPDY client too, and ends a SPDY connection that sends garbage with GOAWAY', async () => {
    const client = await switched();
    const { data } = client.openPair(8080, 0);
    client.data(data, 'raw spdy', true);
    expect((await client.readStream(data)).toString()).toBe('raw spdy');
    client.write(Buffer.from('\xff\xff\xff\xff\x00\x00\x00\x00', 'latin1'));
    expect(await client.next((f) => f.type === 'goaway')).toMatchObject({ status: GoAwayStatus.ProtocolError });
    await client.closedWithin();
    expect((await c.api('GET', '/healthz')).status).toBe(200);
  });

  it('ends a SPDY connection whose header block inflates past the limit', async () => {
    const client = await switched();
    client.open({ streamtype: 'data', port: '8080', requestid: '1', padding: 'x'.repeat(200_000) });
    expect(await client.next((f) => f.type === 'goaway')).toMatchObject({ status: GoAwayStatus.ProtocolError });
    await client.closedWithin();
  });

  it('closes a WebSocket tunnel that sends a text message (binary only, as client-go reads it)', async () => {
    const r = await raw(c, websocket());
    expect([r.status, r.headers['sec-websocket-protocol']]).toEqual([101, 'SPDY/3.1+portforward.k8s.io']);
    const mask = randomBytes(4);
    const text = Buffer.from('hello');
    r.socket.write(Buffer.concat([Buffer.from([0x81, 0x80 | text.length]), mask, Buffer.from(text.map((b, i) => b ^ mask[i % 4]!))]));
    let received = r.rest;
    r.socket.on('data', (d: Buffer) => (received = Buffer.concat([received, d])));
    const deadline = Date.now() + 10_000;
    while (received.length < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    // A close frame (opcode 8) with code 1003, unsupported data.
    expect(received[0]! & 0x0f).toBe(8);
    expect(received.readUInt16BE(2)).toBe(1003);
    r.socket.destroy();
  });
});

describe('shutdown with port-forwards open', () => {
  it('ends them instead of waiting for them', async () => {
    const pod = await listen(echo);
    const c = await startStreamingCluster(() => pod.port);
    try {
      expect((await c.api('POST', '/api/v1/namespaces', namespace('shop'))).status).toBe(201);
      await runningPod(c, 'shop', 'web', { containers: [{ name: 'app', image: 'func' }] });
      const r = await raw(c, spdy());
      const client = new SpdyTestClient(r.socket);
      const { data } = client.openPair(8080, 0);
      client.data(data, 'open');
      await client.next((f) => f.type === 'data' && f.streamId === data);
      await c.close();
      await client.closedWithin();
      expect(await pod.open()).toBe(0);
    } finally {
      await pod.close();
    }
  }, 30_000);
});
