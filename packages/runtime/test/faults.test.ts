/**
 * Bad input and signals: each case is a fault that was found by sending it, pinned so it stays
 * fixed. The process must stay up (or stop the way the platform expects), the client must get a
 * clear 4xx/5xx it can read, and nothing internal may reach the response body.
 */
import { Agent, get as httpGet } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { fixture, runCli, type Running } from './helpers/cli.js';
import { serve, type Served } from './helpers/serve.js';

let running: Running | undefined;
let current: Served | undefined;
afterEach(async () => {
  if (running && running.child.exitCode === null) await running.stop('SIGKILL');
  running = undefined;
  await current?.close();
  current = undefined;
});

const launch = async (args: string[], env?: Record<string, string>) => (running = await runCli(args, env));
const logLines = (text: string) => text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

describe('drain on SIGTERM', () => {
  it('after a request timed out on a handle that never settles, SIGTERM still drains, runs shutdown and exits 0', async () => {
    const r = await launch([fixture('never'), '--timeout', '200', '--shutdown-timeout', '5000']);
    const res = await fetch(`${r.url}/`);
    expect(res.status).toBe(504);
    await res.text();
    r.child.kill('SIGTERM');
    expect(await r.exit()).toBe(0);
    const out = r.stdout();
    expect(out).toContain('fixture shutdown called');
    expect(out).toMatch(/"msg":"stopped"/);
    // The timed-out request no longer counts as in flight: nothing was cut.
    expect(out).not.toMatch(/shutdown timeout reached/);
  });

  it('a drain cut short by --shutdown-timeout keeps the process up until then, runs shutdown, and exits 1', async () => {
    const r = await launch([fixture('never'), '--timeout', '0', '--shutdown-timeout', '800']);
    const pending = fetch(`${r.url}/`).then((x) => x.status, () => 'cut');
    await until(() => r.stdout().includes('fixture request received'));
    r.child.kill('SIGTERM');
    expect(await r.exit()).toBe(1);
    expect(await pending).toBe('cut');
    const out = r.stdout();
    expect(out).toMatch(/shutdown timeout reached/);
    expect(out.indexOf('fixture shutdown called')).toBeGreaterThan(out.indexOf('shutdown timeout reached'));
    expect(out).toMatch(/"msg":"stopped"/);
  });

  it('readiness answers 503 to new connections for --drain-delay while the listener stays open, then it closes', async () => {
    const r = await launch([fixture('slow'), '--drain-delay', '1500']);
    const fresh = { headers: { connection: 'close' } };
    expect((await fetch(`${r.url}/health/readiness`, fresh)).status).toBe(200);
    r.child.kill('SIGTERM');
    await until(() => r.stdout().includes('"msg":"shutting down"'));
    // New connections during the delay: the probe sees 503, function requests are still served.
    const probe = await fetch(`${r.url}/health/readiness`, fresh);
    expect([probe.status, await probe.text()]).toEqual([503, 'Shutting down']);
    const served = await fetch(`${r.url}/?ms=10`, fresh);
    expect([served.status, await served.text()]).toEqual([200, 'slept 10']);
    expect(await r.exit()).toBe(0);
    expect(r.stdout()).toContain('fixture shutdown called');
  });

  it('closes a kept-alive connection after its next answer once draining, so the client moves to a new one', async () => {
    const r = await launch([fixture('slow'), '--drain-delay', '1500']);
    const socket = connect(Number(new URL(r.url).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    const ask = async (n: number) => {
      socket.write('GET /?ms=1 HTTP/1.1\r\nhost: x\r\n\r\n');
      await until(() => (received.match(/slept 1/g) ?? []).length >= n);
    };
    await ask(1);
    expect(received).not.toMatch(/connection: close/i);
    r.child.kill('SIGTERM');
    await until(() => r.stdout().includes('"msg":"shutting down"'));
    await ask(2);
    const second = received.slice(received.indexOf('slept 1') + 'slept 1'.length);
    expect(second).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(second).toMatch(/\r\nconnection: close\r\n/i);
    await new Promise((resolve) => (socket.closed ? resolve(undefined) : socket.once('close', resolve)));
    expect(await r.exit()).toBe(0);
  });

  it.each([
    ['0', 'closed at once: a fresh connection finds no listener', { status: 0, connection: undefined, body: 'ECONNREFUSED' }],
    ['3000', 'open for the drain delay: a fresh connection gets the 503', { status: 503, connection: 'close', body: 'Shutting down' }],
  ])('a request in flight at SIGTERM is answered with connection: close, so a kept-alive client\'s next request is never reset (--drain-delay %s, listener %s)', async (drainDelay, _, expected) => {
    const r = await launch([fixture('slow'), '--drain-delay', drainDelay]);
    // One socket, kept alive: what the client sends next goes on the connection of the slow request.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (path: string) => new Promise<{ status: number; connection: string | undefined; body: string }>((resolve) => {
      httpGet(`${r.url}${path}`, { agent }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
      }).on('error', (err: NodeJS.ErrnoException) => resolve({ status: 0, connection: undefined, body: err.code ?? err.message }));
    });
    try {
      expect((await get('/health/readiness')).status).toBe(200);
      const slow = get('/slow?ms=2000');
      const next = get('/health/readiness');
      await new Promise((resolve) => setTimeout(resolve, 300));
      r.child.kill('SIGTERM');
      expect(await slow).toEqual({ status: 200, connection: 'close', body: 'slept 2000' });
      expect(await next).toEqual(expected);
      expect(await r.exit()).toBe(0);
    } finally {
      agent.destroy();
    }
  });
});

