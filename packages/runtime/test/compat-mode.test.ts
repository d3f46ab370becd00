/**
 * Compatibility mode (FUNC_COMPAT=faas-js-runtime, start({ compat }), or installed under the name
 * faas-js-runtime): every deliberate difference from faas-js-runtime 4 (helpers/differences.ts)
 * either disappears, compared against faas-js-runtime itself, or is one the mode keeps, for the
 * reason the row gives.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { differences } from './helpers/differences.js';
import { closeServers, get, observe, observeRow, post, serveWith } from './helpers/peers.js';

afterEach(closeServers);

const compat = { compat: 'faas-js-runtime' } as const;

describe('in compatibility mode, a function written for faas-js-runtime 4 gets what it got there', () => {
  it.each(differences.filter((r) => r.compat === 'same').map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    row.faas(await observeRow('ours', row, compat));
  });

  it.each(differences.filter((r) => r.compat !== 'same').map((r) => [r.name, r] as const))('%s: kept', async (_name, row) => {
    expect((row.compat as { kept: string }).kept.length).toBeGreaterThan(20);
    row.ours(await observeRow('ours', row, compat));
  });
});

describe('compatibility mode, beyond the differences table', () => {
  it('a falsy return is a 204 with Content-Type text/plain, as faas-js-runtime\'s own suite expects', async () => {
    for (const value of ['', 0, false, null]) {
      const o = await observe(await get()(await serveWith('ours', () => value, compat)), ['access-control-allow-origin']);
      expect([o.status, o.type, o.body, o.headers['access-control-allow-origin']]).toEqual([204, 'text/plain', '', '*']);
    }
  });

  it('{ ...context } answers 200 with the request fields, as faas-js-runtime answered', async () => {
    const fn = (c: object) => ({ ...c });
    for (const runtime of ['faas', 'ours'] as const) {
      const o = await observe(await get('/?q=1', { 'x-h': 'yes' })(await serveWith(runtime, fn, runtime === 'ours' ? compat : {})));
      expect(o.status).toBe(200);
      expect(JSON.parse(o.body)).toMatchObject({ query: { q: '1' }, q: '1', method: 'GET', httpVersion: '1.1', headers: { 'x-h': 'yes' } });
    }
  });

  it('a structured CloudEvent: context.body is its JSON text, the second argument the event', async () => {
    const event = JSON.stringify({ specversion: '1.0', id: 's-1', source: '/s', type: 't', data: { k: 'v' } });
    const fn = (c: { body?: unknown }, e: { id: string; data: unknown }) => ({ contextBody: c.body, id: e.id, data: e.data });
    for (const runtime of ['faas', 'ours'] as const) {
      const o = await observe(await post(event, { 'content-type': 'application/cloudevents+json' })(await serveWith(runtime, fn, runtime === 'ours' ? compat : {})));
      expect(JSON.parse(o.body)).toEqual({ contextBody: event, id: 's-1', data: { k: 'v' } });
    }
  });

  it('a query parameter named __proto__ cannot replace the context\'s prototype', async () => {
    const o = await observe(await get('/?__proto__=a&__proto__=b&x=1')(await serveWith('ours', (c: { x?: string; reqId: string }) => ({ x: c.x, id: typeof c.reqId }), compat)));
    expect(JSON.parse(o.body)).toEqual({ x: '1', id: 'string' });
  });
});
