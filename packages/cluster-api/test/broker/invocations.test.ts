/**
 * The broker's side of asynchronous invocations (`POST /invocations/{ns}/{fn}`), on both engines
 * (SQLite, and NATS JetStream on a real nats-server): stored before the 202, run once through the
 * gateway (a real HTTP server standing for it, which checks the Host the request is routed by), its
 * answer POSTed to the callback; retried per the function's policy, then dead-lettered; every
 * malformed request refused with our own words.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningBroker, startBroker } from '../../src/broker/broker.js';
import { type NatsCluster, startNats } from '../../src/broker/log/testing/nats-server.js';
import { silentLogger } from '../../src/broker/metrics.js';
import { StaticTriggerSource } from '../../src/broker/source.js';
import type { DeliverySpec } from '../../src/broker/types.js';
import { post, type Subscriber, subscriber } from './helpers.js';

describe.each(['sqlite', 'nats'] as const)('asynchronous invocations on %s', (engine) => {
  let dir: string;
  let nats: NatsCluster | undefined;
  let broker: RunningBroker;
  let gateway: Subscriber;
  let callback: Subscriber;
  let dls: Subscriber;
  const policies = new Map<string, DeliverySpec>();
  const url = (ns: string, fn: string) => `${broker.url}/invocations/${ns}/${fn}`;
  const invoke = (fn: string, headers: Record<string, string> = {}, body = '{"x":1}') =>
    post(url('default', fn), { 'x-func-method': 'POST', 'x-func-path': `/${fn}?q=1`, 'x-func-host': `${fn}.default.localhost`, 'content-type': 'application/json', ...headers }, body);
  /** As a client does with 503 and Retry-After (nothing was stored): again until stored. */
  const invokeStored = async (...args: Parameters<typeof invoke>) => {
    for (;;) {
      const res = await invoke(...args);
      if (res.status !== 503) return res;
      expect(res.headers.get('retry-after')).toBe('1');
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `invocations-${engine}-`));
    if (engine === 'nats') nats = await startNats(1);
    // The gateway: it answers by path, as the function behind each host would.
    gateway = await subscriber((r, _n, res) => {
      if (r.path.startsWith('/failing')) return void res.writeHead(503, { 'content-type': 'text/plain' }).end('down for now');
      res.writeHead(200, { 'content-type': 'application/json', 'x-fn': String(r.headers.host) }).end(`{"got":${r.body.toString() || 'null'}}`);
    });
    callback = await subscriber();
    dls = await subscriber();
    policies.set('default/failing', { retry: 2, backoffPolicy: 'linear', backoffDelay: 'PT0.02S', deadLetterSink: { uri: dls.url } });
    broker = await startBroker({
      store: engine === 'nats' ? nats!.url : `sqlite:${join(dir, 'broker.db')}`,
      triggerSource: new StaticTriggerSource(),
      logger: silentLogger,
      invocations: { gatewayUrl: () => gateway.url, policyOf: async (ns, name) => policies.get(`${ns}/${name}`) },
    });
  });
  afterAll(async () => {
    await broker?.stop();
    for (const s of [gateway, callback, dls]) await s?.close();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores the request, answers 202 with its id, runs it once through the gateway and POSTs the answer to the callback', async () => {
    const res = await invokeStored('hello', { 'x-callback-url': `${callback.url}cb`, 'x-custom': 'kept', prefer: 'respond-async' });
    expect(res.status).toBe(202);
    const id = res.headers.get('x-call-id')!;
    expect(JSON.parse(res.text)).toEqual({ id });
    const [got] = await gateway.until(1);
    expect(got!.path).toBe('/hello?q=1');
    expect(got!.headers).toMatchObject({ host: 'hello.default.localhost', 'x-custom': 'kept', 'x-call-id': id, 'content-type': 'application/json' });
    // The gateway's control headers and the preference are not the function's.
    expect(Object.keys(got!.headers).filter((h) => h.startsWith('x-func-') || h === 'x-callback-url' || h === 'prefer')).toEqual([]);
    const [answer] = await callback.until(1);
    expect(answer!.path).toBe('/cb');
    expect(answer!.headers).toMatchObject({ 'x-call-id': id, 'x-function-status': '200', 'x-function-name': 'default/hello', 'x-fn': 'hello.default.localhost' });
    expect(JSON.parse(answer!.body.toString())).toEqual({ got: { x: 1 } });
    expect(gateway.received.filter((r) => r.headers['x-call-id'] === id)).toHaveLength(1);
  });

  it('retries a failing function per its policy, then dead-letters it and tells the callback', async () => {
    const res = await invokeStored('failing', { 'x-callback-url': callback.url, authorization: 'Bearer secret' }, 'data');
    expect(res.status).toBe(202);
    const id = res.headers.get('x-call-id')!;
    const [dead] = await dls.until(1);
    expect(dead!.headers).toMatchObject({ 'ce-id': id, 'ce-type': 'dev.func.invocation', 'ce-knativeerrorcode': '503', 'ce-knativeerrordest': `${gateway.url}failing?q=1` });
    expect(Buffer.from(String(dead!.headers['ce-knativeerrordata']), 'base64').toString()).toBe('down for now');
    expect(dead!.body.toString()).toBe('data');
    expect(JSON.stringify(dead!.headers)).not.toContain('secret');
    expect(gateway.received.filter((r) => r.headers['x-call-id'] === id)).toHaveLength(3);
    const answer = (await callback.until(2)).find((r) => r.headers['x-call-id'] === id)!;
    expect(answer.headers['x-function-status']).toBe('503');
    expect(answer.body.toString()).toBe('down for now');
  });

  it.each([
    [{ 'x-func-method': '' }, 400, 'X-Func-Method must name an HTTP method'],
    [{ 'x-func-method': 'GE T' }, 400, 'X-Func-Method must name an HTTP method'],
    [{ 'x-func-path': 'relative' }, 400, 'X-Func-Path must be an absolute path'],
    [{ 'x-func-host': 'a/b' }, 400, 'X-Func-Host must be a host'],
    [{ 'x-callback-url': 'nope' }, 400, 'X-Callback-Url must be an absolute http or https URL'],
    [{ 'x-callback-url': 'file:///etc/passwd' }, 400, 'X-Callback-Url must be an absolute http or https URL'],
  ])('refuses %j with %i', async (headers, status, detail) => {
    const res = await invoke('hello', headers);
    expect(res.status).toBe(status);
    expect(JSON.parse(res.text)).toMatchObject({ status, detail });
  });

  it('answers 404 for other paths, 405 for other methods and 413 for a body over the limit', async () => {
    expect((await post(`${broker.url}/invocations/default`, {}, '')).status).toBe(404);
    expect((await post(`${broker.url}/invocations/Bad_NS/fn`, {}, '')).status).toBe(404);
    expect((await fetch(url('default', 'hello'))).status).toBe(405);
    const big = await invoke('hello', {}, 'x'.repeat(1024 * 1024 + 1));
    expect(big.status).toBe(413);
  });
});