/** Sends `body` as one structured or batch CloudEvent request; returns status and the problem body. */
async function post(url: string, contentType: string, body: unknown) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, text, problem: res.headers.get('content-type') === 'application/problem+json' ? JSON.parse(text) as { code: string; detail: string } : undefined };
}

const STRUCTURED = 'application/cloudevents+json';
const BATCH = 'application/cloudevents-batch+json';
const good = { specversion: '1.0', id: 'e-1', source: '/faults', type: 'faults.test' };

describe('CloudEvents are validated alike in binary, structured and batch mode', () => {
  it.each([
    ['structured without id', STRUCTURED, { ...good, id: undefined }, /"id"/],
    ['structured with an empty id', STRUCTURED, { ...good, id: '' }, /"id"/],
    ['structured without specversion', STRUCTURED, { ...good, specversion: undefined }, /specversion/],
    ['structured with a bad time', STRUCTURED, { ...good, time: 'yesterday' }, /time/],
    ['structured with an unknown specversion', STRUCTURED, { ...good, specversion: '2.0' }, /2\.0/],
    ['a batch whose second entry has no id', BATCH, [good, { ...good, id: undefined }], /entry 1\b.*"id"/],
    ['a batch whose first entry has a bad time', BATCH, [{ ...good, time: 'soon' }], /entry 0\b.*time/],
    ['a batch whose entry has no specversion', BATCH, [good, good, { ...good, specversion: undefined }], /entry 2\b.*specversion/],
  ])('%s → 400 with the reason', async (_name, type, body, reason) => {
    let calls = 0;
    const s = (current = await serve(() => { calls++; return 'handled'; }));
    const r = await post(`${s.url}/`, type, body);
    expect(r.status).toBe(400);
    expect(r.problem?.code).toBe('invalid_cloudevent');
    expect(r.problem?.detail).toMatch(reason);
    expect(calls).toBe(0);
  });

  it('binary mode rejects the same events', async () => {
    const s = (current = await serve(() => 'handled'));
    const base = { 'ce-specversion': '1.0', 'ce-id': 'b-1', 'ce-source': '/faults', 'ce-type': 'faults.test' };
    for (const headers of [{ ...base, 'ce-id': '' }, { ...base, 'ce-time': 'yesterday' }]) {
      const res = await fetch(`${s.url}/`, { method: 'POST', headers, body: '' });
      expect(res.status).toBe(400);
      expect((await res.json() as { code: string }).code).toBe('invalid_cloudevent');
    }
  });

  it('valid structured and batch events still reach handle with their own ids', async () => {
    const seen: string[] = [];
    const s = (current = await serve((c) => { seen.push(String(c.cloudevent?.id)); return undefined; }));
    expect((await post(`${s.url}/`, STRUCTURED, { ...good, data: { a: 1 } })).status).toBe(204);
    expect((await post(`${s.url}/`, BATCH, [good, { ...good, id: 'e-2' }])).status).toBe(204);
    expect(seen).toEqual(['e-1', 'e-1', 'e-2']);
  });
});

