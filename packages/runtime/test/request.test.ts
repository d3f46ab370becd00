/** Request → response over a real listening server: bodies, return mapping, errors, routing, CORS. */
import { Readable } from 'node:stream';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../src/types.js';
import { serve, type Served } from './helpers/serve.js';

const echo = (context: Context, data?: unknown) => ({
  data: Buffer.isBuffer(data) ? { bytes: data.length } : data ?? null,
  method: context.method,
  path: context.path,
  url: context.url,
  query: context.query,
  httpVersion: context.httpVersion,
  major: context.httpVersionMajor,
  minor: context.httpVersionMinor,
  contentType: context.contentType ?? null,
  header: context.headers['x-test'] ?? null,
  raw: context.rawBody ? context.rawBody.toString('utf8') : null,
});

describe('request bodies and Context', () => {
  let s: Served;
  beforeAll(async () => { s = await serve(echo, { bodyLimit: 1024, includeRaw: true }); });
  afterAll(() => s.close());

  it('exposes method, path, url, query, headers and the HTTP version', async () => {
    const res = await request(s.url).get('/orders/7?x=1&x=2&y=z').set('x-test', 'yes');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ data: null, method: 'GET', path: '/orders/7', url: '/orders/7?x=1&x=2&y=z', query: { x: ['1', '2'], y: 'z' }, httpVersion: '1.1', major: 1, minor: 1, header: 'yes' });
  });

  it.each([
    ['application/json', '{"a":[1,2]}', { a: [1, 2] }],
    ['application/merge-patch+json', '{"b":null}', { b: null }],
    ['application/x-www-form-urlencoded', 'name=ann&tag=1&tag=2', { name: 'ann', tag: ['1', '2'] }],
    ['text/plain', 'plain words', 'plain words'],
    ['application/octet-stream', 'bytes!', { bytes: 6 }],
  ])('parses %s bodies for the second argument', async (type, body, expected) => {
    const res = await request(s.url).post('/').set('content-type', type).send(body);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(expected);
    expect(res.body.raw).toBe(body);
  });

  it('answers malformed JSON with a 400 problem and stays up', async () => {
    const res = await request(s.url).post('/').set('content-type', 'application/json').send('{"a":');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.body).toMatchObject({ status: 400, code: 'invalid_json', title: 'Malformed JSON body' });
    expect(res.body.detail).toMatch(/not valid JSON/);
    expect((await request(s.url).get('/')).status).toBe(200);
  });

  it('answers a body over the limit with 413, by content-length', async () => {
    const res = await request(s.url).post('/').set('content-type', 'text/plain').send('x'.repeat(2048));
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ status: 413, code: 'payload_too_large' });
    expect((await request(s.url).get('/')).status).toBe(200);
  });

  it('answers a chunked body over the limit with 413, for every content type', async () => {
    for (const type of ['application/json', 'application/octet-stream', 'application/x-www-form-urlencoded']) {
      const res = await fetch(`${s.url}/`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: new ReadableStream({ start(c) { c.enqueue(new Uint8Array(800)); c.enqueue(new Uint8Array(800)); c.close(); } }),
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(413);
      expect(((await res.json()) as { code: string }).code).toBe('payload_too_large');
    }
    expect((await request(s.url).get('/')).status).toBe(200);
  });

  it('accepts a body exactly at the limit', async () => {
    const res = await request(s.url).post('/').set('content-type', 'text/plain').send('y'.repeat(1024));
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1024);
  });

  it('routes every path and method to handle', async () => {
    for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
      const res = await request(s.url)[method]('/any/deep/path');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ method: method.toUpperCase(), path: '/any/deep/path' });
    }
  });
});

describe('the default body limit is 1 MiB', () => {
  let s: Served;
  beforeAll(async () => { s = await serve((_c, data) => ({ length: String(data).length })); });
  afterAll(() => s.close());

  it('accepts 1 MiB of JSON (Express json() would stop at 100 KB) and rejects more', async () => {
    const big = JSON.stringify('a'.repeat(1_048_576 - 2));
    expect((await request(s.url).post('/').set('content-type', 'application/json').send(big)).status).toBe(200);
    const res = await request(s.url).post('/').set('content-type', 'application/json').send(JSON.stringify('a'.repeat(1_048_576)));
    expect(res.status).toBe(413);
  });
});

