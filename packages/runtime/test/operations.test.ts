/** Health, metrics, the AbortSignal, timeouts, and the programmatic API over a real server. */
import express from 'express';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createHandler, createServer, runtimeErrors, start, stop } from '../src/index.js';
import type { Context, FunctionModule } from '../src/types.js';
import { serve, type Served } from './helpers/serve.js';

let current: Served | undefined;
afterEach(async () => { await current?.close(); current = undefined; });

async function served(fn: Parameters<typeof serve>[0], options: Parameters<typeof serve>[1] = {}): Promise<Served> {
  return (current = await serve(fn, options));
}

describe('health', () => {
  it('answers the default paths with 200 OK and never calls handle', async () => {
    let calls = 0;
    const s = await served(() => { calls++; return 'fn'; });
    for (const path of ['/health/liveness', '/health/readiness']) {
      const res = await request(s.url).get(path);
      expect(res.status).toBe(200);
      expect(res.text).toBe('OK');
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    }
    expect(calls).toBe(0);
  });

  it('uses the path property of user checks and their answers', async () => {
    let ready = false;
    const readiness = Object.assign(() => { if (!ready) throw new Error('warming up'); return 'READY'; }, { path: '/ready' });
    const liveness = Object.assign(async () => ({ alive: true }), { path: '/alive' });
    const s = await served({ handle: () => 'fn', readiness, liveness });
    expect((await request(s.url).get('/ready')).status).toBe(503);
    ready = true;
    const r = await request(s.url).get('/ready');
    expect([r.status, r.text]).toEqual([200, 'READY']);
    const l = await request(s.url).get('/alive');
    expect([l.status, l.body]).toEqual([200, { alive: true }]);
    // The default paths are then ordinary function paths.
    expect((await request(s.url).get('/health/readiness')).text).toBe('fn');
  });

  it('takes the paths from options (LIVENESS_URL / READINESS_URL / func.yaml)', async () => {
    const s = await served(() => 'fn', { livenessPath: '/l', readinessPath: '/r' });
    expect((await request(s.url).get('/l')).text).toBe('OK');
    expect((await request(s.url).get('/r')).text).toBe('OK');
  });

  it('a POST to a health path reaches handle', async () => {
    const s = await served((c: Context) => `fn ${c.method}`);
    expect((await request(s.url).post('/health/readiness')).text).toBe('fn POST');
  });

  it('one long pause does not fail readiness', async () => {
    const s = await served((c: Context) => {
      const until = Date.now() + Number(c.query.block);
      while (Date.now() < until) { /* one slow request */ }
      return 'done';
    }, { maxEventLoopDelay: 50 });
    await request(s.url).get('/health/readiness');
    await request(s.url).get('/?block=300');
    expect((await request(s.url).get('/health/readiness')).status).toBe(200);
  });

  it('readiness answers 503 while the event loop is overloaded', async () => {
    const s = await served((c: Context) => {
      const until = Date.now() + Number(c.query.block);
      while (Date.now() < until) { /* a CPU-bound request */ }
      return 'done';
    }, { maxEventLoopDelay: 50 });
    // Sustained lag: two blocked intervals in a row (one pause alone is tolerated).
    await request(s.url).get('/?block=300');
    await new Promise((r) => setTimeout(r, 5));
    await request(s.url).get('/?block=300');
    const res = await request(s.url).get('/health/readiness');
    expect(res.status).toBe(503);
    expect(res.text).toBe('Overloaded');
    await new Promise((r) => setTimeout(r, 500));
    expect((await request(s.url).get('/health/readiness')).status).toBe(200);
    expect((await request(s.url).get('/health/liveness')).status).toBe(200);
  });
});

describe('metrics', () => {
  it('exposes faas_* metrics in Prometheus text', async () => {
    const s = await served((c: Context) => { if (c.query.fail) throw new Error('x'); return 'ok'; });
    await request(s.url).get('/');
    await request(s.url).get('/');
    await request(s.url).get('/?fail=1');
    const res = await request(s.url).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0.0.4/);
    expect(res.text).toMatch(/^faas_invocations\{[^}]*faas_runtime="Node.js"[^}]*\} 3$/m);
    expect(res.text).toMatch(/^faas_errors\{[^}]*\} 1$/m);
    expect(res.text).toMatch(/^faas_execution_latency_count\{[^}]*\} 3$/m);
    expect(res.text).toMatch(/^faas_execution_latency_bucket\{le="\+Inf"[^}]*\} 3$/m);
    expect(res.text).toMatch(/^faas_cold_start_latency_count\{[^}]*\} 1$/m);
    expect(res.text).toMatch(/^# TYPE faas_queue_latency histogram$/m);
    expect(res.text).toMatch(/^faas_queue_latency_count\{[^}]*\} 3$/m);
    expect(res.text).toMatch(/^# TYPE faas_execution_latency histogram$/m);
    expect(res.text).toMatch(/^process_resident_memory_bytes/m);
    expect(res.text).toMatch(/^faas_cpu_utilization\{[^}]*\} [\d.]+$/m);
    expect(res.text).toMatch(/^faas_mem_utilization\{[^}]*\} [\d.]+$/m);
    expect(res.text).toMatch(/^# TYPE faas_mem_utilization gauge$/m);
  });
});

