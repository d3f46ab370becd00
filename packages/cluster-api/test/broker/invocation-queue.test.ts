/**
 * The gateway's asynchronous path (serving/gateway/async.ts) in front of the broker's invocation
 * queue, both ways it reaches it: in-process (the broker's queue object, as `serve` wires it) and
 * over HTTP (`httpInvocationQueue` to the broker's `POST /invocations`, a gateway in a process of
 * its own). Real listeners on 127.0.0.1, the broker on a SQLite file: each way answers 202 with the
 * preference applied only once stored, runs the function once, and refuses malformed calls with the
 * same words; an unreachable broker is a 503 with Retry-After and no internal text. Then durability:
 * an invocation answered 202 survives a kill -9 of the broker process and runs after the restart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningBroker, startBroker } from '../../src/broker/broker.js';
import type { InvocationQueue } from '../../src/broker/invocation/queue.js';
import { silentLogger } from '../../src/broker/metrics.js';
import { StaticTriggerSource } from '../../src/broker/source.js';
import { httpInvocationQueue, queueAsync } from '../../src/serving/gateway/async.js';
import { post, type Subscriber, subscriber } from './helpers.js';
import { spawnBroker } from './processes.js';

const dir = mkdtempSync(join(tmpdir(), 'invocation-queue-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A gateway's async path on its own listener: every request queued for function `default/fn`. */
async function front(queue: () => InvocationQueue): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => queueAsync(req, res, queue(), { namespace: 'default', name: 'fn', headers: req.headers }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}
const closeServer = (s: Server) => new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r())));

describe.each(['in-process', 'over HTTP'] as const)('the gateway async path, queue %s', (way) => {
  let broker: RunningBroker;
  let gateway: Subscriber;
  let callback: Subscriber;
  let gw: { url: string; server: Server };
  const queueAt = async (path: string, headers: Record<string, string> = {}, body = '{"x":1}') => {
    for (;;) {
      const res = await post(`${gw.url}${path}`, { 'content-type': 'application/json', prefer: 'respond-async', ...headers }, body);
      // 503 with Retry-After until the invocations stream exists: nothing was stored, send again.
      if (res.status !== 503) return res;
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  beforeAll(async () => {
    gateway = await subscriber((r, _n, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end(`ran ${r.path}`));
    callback = await subscriber();
    broker = await startBroker({
      store: `sqlite:${join(dir, `${way.replace(/\W/g, '')}.db`)}`,
      triggerSource: new StaticTriggerSource(),
      logger: silentLogger,
      maxEventBytes: 1024,
      invocations: { gatewayUrl: () => gateway.url, policyOf: async () => undefined },
    });
    const http = httpInvocationQueue(() => broker.url);
    gw = await front(() => (way === 'in-process' ? broker.invocations! : http));
  });
  afterAll(async () => {
    await closeServer(gw.server);
    await broker?.stop();
    for (const s of [gateway, callback]) await s?.close();
  });

  it('answers 202 with the preference applied and the call id once stored; the function runs once; the callback gets its answer', async () => {
    const res = await queueAt('/orders?q=1', { 'x-callback-url': `${callback.url}cb`, 'x-custom': 'kept' });
    expect(res.status).toBe(202);
    expect(res.headers.get('preference-applied')).toBe('respond-async');
    const id = res.headers.get('x-call-id')!;
    expect(JSON.parse(res.text)).toEqual({ id });
    const ran = (await gateway.until(1)).filter((r) => r.headers['x-call-id'] === id);
    expect(ran).toHaveLength(1);
    expect(ran[0]!.path).toBe('/orders?q=1');
    expect(ran[0]!.headers).toMatchObject({ 'x-custom': 'kept', 'content-type': 'application/json' });
    expect(Object.keys(ran[0]!.headers).filter((h) => h.startsWith('x-func-') || h === 'x-callback-url' || h === 'prefer')).toEqual([]);
    const [answer] = await callback.until(1);
    expect(answer!.headers).toMatchObject({ 'x-call-id': id, 'x-function-status': '200', 'x-function-name': 'default/fn' });
    expect(answer!.body.toString()).toBe('ran /orders?q=1');
  });

  it('refuses a malformed X-Callback-Url with 400 and a body over the limit with 413, in the broker words, and queues the next call', async () => {
    const bad = await queueAt('/', { 'x-callback-url': 'file:///etc/passwd' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('preference-applied')).toBeNull();
    expect(JSON.parse(bad.text)).toMatchObject({ status: 400, detail: 'X-Callback-Url must be an absolute http or https URL' });
    const big = await queueAt('/', {}, 'x'.repeat(1025));
    expect(big.status).toBe(413);
    expect(JSON.parse(big.text)).toMatchObject({ status: 413, detail: 'the request body exceeds the limit of 1024 bytes' });
    expect((await queueAt('/after')).status).toBe(202);
  });
});

describe('the gateway async path over HTTP, broker out of reach', () => {
  it('answers 503 with Retry-After and our own words, nothing of the connection error', async () => {
    const gone = createServer();
    await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(gone.address() as AddressInfo).port}`;
    await closeServer(gone);
    const gw = await front(() => httpInvocationQueue(() => url));
    try {
      const res = await post(`${gw.url}/`, { prefer: 'respond-async' }, 'x');
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(JSON.parse(res.text)).toMatchObject({ status: 503, detail: 'the invocation could not be queued now; send it again' });
      expect(res.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
    } finally {
      await closeServer(gw.server);
    }
  });
});

describe('an invocation answered 202, then kill -9 of the broker on SQLite', () => {
  it('runs after a restart on the same file', async () => {
    // The first gateway never answers: the invocation is in flight, not done, when the process dies.
    const stuck = await subscriber(() => undefined);
    const store = `sqlite:${join(dir, 'kill.db')}`;
    let proc = await spawnBroker(dir, store, { brokers: [], triggers: [], invocationsGateway: stuck.url });
    let id: string | undefined;
    try {
      for (let status = 503; status === 503; ) {
        const res = await post(`${proc.fronts!.inProcess}/`, { prefer: 'respond-async', 'content-type': 'text/plain' }, 'survive');
        status = res.status;
        id = res.headers.get('x-call-id') ?? undefined;
        if (status === 503) await new Promise((r) => setTimeout(r, 50));
        else expect(status).toBe(202);
      }
      await stuck.until(1);
      await proc.kill9();
    } finally {
      await proc.stop();
      await stuck.close();
    }
    const gateway = await subscriber((_r, _n, res) => void res.writeHead(200).end());
    proc = await spawnBroker(dir, store, { brokers: [], triggers: [], invocationsGateway: gateway.url });
    try {
      const ran = await gateway.until(1, 60_000);
      expect(ran[0]!.headers['x-call-id']).toBe(id);
      expect(ran[0]!.body.toString()).toBe('survive');
    } finally {
      await proc.stop();
      await gateway.close();
    }
  }, 120_000);
});
