/**
 * The examples, served by the real runtime: each module through start() over 127.0.0.1, and each
 * directory through the func-runtime command as a user runs it (`func-runtime examples/<name>`).
 */
import { execFileSync } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CloudEvent, HTTP } from 'cloudevents';
import { createServer, start, stop } from '@func/runtime';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as transformer from '../examples/event-transformer/index.js';
import * as jsonApi from '../examples/json-api/index.js';
import * as lifecycle from '../examples/lifecycle/index.js';
import * as webhook from '../examples/webhook/index.js';
import { repoRoot } from './support/packages.js';
import { freePort, launch, waitForOk } from './support/process.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

async function serve(fn: Parameters<typeof start>[0], options: Parameters<typeof start>[1] = {}): Promise<string> {
  const server = await start(fn, { port: 0, host: '127.0.0.1', logLevel: 'silent', ...options });
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

interface Problem {
  status: number;
  title: string;
  detail: string;
}

function problemOf(res: Response): Promise<Problem> {
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return res.json() as Promise<Problem>;
}

it('type-checks against the runtime types', () => {
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', join(repoRoot, 'examples', 'tsconfig.json')], { stdio: 'pipe' });
});

describe('examples/webhook', () => {
  const secret = 'test-secret';
  const payload = JSON.stringify({ event: 'order.paid', orderId: 42 });
  const post = (url: string, body: string, signature?: string, method = 'POST') =>
    fetch(url, {
      method,
      headers: { 'content-type': 'application/json', ...(signature !== undefined && { [webhook.signatureHeader]: signature }) },
      body: method === 'GET' ? undefined : body,
    });

  beforeAll(() => {
    process.env.WEBHOOK_SECRET = secret;
  });
  afterAll(() => {
    delete process.env.WEBHOOK_SECRET;
  });

  it('accepts a delivery signed over its exact bytes', async () => {
    const url = await serve(webhook);
    const res = await post(url, payload, webhook.sign(payload, secret));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ accepted: true, event: 'order.paid' });
  });

  it.each([
    ['no signature', undefined],
    ['a signature made with another secret', webhook.sign(payload, 'guess')],
    ['a signature without the sha256= prefix', webhook.sign(payload, secret).slice('sha256='.length)],
    ['a truncated signature', webhook.sign(payload, secret).slice(0, 20)],
    ['garbage', 'sha256=zz'],
  ])('rejects %s with 401, and keeps serving', async (_what, signature) => {
    const url = await serve(webhook);
    const res = await post(url, payload, signature);
    expect(res.status).toBe(401);
    expect((await problemOf(res)).title).toBe('Invalid signature');
    expect((await post(url, payload, webhook.sign(payload, secret))).status).toBe(202);
  });

  it('rejects a body changed after signing, even one that parses to the same JSON', async () => {
    const url = await serve(webhook);
    const reformatted = JSON.stringify(JSON.parse(payload), null, 2);
    const res = await post(url, reformatted, webhook.sign(payload, secret));
    expect(res.status).toBe(401);
  });

  it('rejects a signed body that is not a JSON object with 400', async () => {
    const url = await serve(webhook);
    const body = '[1,2,3]';
    expect((await post(url, body, webhook.sign(body, secret))).status).toBe(400);
  });

  it('answers malformed JSON with the runtime\'s 400 problem', async () => {
    const url = await serve(webhook);
    const body = '{"event":';
    const res = await post(url, body, webhook.sign(body, secret));
    expect(res.status).toBe(400);
    expect((await problemOf(res)).status).toBe(400);
  });

  it('answers GET with 405 and Allow: POST', async () => {
    const url = await serve(webhook);
    const res = await post(url, '', undefined, 'GET');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('keeps the raw body through its includeRaw member, and says how to fix a runtime that turns it off', async () => {
    const url = await serve(webhook, { includeRaw: false });
    const res = await post(url, payload, webhook.sign(payload, secret));
    expect(res.status).toBe(500);
    expect((await problemOf(res)).detail).toMatch(/FUNC_INCLUDE_RAW=false or --no-include-raw/);
  });

  it('answers 503 while no secret is configured', async () => {
    const url = await serve(webhook);
    delete process.env.WEBHOOK_SECRET;
    try {
      expect((await post(url, payload, webhook.sign(payload, secret))).status).toBe(503);
    } finally {
      process.env.WEBHOOK_SECRET = secret;
    }
  });
});

describe('examples/event-transformer', () => {
  const order = { orderId: 'o-1', currency: 'EUR', lines: [{ sku: 'tea', quantity: 2, unitPrice: 450 }, { sku: 'mug', quantity: 1, unitPrice: 1200 }] };
  const orderEvent = (data: unknown, type = transformer.acceptedType) => new CloudEvent({ id: 'evt-1', source: '/shop', type, data });
  const send = (url: string, message: { headers: Record<string, unknown>; body: unknown }) =>
    fetch(url, { method: 'POST', headers: message.headers as Record<string, string>, body: message.body as string });

  it.each([
    ['binary', HTTP.binary],
    ['structured', HTTP.structured],
  ])('answers a %s-mode order event with an invoice event', async (_mode, encode) => {
    const url = await serve(transformer.handle);
    const res = await send(url, encode(orderEvent(order)));
    expect(res.status).toBe(200);
    expect(res.headers.get('ce-type')).toBe(transformer.replyType);
    expect(res.headers.get('ce-source')).toBe(transformer.replySource);
    expect(res.headers.get('ce-id')).toBe('invoice-evt-1');
    expect(await res.json()).toEqual({ invoiceFor: 'o-1', currency: 'EUR', lineCount: 2, totalQuantity: 3, total: 2100 });
  });

  it.each([
    ['an event of another type', orderEvent(order, 'com.example.order.cancelled'), /Unexpected event type/],
    ['an order without lines', orderEvent({ ...order, lines: [] }), /Invalid order/],
    ['a line with a fractional price', orderEvent({ ...order, lines: [{ sku: 'x', quantity: 1, unitPrice: 1.5 }] }), /Invalid order/],
    ['a lower-case currency', orderEvent({ ...order, currency: 'eur' }), /Invalid order/],
    ['data that is a number', orderEvent(42), /Invalid order/],
  ])('answers %s with a 400 problem', async (_what, event, title) => {
    const url = await serve(transformer.handle);
    const res = await send(url, HTTP.binary(event));
    expect(res.status).toBe(400);
    expect((await problemOf(res)).title).toMatch(title);
  });

  it('answers a plain request with a 400 problem', async () => {
    const url = await serve(transformer.handle);
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(order) });
    expect(res.status).toBe(400);
    expect((await problemOf(res)).title).toBe('Expected a CloudEvent');
  });
});

