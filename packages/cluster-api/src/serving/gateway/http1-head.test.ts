import { describe, expect, it } from 'vitest';
import { ChunkScanner, HeadEnd, parseRequestHead, parseResponseHead } from './http1-head.js';
import { prefersAsync } from './async.js';

const req = (text: string) => {
  const buf = Buffer.from(text, 'latin1');
  return parseRequestHead(buf, buf.indexOf(HeadEnd), prefersAsync);
};
const res = (text: string) => {
  const buf = Buffer.from(text, 'latin1');
  return parseResponseHead(buf, buf.indexOf(HeadEnd));
};

describe('parseRequestHead', () => {
  it('takes a plain request: method, target, host, length; passes the end-to-end headers as they came', () => {
    const head = req('POST /a?b=1 HTTP/1.1\r\nHost: fn.default.localhost\r\nContent-Length: 5\r\nX-Thing:  v  \r\nConnection: keep-alive, x-hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\nX-Forwarded-For: 10.0.0.1\r\nX-Forwarded-For: 10.0.0.2\r\n\r\nhello');
    expect(head).toEqual({
      method: 'POST', target: '/a?b=1', host: 'fn.default.localhost', contentLength: 5, close: false,
      passed: ['Content-Length: 5', 'X-Thing: v'], forwardedFor: '10.0.0.1, 10.0.0.2',
    });
  });

  it('tells a client that asks to close', () => {
    expect(req('GET / HTTP/1.1\r\nHost: a\r\nConnection: Close\r\n\r\n')?.close).toBe(true);
  });

  it('keeps a Prefer that does not ask for respond-async', () => {
    expect(req('GET / HTTP/1.1\r\nHost: a\r\nPrefer: return=minimal\r\n\r\n')?.passed).toEqual(['Prefer: return=minimal']);
  });

  it.each([
    ['HTTP/1.0', 'GET / HTTP/1.0\r\nHost: a\r\n\r\n'],
    ['an unknown method', 'FOO / HTTP/1.1\r\nHost: a\r\n\r\n'],
    ['a lower-case method', 'get / HTTP/1.1\r\nHost: a\r\n\r\n'],
    ['CONNECT', 'CONNECT a:80 HTTP/1.1\r\nHost: a\r\n\r\n'],
    ['an absolute target', 'GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n'],
    ['an asterisk target', 'OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n'],
    ['a space in the target', 'GET /a b HTTP/1.1\r\nHost: a\r\n\r\n'],
    ['no Host', 'GET / HTTP/1.1\r\nX: y\r\n\r\n'],
    ['two Hosts', 'GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n'],
    ['an empty Host', 'GET / HTTP/1.1\r\nHost: \r\n\r\n'],
    ['Transfer-Encoding', 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n'],
    ['Content-Length with Transfer-Encoding', 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n'],
    ['Content-Length twice', 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n'],
    ['Content-Length not digits', 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\n'],
    ['Content-Length a list', 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\n'],
    ['Upgrade', 'GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n'],
    ['Expect', 'POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n'],
    ['TE', 'GET / HTTP/1.1\r\nHost: a\r\nTE: trailers\r\n\r\n'],
    ['Prefer: respond-async', 'POST / HTTP/1.1\r\nHost: a\r\nPrefer: wait=1, respond-async\r\n\r\n'],
    ['obs-fold', 'GET / HTTP/1.1\r\nHost: a\r\nX: b\r\n c\r\n\r\n'],
    ['a space before the colon', 'GET / HTTP/1.1\r\nHost : a\r\n\r\n'],
    ['a line without a colon', 'GET / HTTP/1.1\r\nHost: a\r\nnonsense\r\n\r\n'],
    ['a bare LF', 'GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n'],
    ['a bare CR', 'GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n'],
    ['a control byte in a value', 'GET / HTTP/1.1\r\nHost: a\r\nX: b\x00c\r\n\r\n'],
    ['an empty line first', '\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n'],
    ['too many headers', `GET / HTTP/1.1\r\nHost: a\r\n${'X: y\r\n'.repeat(100)}\r\n`],
    ['a head over 8 KiB', `GET / HTTP/1.1\r\nHost: a\r\nX: ${'y'.repeat(8192)}\r\n\r\n`],
  ])('leaves %s to node:http', (_what, text) => {
    expect(req(text)).toBeUndefined();
  });
});

describe('parseResponseHead', () => {
  it('passes the status line and end-to-end headers, dropping this hop\'s', () => {
    expect(res('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: keep-alive, x-hop\r\nKeep-Alive: timeout=5\r\nX-Hop: 1\r\nProxy-Authenticate: x\r\n\r\nok')).toEqual({
      status: 200, head: 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2', contentLength: 2, chunked: false, close: false,
    });
  });

  it('keeps chunked framing; tells a pod that closes or speaks HTTP/1.0', () => {
    expect(res('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n')).toMatchObject({ chunked: true, close: true, head: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked' });
    expect(res('HTTP/1.0 204 No Content\r\n\r\n')).toMatchObject({ status: 204, close: true, head: 'HTTP/1.1 204 No Content' });
    expect(res('HTTP/1.1 200\r\n\r\n')).toMatchObject({ status: 200, head: 'HTTP/1.1 200 ' });
  });

  it.each([
    ['a bad status line', 'HTTP/1.1 2000 OK\r\n\r\n'],
    ['HTTP/2', 'HTTP/2 200 OK\r\n\r\n'],
    ['no status line', 'hello\r\n\r\n'],
    ['Content-Length with chunked', 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n'],
    ['Content-Length twice', 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n'],
    ['Content-Length not digits', 'HTTP/1.1 200 OK\r\nContent-Length: 0x3\r\n\r\n'],
    ['a coding other than chunked', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n'],
    ['chunked from HTTP/1.0', 'HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'],
    ['obs-fold', 'HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n'],
    ['a bare LF', 'HTTP/1.1 200 OK\nX: a\r\n\r\n'],
    ['a head over 16 KiB', `HTTP/1.1 200 OK\r\nX: ${'y'.repeat(16 * 1024)}\r\n\r\n`],
  ])('refuses %s', (_what, text) => {
    expect(res(text)).toBeUndefined();
  });
});

describe('ChunkScanner', () => {
  const body = '4\r\nWiki\r\n5;ext=1\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-Trailer: yes\r\n\r\n';

  it('finds the end of a chunked body with extensions and trailers, byte by byte as well as at once', () => {
    const all = Buffer.from(`${body}NEXT`);
    expect(new ChunkScanner().scan(all)).toBe(body.length);
    const s = new ChunkScanner();
    const ends = [...all].map((_, i) => s.scan(all.subarray(i, i + 1)));
    expect(ends.indexOf(1)).toBe(body.length - 1);
    expect(ends.slice(0, body.length - 1).every((e) => e === -1)).toBe(true);
  });

  it('scans from an offset, and again after an end', () => {
    const s = new ChunkScanner();
    const two = Buffer.from('xx0\r\n\r\n1\r\na\r\n0\r\n\r\n');
    expect(s.scan(two, 2)).toBe(7);
    expect(s.scan(two, 7)).toBe(two.length);
  });

  it.each([
    ['a size that is not hex', 'g\r\n'],
    ['no size', '\r\n'],
    ['a size too large', '1000000000000\r\n'],
    ['a bare LF after the size', '1\na\r\n'],
    ['data longer than its size', '1\r\nab\r\n'],
    ['a control byte in an extension', '1;\x01\r\n'],
    ['an obs-folded trailer', '0\r\n folded\r\n\r\n'],
    ['a bare LF at the end', '0\r\n\n'],
  ])('refuses %s', (_what, text) => {
    expect(new ChunkScanner().scan(Buffer.from(text))).toBe(-2);
  });
});
