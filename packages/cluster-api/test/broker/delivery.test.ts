/**
 * The broker end to end on both engines: real HTTP senders and subscribers on 127.0.0.1, a real
 * SQLite file, a real nats-server. Knative's delivery contract, row by row.
 */
import { HTTP } from 'cloudevents';
import { describe, expect, it } from 'vitest';
import { decodeHeaderValue } from '../../src/broker/event/http-codec.js';
import { engineHarness, type Engine, freshNamespace, subscribersPerTest } from './setup.js';
import { binaryEvent, broker, post, trigger } from './helpers.js';
import { until } from '../../testing/src/poll.js';

const FAST = { retry: 2, backoffPolicy: 'linear', backoffDelay: 'PT0.05S' };

describe.each<Engine>(['sqlite', 'nats'])('broker delivery on %s', (engine) => {
  const h = engineHarness(engine);
  const sub = subscribersPerTest();

  it('delivers a binary event unchanged, in binary mode, with Prefer: reply and the trace context', async () => {
    const ns = freshNamespace();
    const fn = await sub();
    const { ingress } = await h.start([broker('default', {}, ns), trigger('all', { subscriber: { uri: fn.url } }, ns)]);
    const e = binaryEvent({ id: 'abc', subject: 'héllo wörld', myext: '42', comment: 'plain-ascii' }, '{"n":1}');
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const r = await post(ingress(ns), { ...e.headers, traceparent }, e.body);
    expect(r.status).toBe(202);
    const [got] = await fn.until(1);
    expect(got!.headers).toMatchObject({ 'ce-id': 'abc', 'ce-specversion': '1.0', 'ce-source': '/test', 'ce-type': 'com.example.test', 'ce-myext': '42', prefer: 'reply', traceparent, 'content-type': 'application/json' });
    expect(got!.headers['ce-knativebrokerttl']).toBeUndefined();
    expect(got!.body.toString()).toBe('{"n":1}');
    // Non-ASCII and spaces percent-encoded as the HTTP binding requires (§3.1.3.2), as Knative's sdk-go does.
    expect(decodeHeaderValue(got!.headers['ce-subject'] as string)).toBe('héllo wörld');
    expect(got!.headers['ce-subject']).toBe('h%C3%A9llo%20w%C3%B6rld');
    // A real CloudEvents SDK reads it back to the same event (it leaves header values as they are).
    const parsed = HTTP.toEvent({ headers: got!.headers as Record<string, string>, body: got!.body.toString() });
    expect(Array.isArray(parsed) ? parsed[0] : parsed).toMatchObject({ id: 'abc', comment: 'plain-ascii', myext: '42', data: { n: 1 } });
  });

  it('takes structured and batched events, splitting a batch into one delivery each', async () => {
    const ns = freshNamespace();
    const fn = await sub();
    const { ingress } = await h.start([broker('default', {}, ns), trigger('all', { subscriber: { uri: fn.url } }, ns)]);
    const one = { specversion: '1.0', id: 's1', source: '/s', type: 't', datacontenttype: 'text/plain', data: 'plain text' };
    expect((await post(ingress(ns), { 'content-type': 'application/cloudevents+json' }, JSON.stringify(one))).status).toBe(202);
    const batch = [1, 2, 3].map((i) => ({ specversion: '1.0', id: `b${i}`, source: '/s', type: 't', data: { i } }));
    batch.push({ specversion: '1.0', id: 'b64', source: '/s', type: 't', data_base64: Buffer.from([0, 1, 255]).toString('base64') } as never);
    expect((await post(ingress(ns), { 'content-type': 'application/cloudevents-batch+json' }, JSON.stringify(batch))).status).toBe(202);
    const got = await fn.until(5);
    const byId = Object.fromEntries(got.map((g) => [g.headers['ce-id'], g]));
    expect(byId.s1!.body.toString()).toBe('plain text');
    expect(byId.s1!.headers['content-type']).toBe('text/plain');
    expect(JSON.parse(byId.b2!.body.toString())).toEqual({ i: 2 });
    expect([...byId.b64!.body]).toEqual([0, 1, 255]);
  });

  it('evaluates every Trigger once per event and delivers to each that matches', async () => {
    const ns = freshNamespace();
    const [orders, eu, cesql, all] = [await sub(), await sub(), await sub(), await sub()];
    const { ingress, broker: b } = await h.start([
      broker('default', {}, ns),
      trigger('orders', { subscriber: { uri: orders.url }, filter: { attributes: { type: 'order.created' } } }, ns),
      trigger('eu', { subscriber: { uri: eu.url }, filters: [{ all: [{ prefix: { type: 'order.' } }, { exact: { region: 'eu' } }] }] }, ns),
      trigger('cesql', { subscriber: { uri: cesql.url }, filters: [{ cesql: "type LIKE '%.deleted' OR region = 'us'" }] }, ns),
      trigger('all', { subscriber: { uri: all.url } }, ns),
    ]);
    const send = (type: string, region: string) => post(ingress(ns), binaryEvent({ type, region }).headers, '{}');
    for (const [type, region] of [['order.created', 'eu'], ['order.created', 'us'], ['order.deleted', 'eu'], ['user.created', 'ap']] as const) {
      expect((await send(type, region)).status).toBe(202);
    }
    await all.until(4);
    await until('deliveries', () => b.metrics.total('delivered') === 4 + 2 + 2 + 2, { timeoutMs: 15_000 });
    expect(orders.received.map((r) => r.headers['ce-region'])).toEqual(expect.arrayContaining(['eu', 'us']));
    expect(orders.received).toHaveLength(2);
    expect(eu.received.map((r) => r.headers['ce-type']).sort()).toEqual(['order.created', 'order.deleted']);
    expect(cesql.received.map((r) => `${r.headers['ce-type']}/${r.headers['ce-region']}`).sort()).toEqual(['order.created/us', 'order.deleted/eu']);
  });

  it('re-enqueues a reply, which reaches a second Trigger filtering on its type', async () => {
    const ns = freshNamespace();
    const second = await sub();
    const first = await sub((req, _n, res) => {
      res.writeHead(200, { 'ce-specversion': '1.0', 'ce-id': `reply-${req.headers['ce-id']}`, 'ce-source': '/fn', 'ce-type': 'greeting.reply', 'content-type': 'text/plain' });
      res.end('hello back');
    });
    const { ingress, broker: b } = await h.start([
      broker('default', {}, ns),
      trigger('first', { subscriber: { uri: first.url }, filter: { attributes: { type: 'greeting' } } }, ns),
      trigger('second', { subscriber: { uri: second.url }, filter: { attributes: { type: 'greeting.reply' } } }, ns),
    ]);
    expect((await post(ingress(ns), binaryEvent({ id: 'g1', type: 'greeting' }).headers, '"hi"')).status).toBe(202);
    const [reply] = await second.until(1);
    expect(reply!.headers).toMatchObject({ 'ce-id': 'reply-g1', 'ce-type': 'greeting.reply', 'content-type': 'text/plain' });
    expect(reply!.body.toString()).toBe('hello back');
    expect(b.metrics.total('replies')).toBe(1);
  });

  it('cuts a reply loop at the hop TTL, dropping and logging the last reply', async () => {
    const ns = freshNamespace();
    let n = 0;
    const loop = await sub((_r, _i, res) => {
      res.writeHead(200, { 'ce-specversion': '1.0', 'ce-id': `loop-${n++}`, 'ce-source': '/loop', 'ce-type': 'loop' }).end();
    });
    const { ingress, broker: b, logs } = await h.start([broker('default', {}, ns), trigger('loop', { subscriber: { uri: loop.url } }, ns)]);
    expect((await post(ingress(ns), binaryEvent({ type: 'loop', knativebrokerttl: '3' }).headers, '{}')).status).toBe(202);
    await until('the dropped reply', () => b.metrics.total('dropped') === 1, { timeoutMs: 15_000 });
    expect(loop.received).toHaveLength(3);
    expect(logs.find((l) => l.msg === 'event dropped')!.fields).toMatchObject({ reason: expect.stringContaining('knativebrokerttl'), type: 'loop' });
  });

  it('retries 5xx, 404, 409 and 429 with backoff, then delivers', async () => {
    const ns = freshNamespace();
    const codes = [500, 404, 409, 429, 503];
    const fn = await sub((_r, n, res) => void res.writeHead(n < codes.length ? codes[n]! : 202).end());
    const { ingress, broker: b } = await h.start([broker('default', {}, ns), trigger('t', { subscriber: { uri: fn.url }, delivery: { ...FAST, retry: 5 } }, ns)]);
    await post(ingress(ns), binaryEvent({ id: 'r1' }).headers, '{}');
    await fn.until(6);
    await until('condition', () => b.metrics.total('delivered') === 1, { timeoutMs: 15_000 });
    expect(b.metrics.total('retried')).toBe(5);
    expect(new Set(fn.received.map((r) => r.headers['ce-id']))).toEqual(new Set(['r1']));
  });

  it('dead-letters after the last retry with knativeerrordest, knativeerrorcode and knativeerrordata', async () => {
    const ns = freshNamespace();
    const dls = await sub();
    const fn = await sub((_r, _n, res) => void res.writeHead(500, { 'content-type': 'text/plain' }).end('boom: database down'));
    const { ingress, broker: b } = await h.start([
      broker('default', { delivery: { deadLetterSink: { uri: dls.url } } }, ns),
      trigger('t', { subscriber: { uri: `${fn.url}path` }, delivery: FAST }, ns),
    ]);
    await post(ingress(ns), binaryEvent({ id: 'd1' }).headers, '{"keep":"me"}');
    const [dead] = await dls.until(1);
    expect(fn.received).toHaveLength(3);
    expect(dead!.headers).toMatchObject({ 'ce-id': 'd1', 'ce-knativeerrordest': `${fn.url}path`, 'ce-knativeerrorcode': '500', 'ce-knativeerrordata': Buffer.from('boom: database down').toString('base64') });
    expect(dead!.headers.prefer).toBeUndefined();
    expect(dead!.body.toString()).toBe('{"keep":"me"}');
    await until('condition', () => b.metrics.total('deadLettered') === 1, { timeoutMs: 15_000 });
  });

  it('does not retry a 400, and drops (counted, logged) without a dead-letter sink', async () => {
    const ns = freshNamespace();
    const fn = await sub((_r, _n, res) => void res.writeHead(400).end('bad input'));
    const { ingress, broker: b, logs } = await h.start([broker('default', {}, ns), trigger('t', { subscriber: { uri: fn.url }, delivery: FAST }, ns)]);
    await post(ingress(ns), binaryEvent({ id: 'x1', type: 'bad' }).headers, '{}');
    await until('condition', () => b.metrics.total('dropped') === 1, { timeoutMs: 15_000 });
    expect(fn.received).toHaveLength(1);
    expect(b.metrics.total('retried')).toBe(0);
    const line = logs.find((l) => l.msg === 'event dropped')!;
    expect(line.fields).toMatchObject({ id: 'x1', type: 'bad', trigger: `${ns}/t`, reason: expect.stringContaining('HTTP 400') });
    expect(JSON.stringify(line)).not.toContain('bad input');
  });

  it('treats a 202 body as no reply, and a 200 body that is not an event as a failure', async () => {
    const ns = freshNamespace();
    const accepted = await sub((_r, _n, res) => void res.writeHead(202, { 'ce-specversion': '1.0', 'ce-id': 'nope', 'ce-source': '/x', 'ce-type': 'never' }).end('x'));
    const junk = await sub((_r, n, res) => void (n === 0 ? res.writeHead(200, { 'content-type': 'application/json' }).end('{"not":"an event"}') : res.writeHead(200).end()));
    const { ingress, broker: b } = await h.start([
      broker('default', {}, ns),
      trigger('accepted', { subscriber: { uri: accepted.url }, filter: { attributes: { type: 'com.example.test' } } }, ns),
      trigger('junk', { subscriber: { uri: junk.url }, delivery: FAST, filter: { attributes: { type: 'com.example.test' } } }, ns),
    ]);
    await post(ingress(ns), binaryEvent().headers, '{}');
    await junk.until(2);
    await until('condition', () => b.metrics.total('delivered') === 2, { timeoutMs: 15_000 });
    expect(b.metrics.total('replies')).toBe(0);
    expect(b.metrics.total('retried')).toBe(1);
  });
});