describe('examples/json-api', () => {
  let url: string;
  beforeAll(() => jsonApi.reset());
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });

  it('creates, lists, reads, updates and deletes', async () => {
    url = await serve(jsonApi.handle);
    const created = await call('POST', '/todos', { title: ' buy tea ' });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/todos/1');
    expect(await created.json()).toEqual({ id: 1, title: 'buy tea', done: false });
    expect(await (await call('GET', '/todos')).json()).toEqual([{ id: 1, title: 'buy tea', done: false }]);
    const patched = await call('PATCH', '/todos/1', { done: true });
    expect(await patched.json()).toEqual({ id: 1, title: 'buy tea', done: true });
    expect((await call('GET', '/todos/1')).status).toBe(200);
    expect((await call('DELETE', '/todos/1')).status).toBe(204);
    expect((await call('GET', '/todos/1')).status).toBe(404);
    expect(await (await call('GET', '/todos')).json()).toEqual([]);
  });

  it.each([
    ['GET', '/nothing-here', undefined, 404],
    ['GET', '/todos/abc', undefined, 404],
    ['GET', '/todos/0', undefined, 404],
    ['GET', '/todos/99', undefined, 404],
    ['PUT', '/todos', { title: 'x' }, 405],
    ['POST', '/todos', { title: '' }, 400],
    ['POST', '/todos', { title: 'x'.repeat(201) }, 400],
    ['POST', '/todos', { title: 'x', owner: 'me' }, 400],
    ['POST', '/todos', [{ title: 'x' }], 400],
    ['POST', '/todos', '{"title":', 400],
  ])('%s %s %j → %i with a problem body', async (method, path, body, status) => {
    url = await serve(jsonApi.handle);
    const res = await call(method, path, body);
    expect(res.status).toBe(status);
    expect((await problemOf(res)).status).toBe(status);
    if (status === 405) expect(res.headers.get('allow')).toBe('GET, POST');
  });
});