describe('the body is read before handle runs', () => {
  let s: Served;
  let calls = 0;
  beforeAll(async () => {
    s = await serve((context: Context) => {
      calls++;
      return { seen: context.body as never };
    });
  });
  afterAll(() => s.close());

  it('a malformed body is a 400 before handle runs, whatever its parameters (as faas-js-runtime answers)', async () => {
    const res = await request(s.url).post('/').set('content-type', 'application/json').send('{broken');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_json');
    expect(calls).toBe(0);
  });

  it('{ ...context } and JSON.stringify(context) copy the request fields, never the socket', async () => {
    const t = await serve((context: Context) => ({ spread: { ...context }, json: JSON.parse(JSON.stringify(context)) }));
    try {
      const res = await request(t.url).post('/orders/7?x=1').set('content-type', 'application/json').send('{"a":1}');
      expect(res.status).toBe(200);
      for (const copy of [res.body.spread, res.body.json]) {
        expect(copy).toMatchObject({ body: { a: 1 }, query: { x: '1' }, method: 'POST', httpVersion: '1.1', path: '/orders/7', url: '/orders/7?x=1', contentType: 'application/json' });
        expect(copy.headers['content-type']).toBe('application/json');
        expect(copy).not.toHaveProperty('req');
      }
      expect(res.body.json.log).toEqual({ level: 'silent' });
    } finally {
      await t.close();
    }
  });
});

describe('return value mapping', () => {
  const cases: [string, () => unknown, number, string | undefined, string | undefined][] = [
    ['undefined → 204', () => undefined, 204, undefined, ''],
    ['null → 204', () => null, 204, undefined, ''],
    ['string → text/plain', () => 'hi', 200, 'text/plain; charset=utf-8', 'hi'],
    ['html string is still text/plain', () => '<b>x</b>', 200, 'text/plain; charset=utf-8', '<b>x</b>'],
    ['Buffer → octet-stream', () => Buffer.from('bin'), 200, 'application/octet-stream', 'bin'],
    ['object → JSON', () => ({ a: 1 }), 200, 'application/json; charset=utf-8', '{"a":1}'],
    ['array → JSON', () => [1, 'two'], 200, 'application/json; charset=utf-8', '[1,"two"]'],
    ['number → JSON', () => 42, 200, 'application/json; charset=utf-8', '42'],
    ['structured with status and headers', () => ({ statusCode: 201, headers: { 'X-Made': 'yes' }, body: { id: 7 } }), 201, 'application/json; charset=utf-8', '{"id":7}'],
    ['structured string body', () => ({ statusCode: 202, body: 'queued' }), 202, 'text/plain; charset=utf-8', 'queued'],
    ['structured without body', () => ({ statusCode: 404 }), 404, undefined, ''],
    ['headers without statusCode or body: sent, the object as JSON', () => ({ headers: { 'X-Made': 'yes' }, message: 'hi' }), 200, 'application/json; charset=utf-8', '{"headers":{"X-Made":"yes"},"message":"hi"}'],
    ['structured problem+json object', () => ({ statusCode: 409, headers: { 'content-type': 'application/problem+json' }, body: { title: 'conflict' } }), 409, 'application/problem+json', '{"title":"conflict"}'],
    ['structured custom text type', () => ({ body: '<p>ok</p>', headers: { 'Content-Type': 'text/html' } }), 200, 'text/html', '<p>ok</p>'],
    ['async value', async () => 'later', 200, 'text/plain; charset=utf-8', 'later'],
    ['readable stream', () => Readable.from(['stre', 'amed']), 200, 'application/octet-stream', 'streamed'],
    ['structured stream body', () => ({ statusCode: 206, headers: { 'content-type': 'text/csv' }, body: Readable.from(['a,b\n']) }), 206, 'text/csv', 'a,b\n'],
  ];
  let s: Served;
  beforeAll(async () => {
    s = await serve((context: Context) => cases[Number(context.query.i)]![1]());
  });
  afterAll(() => s.close());

  it.each(cases.map((c, i) => [c[0], i, c[2], c[3], c[4]] as const))('%s', async (name, i, status, type, text) => {
    const res = await request(s.url).get(`/?i=${i}`).buffer(true).parse((r, cb) => { let d = ''; r.setEncoding('utf8'); r.on('data', (c: string) => (d += c)); r.on('end', () => cb(null, d)); });
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe(type);
    expect(res.body).toBe(text);
    if (/X-Made/i.test(String(cases[i]![1].toString()))) expect(res.headers['x-made']).toBe('yes');
    if (!name.includes('stream')) expect(res.headers['transfer-encoding']).toBeUndefined();
  });
});

