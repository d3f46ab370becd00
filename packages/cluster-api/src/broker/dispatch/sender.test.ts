/** One delivery attempt against a real HTTP server on 127.0.0.1: every row of the sender's answer table. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchange, send, type SendOptions } from './sender.js';

const event = { attributes: { specversion: '1.0', id: 'e1', source: '/t', type: 'test.sent', datacontenttype: 'application/json' }, data: Buffer.from('{"n":1}') };
const opts: SendOptions = { timeoutMs: 5_000, preferReply: true, maxReplyBytes: 1024, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };

let base = '';
const seen: { url?: string; headers: IncomingMessage['headers']; body: string }[] = [];
const routes: Record<string, (res: ServerResponse) => void> = {
  '/reply': (res) => res.writeHead(200, { 'ce-specversion': '1.0', 'ce-id': 'r1', 'ce-source': '/s', 'ce-type': 'test.reply', 'content-type': 'text/plain', traceparent: '00-1af7651916cd43dd8448eb211c80319c-c7ad6b7169203331-01' }).end('hi'),
  '/accepted': (res) => res.writeHead(202).end('ignored'),
  '/empty': (res) => res.writeHead(200).end(),
  '/not-an-event': (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('hello'),
  '/bad-reply': (res) => res.writeHead(200, { 'ce-specversion': '1.0', 'ce-id': 'r1' }).end(),
  '/huge': (res) => res.writeHead(200, { 'ce-specversion': '1.0', 'ce-id': 'r1', 'ce-source': '/s', 'ce-type': 't' }).end(Buffer.alloc(4096, 'x')),
  '/unavailable': (res) => res.writeHead(503, { 'content-type': 'text/plain' }).end('busy'),
  '/bad-request': (res) => res.writeHead(400, { 'content-type': 'text/plain' }).end('no'),
  '/twice': (res) => {
    res.setHeader('content-type', ['application/json', 'text/plain']);
    res.writeHead(200, { 'ce-specversion': '1.0', 'ce-id': 'r2', 'ce-source': '/s', 'ce-type': 'test.twice' }).end('{}');
  },
  '/silent': () => undefined,
  '/cookies': (res) => {
    res.setHeader('set-cookie', ['a=1', 'b=2']);
    res.setHeader('x-many', ['1', '2']);
    res.writeHead(201).end('made');
  },
};
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    seen.push({ url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() });
    (routes[req.url!.split('?')[0]!] ?? ((r: ServerResponse) => r.writeHead(404).end()))(res);
  });
});

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('send', () => {
  it('POSTs the event in binary mode with Prefer: reply and the trace context, and returns the reply event', async () => {
    const out = await send(`${base}/reply?x=1`, event, opts);
    expect(out).toEqual({ kind: 'reply', event: { attributes: { specversion: '1.0', id: 'r1', source: '/s', type: 'test.reply', datacontenttype: 'text/plain' }, data: Buffer.from('hi') }, traceparent: '00-1af7651916cd43dd8448eb211c80319c-c7ad6b7169203331-01' });
    const got = seen.at(-1)!;
    expect(got.url).toBe('/reply?x=1');
    expect(got.body).toBe('{"n":1}');
    expect(got.headers).toMatchObject({ 'ce-id': 'e1', 'ce-type': 'test.sent', 'content-type': 'application/json', 'content-length': '7', prefer: 'reply', traceparent: opts.traceparent });
  });

  it('a 202 (body ignored) and an empty 200 are done; without Prefer: reply a 200 event is done too', async () => {
    expect(await send(`${base}/accepted`, event, opts)).toEqual({ kind: 'done' });
    expect(await send(`${base}/empty`, event, opts)).toEqual({ kind: 'done' });
    expect(await send(`${base}/reply`, event, { ...opts, preferReply: false })).toEqual({ kind: 'done' });
    expect(seen.at(-1)!.headers.prefer).toBeUndefined();
  });

  it('an event without data is sent with an empty body', async () => {
    expect(await send(`${base}/accepted`, { attributes: { specversion: '1.0', id: 'e2', source: '/t', type: 'x' } }, opts)).toEqual({ kind: 'done' });
    expect(seen.at(-1)!).toMatchObject({ body: '', headers: { 'content-length': '0' } });
  });

  it('a repeated Content-Type in a reply counts once (the first), as node:http reads it', async () => {
    const out = await send(`${base}/twice`, event, opts);
    expect(out).toMatchObject({ kind: 'reply', event: { attributes: { id: 'r2', datacontenttype: 'application/json' } } });
  });

  it('retries a 200 that is not an event, a reply that is not a valid event, and one over the size limit', async () => {
    expect(await send(`${base}/not-an-event`, event, opts)).toMatchObject({ kind: 'retry', code: 502, why: 'the response is not empty and not a CloudEvent' });
    expect(await send(`${base}/bad-reply`, event, opts)).toMatchObject({ kind: 'retry', code: 502, why: expect.stringMatching(/^the reply is not a valid CloudEvent: /) });
    expect(await send(`${base}/huge`, event, opts)).toMatchObject({ kind: 'retry', code: 502, why: 'the response is larger than 1024 bytes' });
  });

  it('classifies error statuses with the body kept: 503 and 404 retry, 400 fails', async () => {
    expect(await send(`${base}/unavailable`, event, opts)).toEqual({ kind: 'retry', code: 503, body: Buffer.from('busy'), why: 'HTTP 503' });
    expect(await send(`${base}/nowhere`, event, opts)).toMatchObject({ kind: 'retry', code: 404 });
    expect(await send(`${base}/bad-request`, event, opts)).toEqual({ kind: 'fail', code: 400, body: Buffer.from('no'), why: 'HTTP 400' });
  });

  it('retries a subscriber that does not answer in time, and one that refuses the connection (named by its code)', async () => {
    expect(await send(`${base}/silent`, event, { ...opts, timeoutMs: 200 })).toMatchObject({ kind: 'retry', code: 500, why: 'no answer within 200 ms' });
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    expect(await send(`http://127.0.0.1:${port}/`, event, opts)).toEqual({ kind: 'retry', code: 500, body: Buffer.from('dispatch error: ECONNREFUSED'), why: 'ECONNREFUSED' });
  });

  it('answers many attempts in flight at once, each with its own outcome', async () => {
    const paths = Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? '/reply' : i % 3 === 1 ? '/accepted' : '/unavailable'));
    const outs = await Promise.all(paths.map((p) => send(`${base}${p}`, event, opts)));
    expect(outs.map((o) => o.kind)).toEqual(paths.map((p) => (p === '/reply' ? 'reply' : p === '/accepted' ? 'done' : 'retry')));
  });

  it('exchange: any method and headers (lists kept), and the status, headers and body of the answer', async () => {
    const answer = await exchange(new URL(`${base}/cookies?q=1`), 'PUT', { 'x-list': ['1', '2'], host: 'fn.example' }, Buffer.from('body'), 5_000, 1024);
    expect(answer).toMatchObject({ status: 201, body: Buffer.from('made'), headers: { 'set-cookie': ['a=1', 'b=2'], 'x-many': '1, 2' } });
    expect(seen.at(-1)).toMatchObject({ url: '/cookies?q=1', body: 'body', headers: { host: 'fn.example', 'x-list': '1, 2' } });
  });

  it('exchange: a request the client refuses to make (an Expect header) is an answer with the reason, not a throw', async () => {
    const answer = await exchange(new URL(`${base}/accepted`), 'POST', { expect: '100-continue' }, Buffer.from('x'), 5_000, 1024);
    expect(answer).toEqual({ error: expect.any(String) });
  });
});