describe('context.signal', () => {
  it('aborts when the client goes away', async () => {
    let resolveAborted!: (reason: unknown) => void;
    const aborted = new Promise((r) => (resolveAborted = r));
    const s = await served(async (c: Context) => {
      c.signal.addEventListener('abort', () => resolveAborted(c.signal.reason));
      await new Promise((r) => setTimeout(r, 3000));
      return 'late';
    });
    const controller = new AbortController();
    const pending = fetch(`${s.url}/`, { signal: controller.signal }).catch((e: Error) => e.name);
    await new Promise((r) => setTimeout(r, 100));
    controller.abort();
    expect(await pending).toBe('AbortError');
    expect(String(await aborted)).toMatch(/client closed/);
  });

  it('aborts and answers 504 when the timeout passes', async () => {
    let sawAbort = false;
    const s = await served(async (c: Context) => {
      await new Promise((r) => c.signal.addEventListener('abort', r));
      sawAbort = true;
      return 'too late';
    }, { timeout: 100 });
    const res = await fetch(`${s.url}/`);
    expect(res.status).toBe(504);
    expect(((await res.json()) as { code: string }).code).toBe('timeout');
    expect(sawAbort).toBe(true);
  });

  it('is not aborted for a normal request', async () => {
    const s = await served((c: Context) => String(c.signal.aborted));
    expect((await fetch(`${s.url}/`).then((r) => r.text()))).toBe('false');
  });
});

describe('programmatic API', () => {
  it('start() runs init (async) before listening and rejects a module without handle', async () => {
    const order: string[] = [];
    const s = await served({ init: async () => { await new Promise((r) => setTimeout(r, 20)); order.push('init'); }, handle: () => { order.push('handle'); return 'x'; } });
    await request(s.url).get('/');
    expect(order).toEqual(['init', 'handle']);
    await expect(start({} as FunctionModule)).rejects.toThrow(TypeError);
    await expect(start({ handle: 'nope' } as unknown as FunctionModule)).rejects.toThrow('Function must export a handle function');
  });

  it('stop() drains in-flight requests, then runs shutdown', async () => {
    const events: string[] = [];
    const server = await start({
      handle: async () => { await new Promise((r) => setTimeout(r, 200)); events.push('handled'); return 'done'; },
      shutdown: () => { events.push('shutdown'); },
    }, { port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const inflight = fetch(url).then((r) => r.text());
    await new Promise((r) => setTimeout(r, 50));
    await stop(server);
    expect(await inflight).toBe('done');
    expect(events).toEqual(['handled', 'shutdown']);
    expect(server.listening).toBe(false);
  });

  it('closing a server runs shutdown once', async () => {
    let calls = 0;
    const server = createServer({ handle: () => 'x', shutdown: () => { calls++; } });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    await new Promise((r) => server.close(r));
    await new Promise((r) => setImmediate(r));
    expect(calls).toBe(1);
  });

  it('createHandler works as Express middleware, after express.json()', async () => {
    const app = express();
    app.use(express.json());
    app.get('/own', (_req, res) => { res.send('own route'); });
    app.use(createHandler((c: Context, data?: unknown) => ({ data, path: c.path, parsed: c.body })));
    const server: Server = createHttpServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect((await request(url).get('/own')).text).toBe('own route');
      const res = await request(url).post('/fn').send({ a: 1 });
      expect(res.body).toEqual({ data: { a: 1 }, path: '/fn', parsed: { a: 1 } });
      expect((await request(url).get('/health/liveness')).text).toBe('OK');
    } finally {
      server.close();
    }
  });

  it('createHandler serves node:http directly and waits for init', async () => {
    let initialised = false;
    const handler = createHandler({ init: async () => { await new Promise((r) => setTimeout(r, 50)); initialised = true; }, handle: () => ({ initialised }) });
    const server = createHttpServer(handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const res = await request(`http://127.0.0.1:${(server.address() as AddressInfo).port}`).get('/');
      expect(res.body).toEqual({ initialised: true });
    } finally {
      server.close();
    }
  });

  it('counts the wait for init as queue latency (faas_queue_latency), not as execution', async () => {
    const handler = createHandler({ init: () => new Promise((r) => setTimeout(r, 200)), handle: () => 'x' });
    const server = createHttpServer(handler);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect((await request(url).get('/')).text).toBe('x');
      const text = (await request(url).get('/metrics')).text;
      const sum = (name: string) => Number(new RegExp(`^${name}_sum\\{[^}]*\\} ([\\d.e-]+)$`, 'm').exec(text)?.[1]);
      expect(sum('faas_queue_latency')).toBeGreaterThan(0.15);
      expect(sum('faas_execution_latency')).toBeLessThan(0.1); // handle itself answers at once
      expect(text).toMatch(/^faas_queue_latency_bucket\{le="0.25"[^}]*\} 1$/m);
      expect(text).toMatch(/^faas_queue_latency_bucket\{le="0.1"[^}]*\} 0$/m);
    } finally {
      server.close();
    }
  });

  it('runtimeErrors is the catalog the problem bodies use', () => {
    for (const [code, entry] of Object.entries(runtimeErrors)) {
      expect(code).toMatch(/^[a-z_]+$/);
      expect(entry.status).toBeGreaterThanOrEqual(400);
      expect(entry.title.length).toBeGreaterThan(3);
      expect(entry.description.length).toBeGreaterThan(20);
    }
    expect(runtimeErrors.payload_too_large.status).toBe(413);
  });
});
