import { describe, expect, it } from 'vitest';
import { createTestContext, invoke } from './testing.js';
import type { Context } from './types.js';

describe('createTestContext', () => {
  it('builds a Context from a plain description', () => {
    const ctx = createTestContext({ method: 'post', path: '/x', query: { a: '1' }, headers: { 'X-Key': 'v' }, body: { n: 1 } });
    expect(ctx.method).toBe('POST');
    expect(ctx.path).toBe('/x');
    expect(ctx.url).toBe('/x?a=1');
    expect(ctx.query).toEqual({ a: '1' });
    expect(ctx.headers['x-key']).toBe('v');
    expect(ctx.body).toEqual({ n: 1 });
    expect(ctx.rawBody?.toString()).toBe('{"n":1}');
    expect(ctx.httpVersion).toBe('1.1');
    expect(ctx.signal.aborted).toBe(false);
    expect(typeof ctx.log.info).toBe('function');
  });

  it('leaves rawBody undefined unless includeRaw is on', () => {
    expect(createTestContext({ body: 'x' }, { includeRaw: false }).rawBody).toBeUndefined();
  });

  it('carries a CloudEvent with defaults for the required attributes', () => {
    const ctx = createTestContext({ cloudevent: { type: 'order.created', data: { id: 3 } } });
    expect(ctx.cloudevent).toMatchObject({ specversion: '1.0', type: 'order.created', source: '/test', data: { id: 3 } });
    expect(ctx.cloudevent?.id).toMatch(/[0-9a-f-]{36}/);
  });

  it('cloudEventResponse builds a CloudEvent', () => {
    const ev = createTestContext().cloudEventResponse({ ok: 1 }).id('i').source('/s').type('t').version('1.0').response();
    expect(ev).toMatchObject({ id: 'i', source: '/s', type: 't', specversion: '1.0', data: { ok: 1 } });
  });

  it('a malformed JSON body throws invalid_json, as the server answers it before handle runs', () => {
    expect(() => createTestContext({ headers: { 'content-type': 'application/json' }, body: '{oops' })).toThrow(/not valid JSON/);
  });
});

describe('invoke', () => {
  const echo = (c: Context, data?: unknown) => ({ data: data ?? null, method: c.method, type: c.cloudevent?.type ?? null });

  it('runs the runtime pipeline and maps the response', async () => {
    expect(await invoke(echo, { body: { a: 1 } })).toMatchObject({ statusCode: 200, body: { data: { a: 1 }, method: 'POST', type: null } });
    expect(await invoke(() => 'hi')).toMatchObject({ statusCode: 200, body: 'hi', headers: { 'content-type': 'text/plain; charset=utf-8' } });
    expect(await invoke(() => undefined)).toMatchObject({ statusCode: 204 });
  });

  it('passes CloudEvent data as the second argument', async () => {
    const res = await invoke(echo, { cloudevent: { type: 'x.y', data: { z: 1 } } });
    expect(res.body).toEqual({ data: { z: 1 }, method: 'POST', type: 'x.y' });
  });

  it('answers an event with an event in binary mode', async () => {
    const res = await invoke((c: Context) => c.cloudEventResponse('pong').source('/t').type('pong').response(), { cloudevent: { type: 'ping' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['ce-type']).toBe('pong');
  });

  it('maps thrown errors and malformed input like the server', async () => {
    expect(await invoke(() => { throw Object.assign(new Error('nope'), { statusCode: 403 }); })).toMatchObject({ statusCode: 403, body: { code: 'function_error', detail: 'nope' } });
    expect(await invoke(() => { throw new Error('internal'); })).toMatchObject({ statusCode: 500, body: { code: 'internal_error' } });
    expect(await invoke(echo, { headers: { 'content-type': 'application/json' }, body: '{bad' })).toMatchObject({ statusCode: 400, body: { code: 'invalid_json' } });
    expect(await invoke(echo, { body: 'x'.repeat(100) }, { bodyLimit: 10 })).toMatchObject({ statusCode: 413, body: { code: 'payload_too_large' } });
  });

  it('runs a Function object\'s handle', async () => {
    expect(await invoke({ handle: () => ({ statusCode: 201, body: 'made' }) })).toMatchObject({ statusCode: 201, body: 'made' });
  });
});
