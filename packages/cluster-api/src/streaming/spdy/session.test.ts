import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SpdyTestClient } from '../testing/spdy-client.js';
import { dial, listen, sha256, type Listening } from '../testing/sockets.js';
import { GoAwayStatus, RstStatus, encodeFrame } from './frames.js';
import { SpdySession, type SessionOptions } from './session.js';
import type { SpdyStream } from './stream.js';
import { until } from '../../../testing/src/poll.js';

describe('SPDY session (server side)', () => {
  let server: Listening | undefined;
  let sessions: SpdySession[] = [];
  let clients: SpdyTestClient[] = [];
  afterEach(async () => {
    for (const c of clients) c.close();
    await server?.close();
    server = undefined;
    sessions = [];
    clients = [];
  });

  async function start(options: Partial<SessionOptions> & Pick<SessionOptions, 'onStream'>): Promise<SpdyTestClient> {
    server = await listen((socket) => sessions.push(new SpdySession(socket, options)));
    const client = new SpdyTestClient(await dial(server.port));
    clients.push(client);
    return client;
  }

  const echoStream = (stream: SpdyStream) => (stream.accept(), stream.pipe(stream));

  it('answers a stream with SYN_REPLY, echoes its data and half-closes after the client does', async () => {
    const client = await start({ onStream: echoStream });
    const id = client.open({ streamtype: 'data', port: '80' });
    const reply = await client.next((f) => f.type === 'syn_reply');
    expect(reply).toMatchObject({ type: 'syn_reply', streamId: id, headers: new Map() });
    client.data(id, 'hello ');
    client.data(id, 'world', true);
    expect((await client.readStream(id)).toString()).toBe('hello world');
    await until('stream forgotten', () => sessions[0]!.openStreams === 0, { timeoutMs: 5000 });
  });

  it('echoes the client’s PINGs and ignores replies to its own', async () => {
    const client = await start({ onStream: echoStream });
    const id = client.ping();
    expect(await client.next((f) => f.type === 'ping')).toEqual({ type: 'ping', id });
    client.write(encodeFrame({ type: 'ping', id: 2 }));
    const again = client.ping();
    await client.next((f) => f.type === 'ping' && f.id === again);
    expect(client.frames.filter((f) => f.type === 'ping').map((f) => (f as { id: number }).id)).toEqual([id, again]);
  });

  it('refuses stream ids a client may not use, streams it does not accept, and streams past the limit', async () => {
    const client = await start({ onStream: (s) => (s.header('port') === 'no' ? s.reject() : s.header('port') === 'undecided' ? undefined : s.accept()), maxStreams: 2 });
    const rst = (streamId: number) => client.next((f) => f.type === 'rst_stream' && f.streamId === streamId);
    const rejected = client.open({ port: 'no' });
    expect(await rst(rejected)).toMatchObject({ status: RstStatus.Cancel });
    const undecided = client.open({ port: 'undecided' });
    expect(await rst(undecided)).toMatchObject({ status: RstStatus.Cancel });
    const a = client.open({ port: '1' });
    const b = client.open({ port: '2' });
    const c = client.open({ port: '3' });
    expect(await rst(c)).toMatchObject({ status: RstStatus.RefusedStream });
    await client.next((f) => f.type === 'syn_reply' && f.streamId === b);
    expect(client.frames.some((f) => f.type === 'syn_reply' && f.streamId === a)).toBe(true);
  });

  it('resets a stream whose id is even or goes backwards, and keeps serving', async () => {
    const client = await start({ onStream: echoStream });
    const first = client.open({ port: '1' });
    await client.next((f) => f.type === 'syn_reply' && f.streamId === first);
    // Hand-made SYN_STREAMs with the client's own compression context.
    (client as unknown as { nextStream: number }).nextStream = 2;
    const even = client.open({ port: '2' });
    expect(await client.next((f) => f.type === 'rst_stream' && f.streamId === even)).toMatchObject({ status: RstStatus.ProtocolError });
    (client as unknown as { nextStream: number }).nextStream = 1;
    const backwards = client.open({ port: '3' });
    expect(await client.next((f) => f.type === 'rst_stream' && f.streamId === backwards, 5000, 2)).toMatchObject({ status: RstStatus.ProtocolError });
    (client as unknown as { nextStream: number }).nextStream = 9;
    const fine = client.open({ port: '4' });
    await client.next((f) => f.type === 'syn_reply' && f.streamId === fine);
  });

  it('drops a stream the client resets, in both directions', async () => {
    let stream: SpdyStream | undefined;
    const client = await start({ onStream: (s) => ((stream = s), s.accept()) });
    const id = client.open({ port: '1' });
    await client.next((f) => f.type === 'syn_reply');
    client.write(encodeFrame({ type: 'rst_stream', streamId: id, status: RstStatus.Cancel }));
    await until('stream destroyed', () => stream!.destroyed, { timeoutMs: 5000 });
    expect(stream!.resetByPeer).toBe(true);
    expect(sessions[0]!.openStreams).toBe(0);
  });

  it('closes the connection after GOAWAY once no stream is left', async () => {
    const client = await start({ onStream: echoStream });
    const id = client.open({ port: '1' });
    await client.next((f) => f.type === 'syn_reply');
    client.write(encodeFrame({ type: 'goaway', lastGoodStreamId: 0, status: 0 }));
    const late = client.open({ port: '2' });
    expect(await client.next((f) => f.type === 'rst_stream' && f.streamId === late)).toMatchObject({ status: RstStatus.RefusedStream });
    expect(client.closed).toBe(false);
    client.data(id, 'bye', true);
    expect((await client.readStream(id)).toString()).toBe('bye');
    await client.closedWithin();
  });

  it.each([
    ['a control frame of another version', () => Buffer.from('GET / HTTP/1.1\r\n'.replace('G', '\xc7'), 'latin1')],
    ['a header block that does not decompress', () => encodeFrame({ type: 'syn_stream', streamId: 1, associatedId: 0, priority: 0, slot: 0, flags: 0, headerBlock: Buffer.from('nonsense') })],
    ['an oversized control frame', () => encodeFrame({ type: 'headers', streamId: 1, flags: 0, headerBlock: Buffer.alloc(70_000) })],
  ])('answers %s with GOAWAY (PROTOCOL_ERROR) and closes', async (_what, bytes) => {
    const client = await start({ onStream: echoStream });
    client.write(bytes());
    expect(await client.next((f) => f.type === 'goaway')).toMatchObject({ status: GoAwayStatus.ProtocolError });
    await client.closedWithin();
  });

  it('resets DATA for a stream never opened (INVALID_STREAM) and goes on', async () => {
    const client = await start({ onStream: echoStream });
    client.data(41, 'who?');
    client.data(41, 'still me');
    expect(await client.next((f) => f.type === 'rst_stream' && f.streamId === 41)).toMatchObject({ status: RstStatus.InvalidStream });
    const id = client.open({ port: '1' });
    client.data(id, 'fine', true);
    expect((await client.readStream(id)).toString()).toBe('fine');
    expect(client.frames.filter((f) => f.type === 'rst_stream')).toHaveLength(1);
  });

  it('stops reading the connection while a stream’s reader is full, and loses nothing once it reads', async () => {
    let stream: SpdyStream | undefined;
    let socket: Socket | undefined;
    server = await listen((s) => ((socket = s), sessions.push(new SpdySession(s, { onStream: (st) => ((stream = st), st.accept()) }))));
    const client = new SpdyTestClient(await dial(server.port));
    clients.push(client);
    const id = client.open({ port: '1' });
    await client.next((f) => f.type === 'syn_reply');
    const payload = Buffer.alloc(8 * 1024 * 1024);
    for (let i = 0; i < payload.length; i += 4) payload.writeUInt32LE(i, i);
    for (let at = 0; at < payload.length; at += 32 * 1024) client.data(id, payload.subarray(at, at + 32 * 1024), at + 32 * 1024 >= payload.length);
    await until('connection paused', () => socket!.isPaused(), { timeoutMs: 5000 });
    const readSoFar = socket!.bytesRead;
    await new Promise((r) => setTimeout(r, 200));
    // Paused: only what was in flight when the reader filled up has been read off the socket.
    expect(socket!.bytesRead).toBe(readSoFar);
    expect(socket!.bytesRead).toBeLessThan(1024 * 1024);
    const chunks: Buffer[] = [];
    stream!.on('data', (c: Buffer) => chunks.push(c));
    await new Promise((resolve) => stream!.once('end', resolve));
    expect(sha256(Buffer.concat(chunks))).toBe(sha256(payload));
  });

  it('cuts large writes into frames of at most 32 KiB', async () => {
    const client = await start({ onStream: (s) => (s.accept(), s.end(Buffer.alloc(100_000, 1))) });
    const id = client.open({ port: '1' });
    const body = await client.readStream(id);
    expect(body.length).toBe(100_000);
    const sizes = client.frames.filter((f) => f.type === 'data').map((f) => (f as { data: Buffer }).data.length);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(32 * 1024);
  });

  it('closes an idle connection with GOAWAY; frames keep it open', async () => {
    const client = await start({ onStream: echoStream, idleTimeoutMs: 300 });
    for (let i = 0; i < 6; i++) {
      const id = client.ping();
      await client.next((f) => f.type === 'ping' && f.id === id);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(client.closed).toBe(false);
    expect(await client.next((f) => f.type === 'goaway', 5000)).toMatchObject({ status: GoAwayStatus.Ok });
    await client.closedWithin();
  });

  it('destroys its streams when the connection goes', async () => {
    let stream: SpdyStream | undefined;
    const client = await start({ onStream: (s) => ((stream = s), s.accept()) });
    client.open({ port: '1' });
    await client.next((f) => f.type === 'syn_reply');
    client.close();
    await until('stream destroyed', () => stream!.destroyed, { timeoutMs: 5000 });
    await sessions[0]!.done;
  });
});
