import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { enforceHeadersDeadline } from './headers-deadline.js';

/** A net listener handing each connection to an HTTP/1.1 server (as the gateway does), its request heads under a deadline of `ms`. */
function start(ms: number, handler: (res: import('node:http').ServerResponse) => void) {
  const http: HttpServer = createHttpServer((_req, res) => handler(res));
  enforceHeadersDeadline(http, ms);
  const listener: Server = createServer((s) => http.emit('connection', s));
  return new Promise<{ port: number; close(): Promise<void> }>((resolve) => listener.listen(0, '127.0.0.1', () => resolve({
    port: (listener.address() as { port: number }).port,
    close: () => new Promise<void>((r) => listener.close(() => r())),
  })));
}

/** Everything the server sends until it closes the connection. */
const untilClosed = (c: Socket) => new Promise<string>((resolve) => {
  let text = '';
  c.setEncoding('utf8').on('data', (d: string) => (text += d)).on('close', () => resolve(text)).on('error', () => undefined);
});

describe('enforceHeadersDeadline', () => {
  let server: { close(): Promise<void> } | undefined;
  afterEach(async () => server?.close());

  it('closes a connection whose request head trickles in and never completes', async () => {
    const s = await start(200, (res) => res.end('ok'));
    server = s;
    const c = connect(s.port, '127.0.0.1');
    const closed = untilClosed(c);
    c.write('GET / HTTP/1.1\r\nHost: a\r\n');
    const drip = setInterval(() => c.writable && c.write('X-A: b\r\n'), 50);
    expect(await closed).toBe('');
    clearInterval(drip);
  });

  it('never cuts a request whose head arrived, however long it runs, and times the next head after the last answer', async () => {
    const s = await start(200, (res) => setTimeout(() => res.end('slow answer'), 600));
    server = s;
    const c = connect(s.port, '127.0.0.1');
    const closed = untilClosed(c);
    // Two requests pipelined: both answered although each takes longer than the deadline.
    c.write('GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n');
    // Then a head that never ends: the connection is closed after the last answer.
    setTimeout(() => c.writable && c.write('GET /3 HTTP/1.1\r\nHost: a\r\n'), 1300);
    const text = await closed;
    expect(text.match(/slow answer/g)).toHaveLength(2);
    expect(text).not.toContain('400');
  });

  it('a malformed head is still answered 400 by Node.js', async () => {
    const s = await start(10_000, (res) => res.end('ok'));
    server = s;
    const c = connect(s.port, '127.0.0.1');
    const closed = untilClosed(c);
    c.write('NOT A REQUEST\r\n\r\n');
    expect(await closed).toMatch(/^HTTP\/1\.1 400/);
  });
});