describe('examples/lifecycle', () => {
  it('is not ready at /ready until init has loaded the rates, then converts', async () => {
    const server = createServer(lifecycle, { logLevel: 'silent' });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    expect((await fetch(`${url}/ready`)).status).toBe(503);
    expect((await fetch(`${url}/?amount=10&to=USD`)).status).toBe(503);

    await lifecycle.init();
    expect((await fetch(`${url}/ready`)).status).toBe(200);
    const res = await fetch(`${url}/?amount=10&from=EUR&to=USD`);
    expect(await res.json()).toEqual({ amount: 10, from: 'EUR', to: 'USD', converted: 10.8 });
  });

  it.each([
    ['?to=USD', 'Invalid amount'],
    ['?amount=-1&to=USD', 'Invalid amount'],
    ['?amount=ten&to=USD', 'Invalid amount'],
    ['?amount=1&to=XXX', 'Unknown currency'],
    ['?amount=1&to=constructor', 'Unknown currency'],
  ])('answers %s with 400 %s', async (query, title) => {
    const url = await serve(lifecycle);
    const res = await fetch(`${url}/${query}`);
    expect(res.status).toBe(400);
    expect((await problemOf(res)).title).toBe(title);
  });

  it('runs init on start and shutdown on stop', async () => {
    const server = await start(lifecycle, { port: 0, host: '127.0.0.1', logLevel: 'silent' });
    expect(() => lifecycle.readiness()).not.toThrow();
    await stop(server);
    expect(() => lifecycle.readiness()).toThrow(/not loaded/);
  });
});

describe('func-runtime examples/<name>', () => {
  const cli = join(repoRoot, 'packages', 'runtime', 'dist', 'cli.js');
  beforeAll(() => {
    execFileSync(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', join(repoRoot, 'packages', 'runtime')]);
  });

  it.each([
    ['webhook', [], '/health/readiness', async (url: string) => {
      const body = '{"event":"ping"}';
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', [webhook.signatureHeader]: webhook.sign(body, 'cli-secret') }, body });
      expect(res.status).toBe(202);
    }],
    ['event-transformer', [], '/health/readiness', async (url: string) => {
      const message = HTTP.binary(new CloudEvent({ source: '/cli', type: transformer.acceptedType, data: { orderId: 'o', currency: 'EUR', lines: [{ sku: 's', quantity: 1, unitPrice: 5 }] } }));
      const res = await fetch(url, { method: 'POST', headers: message.headers as Record<string, string>, body: message.body as string });
      expect(res.headers.get('ce-type')).toBe(transformer.replyType);
    }],
    ['json-api', [], '/health/readiness', async (url: string) => {
      expect((await fetch(`${url}todos`)).status).toBe(200);
    }],
    ['lifecycle', [], '/ready', async (url: string) => {
      expect(await (await fetch(`${url}?amount=1&to=GBP`)).json()).toMatchObject({ converted: 0.85 });
    }],
  ] as const)('serves %s', async (name, flags, readyPath, check) => {
    const port = await freePort();
    const env = { ...process.env, PORT: String(port), WEBHOOK_SECRET: 'cli-secret', FUNC_LOG_LEVEL: 'warn' };
    const server = launch(process.execPath, [cli, join('examples', name), ...flags], { cwd: repoRoot, env });
    try {
      await waitForOk(`http://127.0.0.1:${port}${readyPath}`, server, 30_000);
      await check(`http://127.0.0.1:${port}/`);
    } finally {
      await server.stop();
    }
  });
});