describe('400 bodies say what is wrong with the input, never JavaScript error text', () => {
  it.each([
    ['structured null', STRUCTURED, 'null', /an object/],
    ['structured string', STRUCTURED, '"event"', /an object/],
    ['structured array', STRUCTURED, '[1]', /an object/],
    ['batch object', BATCH, '{}', /an array/],
    ['batch string', BATCH, '"x"', /an array/],
    ['batch of null', BATCH, '[null]', /entry 0\b.*an object/],
    ['batch of numbers', BATCH, '[1, 2]', /entry 0\b.*an object/],
    ['structured JSON cut short', STRUCTURED, '{"specversion":', /not valid JSON/],
  ])('%s', async (_name, type, body, says) => {
    const s = (current = await serve(() => 'handled'));
    const r = await post(`${s.url}/`, type, body);
    expect(r.status).toBe(400);
    expect(r.problem?.detail).toMatch(says);
    expect(r.text).not.toMatch(/TypeError|Cannot read propert|is not a function|is not iterable|undefined \(reading/);
  });
});

describe('a status code the function returns must be one HTTP allows', () => {
  it.each([[999], [99], [0], [200.5], [-1], [600], [101]])('statusCode %s → 500, and the log says why', async (code) => {
    const r = await launch([fixture('status-code')], { FUNC_LOG_LEVEL: 'warn' });
    const res = await fetch(`${r.url}/?code=${code}`);
    expect(res.status).toBe(500);
    expect((await res.json() as { code: string }).code).toBe('invalid_response');
    await until(() => /statusCode/.test(r.stdout()));
    const line = logLines(r.stdout()).find((l) => /statusCode/.test(String(l.msg)));
    expect(String(line?.msg)).toContain(String(code));
    // The process stays up and serves a valid status.
    expect((await fetch(`${r.url}/?code=201`)).status).toBe(201);
  });
});

/**
 * Uploads `total` bytes chunked as fast as the socket takes them and reads nothing until the whole
 * body is written, as clients that send first and read after do (Python's http.client, requests).
 * Resolves to the raw response, or the socket error that replaced it.
 */
function uploadThenRead(port: number, total: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let response = '';
    let failed: string | undefined;
    const timer = setTimeout(() => { socket.destroy(); resolve(`timed out; read so far: ${response.slice(0, 80)}`); }, 60_000);
    socket.on('error', (err: NodeJS.ErrnoException) => { failed ??= err.code ?? err.message; });
    socket.on('close', () => { clearTimeout(timer); resolve(response || `no response: ${failed ?? 'closed'}`); });
    socket.on('data', (d: Buffer) => (response += d.toString('latin1')));
    socket.pause(); // what the kernel receives stays unread until the upload is done
    const chunk = Buffer.alloc(64 * 1024, 120);
    const head = Buffer.from(`${chunk.length.toString(16)}\r\n`);
    socket.write('POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/octet-stream\r\ntransfer-encoding: chunked\r\n\r\n');
    let sent = 0;
    const pump = () => {
      while (sent < total && !failed && !socket.destroyed) {
        sent += chunk.length;
        if (!socket.write(Buffer.concat([head, chunk, Buffer.from('\r\n')]))) { socket.once('drain', pump); return; }
      }
      if (!failed && !socket.destroyed) socket.write('0\r\n\r\n');
      socket.resume();
    };
    pump();
  });
}

describe('a 413 for a large upload reaches the client', () => {
  it('a fast chunked 100 MB upload gets the 413 problem, and the server keeps serving', async () => {
    const s = (current = await serve(() => 'ok'));
    const port = Number(new URL(s.url).port);
    for (let i = 0; i < 3; i++) {
      const raw = await uploadThenRead(port, 100 * 1024 * 1024);
      expect(raw).toMatch(/^HTTP\/1\.1 413 /);
      expect(raw).toMatch(/connection: close/i);
      expect(raw).toContain('"code":"payload_too_large"');
    }
    expect(await fetch(`${s.url}/`).then((r) => r.text())).toBe('ok');
  });
});

async function until(ok: () => boolean, deadlineMs = 15_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a condition');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
