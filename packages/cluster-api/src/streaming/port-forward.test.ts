import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RstStatus, encodeFrame } from './spdy/frames.js';
import { servePortForward, type PortForwardOptions } from './port-forward.js';
import { SpdyTestClient } from './testing/spdy-client.js';
import { dial, echo, listen, sha256, type Listening } from './testing/sockets.js';
import { until } from '../../testing/src/poll.js';

describe('portforward.k8s.io over SPDY', () => {
  let pod: Listening;
  let apiserver: Listening | undefined;
  let client: SpdyTestClient | undefined;
  let dialled: number[] = [];
  afterEach(async () => {
    client?.close();
    await apiserver?.close();
    await pod?.close();
    apiserver = client = undefined;
    dialled = [];
  });

  /** A stand-in pod whose port 8080 is `onConnection`; any other port refuses the connection. */
  async function start(onConnection: (s: Socket) => void = echo, options: PortForwardOptions = {}): Promise<SpdyTestClient> {
    pod = await listen(onConnection);
    const target = { pod: 'web', uid: 'uid-1', dial: (port: number) => (dialled.push(port), dial(port === 8080 ? pod.port : 1)) };
    apiserver = await listen((socket) => void servePortForward(socket, target, options));
    client = new SpdyTestClient(await dial(apiserver.port));
    return client;
  }

  const replied = (c: SpdyTestClient, id: number) => c.next((f) => f.type === 'syn_reply' && f.streamId === id);

  it('joins a request’s data stream to the pod port once its error stream is there, both ways, with half-closes', async () => {
    const c = await start();
    const { error, data } = c.openPair(8080, 0);
    await replied(c, error);
    await replied(c, data);
    c.data(data, 'ping through the pod');
    c.data(data, '', true);
    expect((await c.readStream(data)).toString()).toBe('ping through the pod');
    // kubectl resets the data stream once the pod's side ended; the error stream then ends, empty.
    c.write(encodeFrame({ type: 'rst_stream', streamId: data, status: RstStatus.Cancel }));
    expect((await c.readStream(error)).toString()).toBe('');
    expect(dialled).toEqual([8080]);
    await until('pod connection closed', async () => (await pod.open()) === 0, { timeoutMs: 5000 });
  });

  it('carries many requests at once on one connection, each to its own pod connection', async () => {
    const c = await start();
    const pairs = Array.from({ length: 60 }, (_, i) => ({ i, ...c.openPair(8080, i) }));
    for (const { i, data } of pairs) c.data(data, `request ${i} `.repeat(500), true);
    for (const { i, data } of pairs) expect((await c.readStream(data, 10_000)).toString()).toBe(`request ${i} `.repeat(500));
    expect(dialled).toHaveLength(60);
  });

  it('moves megabytes both ways intact', async () => {
    const c = await start((socket) => {
      const chunks: Buffer[] = [];
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.on('end', () => socket.end(`${sha256(Buffer.concat(chunks))}\n`.padEnd(3 * 1024 * 1024, '.')));
    });
    const { data } = c.openPair(8080, 'big');
    const payload = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < payload.length; i += 4) payload.writeUInt32LE((i * 2654435761) >>> 0, i);
    for (let at = 0; at < payload.length; at += 32 * 1024) c.data(data, payload.subarray(at, at + 32 * 1024));
    c.data(data, '', true);
    const answer = await c.readStream(data, 20_000);
    expect(answer.length).toBe(3 * 1024 * 1024);
    expect(answer.subarray(0, 64).toString()).toBe(sha256(payload));
  });

  it('tells a refused dial on the error stream, as the kubelet words it, and ends both streams', async () => {
    const c = await start();
    const { error, data } = c.openPair(9999, 1);
    expect((await c.readStream(error)).toString()).toBe('error forwarding port 9999 to pod web, uid uid-1: connect: connection refused');
    expect((await c.readStream(data)).toString()).toBe('');
  });

  it.each([
    ['no port', { streamtype: 'data', requestid: '1' }],
    ['port 0', { streamtype: 'data', port: '0', requestid: '1' }],
    ['a port past 65535', { streamtype: 'data', port: '70000', requestid: '1' }],
    ['a port that is no number', { streamtype: 'data', port: 'http', requestid: '1' }],
    ['no stream type', { port: '8080', requestid: '1' }],
    ['an unknown stream type', { streamtype: 'resize', port: '8080', requestid: '1' }],
  ])('refuses a stream with %s (RST_STREAM) and keeps serving', async (_what, headers) => {
    const c = await start();
    const bad = c.open(headers);
    expect(await c.next((f) => f.type === 'rst_stream' && f.streamId === bad)).toMatchObject({ status: RstStatus.Cancel });
    const { data } = c.openPair(8080, 2);
    c.data(data, 'ok', true);
    expect((await c.readStream(data)).toString()).toBe('ok');
  });

  it('refuses a second stream of one type for a request still being paired, saying so on its error stream', async () => {
    const c = await start();
    const error = c.open({ streamtype: 'error', port: '8080', requestid: '5' });
    await replied(c, error);
    const again = c.open({ streamtype: 'error', port: '8080', requestid: '5' });
    await c.next((f) => f.type === 'rst_stream' && f.streamId === again);
    await c.next((f) => f.type === 'data' && f.streamId === error);
    const said = c.frames.filter((f) => f.type === 'data' && f.streamId === error).map((f) => (f as { data: Buffer }).data.toString()).join('');
    expect(said).toBe('error processing stream for request 5: error stream already assigned');
    // The request still completes with its data stream.
    const data = c.open({ streamtype: 'data', port: '8080', requestid: '5' });
    c.data(data, 'late but fine', true);
    expect((await c.readStream(data)).toString()).toBe('late but fine');
  });

  it('gives up on a request whose second stream never comes', async () => {
    const c = await start(echo, { streamCreationTimeoutMs: 200 });
    const error = c.open({ streamtype: 'error', port: '8080', requestid: '7' });
    expect((await c.readStream(error)).toString()).toBe('(request=7) timed out waiting for streams');
    expect(dialled).toEqual([]);
  });

  it('pairs the streams of a client that sends no requestid by their ids, as the kubelet does', async () => {
    const c = await start();
    const error = c.open({ streamtype: 'error', port: '8080' });
    const data = c.open({ streamtype: 'data', port: '8080' });
    expect(data).toBe(error + 2);
    c.data(data, 'old client', true);
    expect((await c.readStream(data)).toString()).toBe('old client');
  });

  it('closes the pod connections when the client connection goes', async () => {
    const c = await start();
    for (let i = 0; i < 5; i++) {
      const { data } = c.openPair(8080, i);
      c.data(data, 'open');
    }
    await until('five pod connections', async () => (await pod.open()) === 5, { timeoutMs: 5000 });
    c.close();
    await until('pod connections closed', async () => (await pod.open()) === 0, { timeoutMs: 5000 });
  });
});