describe('thrown errors', () => {
  const errors: Record<string, () => unknown> = {
    statusCode: () => { throw Object.assign(new Error('no such order'), { statusCode: 404 }); },
    status: () => { throw Object.assign(new Error('conflict here'), { status: 409 }); },
    code: () => { throw Object.assign(new Error('bad teapot'), { code: 418 }); },
    enoent: () => { throw Object.assign(new Error('open /etc/secret-path failed'), { code: 'ENOENT' }); },
    plain: () => { throw new Error('db password=hunter2 rejected'); },
    outOfRange: () => { throw Object.assign(new Error('weird'), { statusCode: 302 }); },
    unavailable: () => { throw Object.assign(new Error('upstream down'), { statusCode: 503 }); },
    rejects: () => Promise.reject(Object.assign(new Error('async 422'), { statusCode: 422 })),
    string: () => { throw 'a string'; },
  };
  let s: Served;
  beforeAll(async () => { s = await serve((context: Context) => errors[String(context.query.e)]!()); });
  afterAll(() => s.close());

  it.each([
    ['statusCode', 404, 'function_error', 'no such order'],
    ['status', 409, 'function_error', 'conflict here'],
    ['code', 418, 'function_error', 'bad teapot'],
    ['rejects', 422, 'function_error', 'async 422'],
    ['enoent', 500, 'internal_error', undefined],
    ['plain', 500, 'internal_error', undefined],
    ['outOfRange', 500, 'internal_error', undefined],
    ['string', 500, 'internal_error', undefined],
    ['unavailable', 503, 'function_unavailable', undefined],
  ])('%s → %i', async (e, status, code, detail) => {
    const res = await request(s.url).get(`/?e=${e}`);
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.body).toMatchObject({ status, code });
    if (detail) expect(res.body.detail).toBe(detail);
    else {
      expect(res.text).not.toMatch(/secret-path|hunter2|upstream down|at .*\.ts:\d+/);
      expect(res.body.detail).toMatch(/see the log entry with reqId/);
    }
  });
});

describe('CORS', () => {
  it('allows every origin by default and answers preflight itself', async () => {
    const s = await serve(() => 'x');
    try {
      const res = await request(s.url).get('/').set('origin', 'https://a.example');
      expect(res.headers['access-control-allow-origin']).toBe('*');
      const pre = await request(s.url).options('/').set('origin', 'https://a.example').set('access-control-request-method', 'PUT').set('access-control-request-headers', 'x-custom');
      expect(pre.status).toBe(204);
      expect(pre.headers['access-control-allow-methods']).toContain('PUT');
      expect(pre.headers['access-control-allow-headers']).toBe('x-custom');
    } finally { await s.close(); }
  });

  it('with cors() echoes only listed origins', async () => {
    const s = await serve({ handle: () => 'x', cors: () => ['https://ok.example'] });
    try {
      const ok = await request(s.url).get('/').set('origin', 'https://ok.example');
      expect(ok.headers['access-control-allow-origin']).toBe('https://ok.example');
      expect(ok.headers.vary).toBe('origin');
      const no = await request(s.url).get('/').set('origin', 'https://evil.example');
      expect(no.headers['access-control-allow-origin']).toBeUndefined();
      const pre = await request(s.url).options('/').set('origin', 'https://evil.example').set('access-control-request-method', 'POST');
      expect(pre.status).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    } finally { await s.close(); }
  });

  it('an OPTIONS request that is not a preflight reaches handle', async () => {
    const s = await serve((c: Context) => `handled ${c.method}`);
    try {
      const res = await request(s.url).options('/');
      expect(res.status).toBe(200);
      expect(res.text).toBe('handled OPTIONS');
    } finally { await s.close(); }
  });
});
