/**
 * Absolute-form request targets, as proxies send them (`GET http://host/path HTTP/1.1`), written
 * byte for byte on a raw socket, since fetch and node:http clients always send the origin form.
 */
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reloader } from '../src/dev/reloader.js';
import { originForm, pathOf } from '../src/request-target.js';
import { createRuntime } from '../src/runtime.js';
import { start, stop, type Context } from '../src/index.js';

let server: Server;
let port: number;

beforeAll(async () => {
  const handle = (c: Context) => ({ path: c.path, url: c.url, query: c.query });
  server = await start({ handle }, { port: 0, host: '127.0.0.1', logLevel: 'silent' });
  port = (server.address() as { port: number }).port;
});
afterAll(() => stop(server));

/** Sends one request line (plus Host) and returns the status and body of the answer. */
function raw(requestLine: string, to = port): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(to, '127.0.0.1');
    let data = '';
    socket.on('data', (d) => (data += d));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), body });
    });
    socket.write(`${requestLine}\r\nHost: 127.0.0.1:${to}\r\nConnection: close\r\n\r\n`);
  });
}

describe('originForm', () => {
  it.each([
    ['/a/b?x=1', '/a/b?x=1'],
    ['http://h/a/b?x=1', '/a/b?x=1'],
    ['https://user@h:8443/a', '/a'],
    ['http://h', '/'],
    ['http://h?x=1', '/?x=1'],
    ['HTTP://H/A', '/A'],
    ['', '/'],
    [undefined, '/'],
    ['*', '*'],
    ['h:443', 'h:443'],
  ])('%s → %s', (target, expected) => {
    expect(originForm(target)).toBe(expected);
  });
});

describe('pathOf', () => {
  it.each([
    ['/a/b?x=1', '/a/b'],
    ['http://h/health/readiness?x=1', '/health/readiness'],
    ['http://h', '/'],
    [undefined, '/'],
  ])('%s → %s', (target, expected) => {
    expect(pathOf(target)).toBe(expected);
  });
});

describe('a function behind a proxy', () => {
  it('sees the path and query of an absolute-form target', async () => {
    const r = await raw('GET http://api.example.com/api/v1/error/invalid_token?lang=en&x=1&x=2 HTTP/1.1');
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ path: '/api/v1/error/invalid_token', url: '/api/v1/error/invalid_token?lang=en&x=1&x=2', query: { lang: 'en', x: ['1', '2'] } });
  });

  it('treats a target with no path as "/"', async () => {
    expect(JSON.parse((await raw('GET http://api.example.com HTTP/1.1')).body)).toEqual({ path: '/', url: '/', query: {} });
    expect(JSON.parse((await raw('GET http://api.example.com?q=1 HTTP/1.1')).body)).toEqual({ path: '/', url: '/?q=1', query: { q: '1' } });
  });

  it('routes absolute-form probes to the health and metrics handlers', async () => {
    expect(await raw('GET http://10.0.0.1:8080/health/liveness HTTP/1.1')).toEqual({ status: 200, body: 'OK' });
    expect(await raw('GET http://10.0.0.1:8080/health/readiness?x=1 HTTP/1.1')).toEqual({ status: 200, body: 'OK' });
    expect((await raw('GET http://10.0.0.1:8080/metrics HTTP/1.1')).body).toContain('faas_invocations');
  });

  it('takes what follows an unparseable authority as the path, and keeps serving', async () => {
    const bad = await raw('GET http://[::1 HTTP/1.1');
    expect(bad.status).toBe(200);
    expect(JSON.parse(bad.body)).toMatchObject({ path: '/' });
    expect((await fetch(`http://127.0.0.1:${port}/still?up=1`)).status).toBe(200);
  });
});

describe('dev: the readiness of a stale version', () => {
  it('answers 503 Stale for an absolute-form probe too', async () => {
    const reloader = new Reloader((fn) => createRuntime(fn, { options: { logLevel: 'silent' }, env: {} }));
    await reloader.swap({ handle: () => 'fn' });
    reloader.stale = 'src/index.ts:1:1: Unexpected token';
    const devServer = createServer(reloader.listener);
    await new Promise<void>((resolve) => devServer.listen(0, '127.0.0.1', resolve));
    try {
      const devPort = (devServer.address() as { port: number }).port;
      for (const target of ['/health/readiness', 'http://10.0.0.1:8080/health/readiness', 'http://10.0.0.1:8080/health/readiness?x=1']) {
        expect(await raw(`GET ${target} HTTP/1.1`, devPort)).toEqual({ status: 503, body: 'Stale: src/index.ts:1:1: Unexpected token' });
      }
      expect(await raw('GET http://10.0.0.1:8080/other HTTP/1.1', devPort)).toEqual({ status: 200, body: 'fn' });
    } finally {
      await reloader.stop(devServer, 'test');
    }
  });
});
