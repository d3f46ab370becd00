import { once } from 'node:events';
import { createServer, ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { withLength, writeHead } from './head.js';

const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** Serves `answer` on 127.0.0.1 and returns the raw bytes of the reply to one GET, without its Date line. */
async function rawReply(answer: (res: ServerResponse) => void, method = 'GET'): Promise<string> {
  const server = createServer((_req, res) => answer(res));
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  socket.end(`${method} / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
  await once(socket, 'close');
  return text.replace(/\r\nDate: [^\r]*/, '');
}

const CORS = ['access-control-allow-origin', '*', 'access-control-allow-methods', 'OPTIONS, GET, DELETE, POST, PUT, HEAD, PATCH'];

describe('response heads built once', () => {
  it('sends the same bytes as writeHead with the list, for a body and for a 204', async () => {
    const pairs = [...CORS, 'content-type', 'text/plain; charset=utf-8'];
    const head = withLength(pairs, 13);
    const fast = await rawReply((res) => { writeHead(res, 200, head); res.end('Hello, world!'); });
    const plain = await rawReply((res) => { res.writeHead(200, [...pairs, 'content-length', '13']); res.end('Hello, world!'); });
    expect(fast).toBe(plain);
    expect(fast).toContain('\r\naccess-control-allow-methods: OPTIONS, GET, DELETE, POST, PUT, HEAD, PATCH\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 13\r\n');
    const fast204 = await rawReply((res) => { writeHead(res, 204, CORS); res.end(); });
    const plain204 = await rawReply((res) => { res.writeHead(204, CORS); res.end(); });
    expect(fast204).toBe(plain204);
    expect(fast204.startsWith('HTTP/1.1 204 No Content\r\naccess-control-allow-origin: *\r\n')).toBe(true);
  });

  it('keeps headers a response already holds (an Express app in front) and adds the head\'s', async () => {
    const head = withLength(CORS, 2);
    const reply = await rawReply((res) => { res.setHeader('X-Powered-By', 'Express'); writeHead(res, 200, head); res.end('ok'); });
    expect(reply).toContain('\r\nX-Powered-By: Express\r\n');
    expect(reply).toContain('\r\naccess-control-allow-origin: *\r\n');
    expect(reply).toContain('\r\ncontent-length: 2\r\n');
  });

  it('leaves a shared head as it was: each response sends it whole, and refuses a header set after it', async () => {
    const head = withLength([...CORS, 'content-type', 'text/plain'], 1);
    const before = [...head];
    for (let i = 0; i < 3; i++) {
      const reply = await rawReply((res) => {
        writeHead(res, 200, head);
        expect(() => res.setHeader('x-late', '1')).toThrow(expect.objectContaining({ code: 'ERR_HTTP_HEADERS_SENT' }));
        res.end('x');
      });
      expect(reply).toContain('\r\naccess-control-allow-origin: *\r\naccess-control-allow-methods: OPTIONS, GET, DELETE, POST, PUT, HEAD, PATCH\r\ncontent-type: text/plain\r\ncontent-length: 1\r\n');
      expect(reply).not.toContain('x-late');
    }
    expect(head).toEqual(before);
  });

  it('refuses a bad name or value with node:http\'s own errors, and sends nothing of it', async () => {
    const bad: [string[], string][] = [
      [['x-ok', 'a\r\nx-injected: 1'], 'ERR_INVALID_CHAR'],
      [['bad name', 'v'], 'ERR_INVALID_HTTP_TOKEN'],
      [['x-undefined', undefined as unknown as string], 'ERR_HTTP_INVALID_HEADER_VALUE'],
    ];
    for (const [pairs, code] of bad) {
      let thrown: unknown;
      const reply = await rawReply((res) => {
        try {
          writeHead(res, 200, withLength(pairs, 1));
        } catch (err) {
          thrown = err;
          res.writeHead(500, ['content-length', '0']);
        }
        res.end();
      });
      expect(thrown).toEqual(expect.objectContaining({ code }));
      expect(reply.startsWith('HTTP/1.1 500 ')).toBe(true);
      expect(reply).not.toContain('x-injected');
    }
  });

  it('sends a name given twice twice', async () => {
    const head = ['vary', 'origin', 'Vary', 'accept'];
    const reply = await rawReply((res) => { writeHead(res, 204, head); res.end(); });
    expect(reply).toContain('\r\nvary: origin\r\nVary: accept\r\n');
  });

  it('lets a wrapped writeHead change one response\'s headers, and the next responses send the head unchanged', async () => {
    const head = withLength([...CORS, 'content-type', 'text/plain'], 1);
    // As on-headers (Express's compression, response-time) wraps it: headers changed just before they are written.
    const wrapped = (res: ServerResponse, change: (r: ServerResponse) => void) => {
      const original = res.writeHead;
      res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
        change(this);
        return original.apply(this, args);
      } as ServerResponse['writeHead'];
    };
    const change = (r: ServerResponse) => { r.setHeader('x-response-time', '1ms'); r.removeHeader('access-control-allow-methods'); r.appendHeader('x-extra', 'a'); };
    const first = await rawReply((res) => { wrapped(res, change); writeHead(res, 200, head); res.end('x'); });
    // What node:http sends when the same wrapper meets writeHead with the list.
    expect(first).toBe(await rawReply((res) => { wrapped(res, change); res.writeHead(200, [...head]); res.end('x'); }));
    expect(first).toContain('\r\nx-response-time: 1ms\r\n');
    expect(first).toContain('\r\nx-extra: a\r\n');
    for (let i = 0; i < 2; i++) {
      const next = await rawReply((res) => { writeHead(res, 200, head); res.end('x'); });
      expect(next).not.toContain('x-response-time');
      expect(next).not.toContain('x-extra');
      expect(next).toContain('\r\naccess-control-allow-methods: OPTIONS, GET, DELETE, POST, PUT, HEAD, PATCH\r\n');
      expect(next).toBe(await rawReply((res) => { res.writeHead(200, [...head]); res.end('x'); }));
    }
  });

  it('keeps heads that share a base apart when one response appends to a header', async () => {
    const base = [...CORS, 'content-type', 'text/plain'];
    const one = withLength(base, 1);
    const two = withLength(base, 2);
    await rawReply((res) => {
      const original = res.writeHead;
      res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
        this.appendHeader('access-control-allow-origin', 'https://b.example');
        return original.apply(this, args);
      } as ServerResponse['writeHead'];
      writeHead(res, 200, one);
      res.end('x');
    });
    const other = await rawReply((res) => { writeHead(res, 200, two); res.end('xy'); });
    expect(other).toContain('\r\naccess-control-allow-origin: *\r\naccess-control-allow-methods');
    expect(other).not.toContain('b.example');
  });

  it('lets a writeHead wrapped on ServerResponse.prototype change its responses, and the head stays as it was', async () => {
    const head = withLength([...CORS, 'content-type', 'text/plain'], 1);
    const original = ServerResponse.prototype.writeHead;
    // As shimmer-based APM agents wrap it: on the prototype, adding a header to some responses.
    ServerResponse.prototype.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
      this.setHeader('x-trace', 'abc');
      return original.apply(this, args);
    } as ServerResponse['writeHead'];
    let wrappedReply: string;
    try {
      wrappedReply = await rawReply((res) => { writeHead(res, 200, head); res.end('x'); });
    } finally {
      ServerResponse.prototype.writeHead = original;
    }
    expect(wrappedReply).toContain('\r\nx-trace: abc\r\n');
    expect(wrappedReply).toContain('\r\ncontent-length: 1\r\n');
    const next = await rawReply((res) => { writeHead(res, 200, head); res.end('x'); });
    expect(next).not.toContain('x-trace');
    expect(next).toBe(await rawReply((res) => { res.writeHead(200, [...head]); res.end('x'); }));
  });

  it('writes no inherited property as a header', async () => {
    const head = withLength(CORS, 1);
    Object.defineProperty(Object.prototype, 'x-polluted', { value: ['x-polluted', 'yes'], enumerable: true, configurable: true, writable: true });
    try {
      const reply = await rawReply((res) => { writeHead(res, 200, head); res.end('x'); });
      expect(reply).not.toContain('x-polluted');
      expect(reply).toContain('\r\ncontent-length: 1\r\n');
    } finally {
      delete (Object.prototype as Record<string, unknown>)['x-polluted'];
    }
  });

  it('answers a HEAD request with the head and no body', async () => {
    const head = withLength([...CORS, 'content-type', 'text/plain'], 5);
    const reply = await rawReply((res) => { writeHead(res, 200, head); res.end('hello'); }, 'HEAD');
    expect(reply).toContain('\r\ncontent-length: 5\r\n');
    expect(reply.endsWith('\r\n\r\n')).toBe(true);
  });
});
