/** CloudEvents in (binary, structured, batch) and out (binary), and every malformed event → 400. */
import { CloudEvent, HTTP } from 'cloudevents';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../src/types.js';
import { serve, type Served } from './helpers/serve.js';

const binaryHeaders = { 'ce-specversion': '1.0', 'ce-id': 'e-1', 'ce-source': '/orders', 'ce-type': 'order.created', 'content-type': 'application/json' };

describe('CloudEvents in', () => {
  let s: Served;
  const seen: { data: unknown; event: unknown }[] = [];
  beforeAll(async () => {
    s = await serve((context: Context, data?: unknown) => {
      seen.push({ data, event: context.cloudevent });
      return { data: data ?? null, id: context.cloudevent?.id, ext: context.cloudevent?.myext ?? null };
    });
  });
  afterAll(() => s.close());

  it('binary mode: the second argument is the parsed data, context.cloudevent the event', async () => {
    const res = await request(s.url).post('/').set({ ...binaryHeaders, 'ce-myext': 'v' }).send('{"order":7}');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { order: 7 }, id: 'e-1', ext: 'v' });
    expect(seen.at(-1)!.event).toMatchObject({ specversion: '1.0', id: 'e-1', source: '/orders', type: 'order.created' });
  });

  it('structured mode', async () => {
    const event = { specversion: '1.0', id: 's-1', source: '/s', type: 't', datacontenttype: 'application/json', data: { n: 1 } };
    const res = await request(s.url).post('/').set('content-type', 'application/cloudevents+json').send(JSON.stringify(event));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { n: 1 }, id: 's-1', ext: null });
  });

  it('an event made by the SDK itself round-trips', async () => {
    const msg = HTTP.binary(new CloudEvent({ source: '/sdk', type: 'sdk.type', data: { ok: true } }));
    const res = await request(s.url).post('/').set(msg.headers as Record<string, string>).send(msg.body as string);
    expect(res.body.data).toEqual({ ok: true });
  });

  it('batch mode calls handle once per event', async () => {
    const before = seen.length;
    const batch = [1, 2, 3].map((n) => ({ specversion: '1.0', id: `b-${n}`, source: '/b', type: 't', data: { n } }));
    const res = await request(s.url).post('/').set('content-type', 'application/cloudevents-batch+json').send(JSON.stringify(batch));
    expect(res.status).toBe(204);
    expect(seen.slice(before).map((x) => x.data)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  });

  it.each([
    ['ce-specversion without ce-id', { 'ce-specversion': '1.0', 'ce-source': '/x', 'ce-type': 't' }, '', /ce-id/],
    ['ce-specversion without ce-source', { 'ce-specversion': '1.0', 'ce-id': '1', 'ce-type': 't' }, '', /ce-source/],
    ['ce-specversion without ce-type', { 'ce-specversion': '1.0', 'ce-id': '1', 'ce-source': '/x' }, '', /ce-type/],
    ['unknown spec version (binary)', { ...binaryHeaders, 'ce-specversion': '9.9' }, '{}', /ce-specversion "9\.9" is not supported/],
    ['unknown spec version (structured)', { 'content-type': 'application/cloudevents+json' }, '{"specversion":"2.0","id":"1","source":"/s","type":"t"}', /specversion "2\.0" is not supported/],
    ['malformed structured JSON', { 'content-type': 'application/cloudevents+json' }, '{"specversion":"1.0",', /not valid JSON/],
    ['structured event without source', { 'content-type': 'application/cloudevents+json' }, '{"specversion":"1.0","id":"1","type":"t"}', /source/],
    ['empty structured body', { 'content-type': 'application/cloudevents+json' }, '', /not valid JSON/],
    ['malformed binary JSON data', binaryHeaders, '{"a":', /event data is not valid JSON/],
    ['batch that is not an array of events', { 'content-type': 'application/cloudevents-batch+json' }, '[{"id":"1"}]', /Batch entry 0 is invalid/],
  ])('%s → 400 with the reason', async (_name, headers, body, reason) => {
    const res = await request(s.url).post('/').set(headers as Record<string, string>).send(body);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.body.code).toBe('invalid_cloudevent');
    expect(res.body.detail).toMatch(reason);
    expect((await request(s.url).get('/')).status).toBe(200);
  });
});

describe('CloudEvents out', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve((context: Context, data?: unknown) => {
      const mode = context.query.mode;
      if (mode === 'builder') return context.cloudEventResponse({ got: data ?? null }).id('r-1').source('/fn').type('fn.reply').version('1.0').response();
      if (mode === 'sdk') return new CloudEvent({ source: '/sdk', type: 'sdk.reply', data: 'text data', datacontenttype: 'text/plain' });
      if (mode === 'foreign') return Object.freeze({ specversion: '1.0', id: 'f-1', source: '/foreign', type: 'foreign.reply', data: { x: 1 } });
      if (mode === 'invalid') return { specversion: '1.0', id: '', source: '', type: 'bad' };
      if (mode === 'unfinished') return context.cloudEventResponse('no source').type('t').response();
      return undefined;
    });
  });
  afterAll(() => s.close());

  it('cloudEventResponse(...).response() → binary-mode response, also to a plain HTTP request', async () => {
    const res = await request(s.url).get('/?mode=builder');
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({ 'ce-id': 'r-1', 'ce-source': '/fn', 'ce-type': 'fn.reply', 'ce-specversion': '1.0' });
    expect(JSON.parse(res.text)).toEqual({ got: null });
  });

  it('answers an event with an event', async () => {
    const res = await request(s.url).post('/?mode=builder').set(binaryHeaders).send('{"q":1}');
    expect(res.headers['ce-type']).toBe('fn.reply');
    expect(JSON.parse(res.text)).toEqual({ got: { q: 1 } });
  });

  it('an SDK CloudEvent keeps its content type', async () => {
    const res = await request(s.url).get('/?mode=sdk');
    expect(res.headers['ce-type']).toBe('sdk.reply');
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('text data');
  });

  it('recognises an event that is not an instance of our SDK', async () => {
    const res = await request(s.url).get('/?mode=foreign');
    expect(res.headers).toMatchObject({ 'ce-id': 'f-1', 'ce-source': '/foreign' });
    expect(JSON.parse(res.text)).toEqual({ x: 1 });
  });

  it('an invalid returned event is a 500 invalid_response, not a crash', async () => {
    const res = await request(s.url).get('/?mode=invalid');
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('invalid_response');
    expect((await request(s.url).get('/?mode=builder')).status).toBe(200);
  });

  it('response() without a source throws inside handle → 500', async () => {
    const res = await request(s.url).get('/?mode=unfinished');
    expect(res.status).toBe(500);
  });

  it('a batch of events answered with events → batch reply', async () => {
    const batch = [1, 2].map((n) => ({ specversion: '1.0', id: `b-${n}`, source: '/b', type: 't', data: { n } }));
    const res = await request(s.url).post('/?mode=builder').set('content-type', 'application/cloudevents-batch+json').send(JSON.stringify(batch));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/cloudevents-batch+json');
    const events = JSON.parse(res.text) as { type: string; data: unknown }[];
    expect(events.map((e) => e.data)).toEqual([{ got: { n: 1 } }, { got: { n: 2 } }]);
  });
});
