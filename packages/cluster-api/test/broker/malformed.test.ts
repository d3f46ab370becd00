/**
 * Every malformed input ends in a 4xx or a status condition saying why, with nothing lost and the
 * broker still serving: invalid events, unknown brokers, oversized bodies, congestion, bad filters,
 * unresolvable subscribers, bad delivery specs, Triggers of a Broker that does not exist.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { functionResolver } from '../../src/broker/resolver.js';
import { readyCondition } from '../../src/broker/status/conditions.js';
import type { StaticTriggerSource } from '../../src/broker/source.js';
import type { Condition } from '../../src/broker/types.js';
import { binaryEvent, broker, post, type Subscriber, subscriber, trigger } from './helpers.js';
import { engineHarness, freshNamespace } from './setup.js';

const h = engineHarness('sqlite');
const subs: Subscriber[] = [];
afterEach(async () => {
  for (const s of subs.splice(0)) await s.close();
});
async function sub() {
  const s = await subscriber();
  subs.push(s);
  return s;
}

function condition(source: StaticTriggerSource, ns: string, name: string, type: string): Condition | undefined {
  return source.trigger(ns, name)?.status?.conditions?.find((c) => c.type === type);
}

describe('ingress refuses what is not a valid CloudEvent, with the reason', () => {
  const valid = () => binaryEvent().headers;
  it.each([
    ['no specversion', () => ({ ...valid(), 'ce-specversion': undefined }), 400, 'no ce-specversion header'],
    ['specversion 0.3', () => ({ ...valid(), 'ce-specversion': '0.3' }), 400, 'specversion "0.3" is not supported'],
    ['no id', () => ({ ...valid(), 'ce-id': undefined }), 400, 'missing required attribute id'],
    ['empty type', () => ({ ...valid(), 'ce-type': '' }), 400, 'type must not be empty'],
    ['bad time', () => ({ ...valid(), 'ce-time': '2024-13-01T00:00:00Z' }), 400, 'not an RFC 3339 timestamp'],
    ['source with a space', () => ({ ...valid(), 'ce-source': 'a b' }), 400, 'not a URI-reference'],
    ['upper-case attribute', () => ({ ...valid(), 'ce-Bad_Name': 'x' }), 400, 'not lower-case letters and digits'],
    ['relative dataschema', () => ({ ...valid(), 'ce-dataschema': '/schema' }), 400, 'not an absolute URI'],
  ] as const)('%s → %s', async (_name, headers, status, reason) => {
    const ns = freshNamespace();
    const fn = await sub();
    const { ingress, broker: b } = await h.start([broker('default', {}, ns), trigger('t', { subscriber: { uri: fn.url } }, ns)]);
    const clean = Object.fromEntries(Object.entries(headers()).filter(([, v]) => v !== undefined)) as Record<string, string>;
    const r = await post(ingress(ns), clean, '{}');
    expect(r.status).toBe(status);
    expect(r.headers.get('content-type')).toBe('application/problem+json');
    expect(JSON.parse(r.text)).toMatchObject({ status, detail: expect.stringContaining(reason) });
    // Still serving, and the refused event went nowhere.
    expect((await post(ingress(ns), valid(), '{}')).status).toBe(202);
    await fn.until(1);
    expect(fn.received).toHaveLength(1);
    expect(b.metrics.total('rejected')).toBe(1);
  });

  it.each([
    ['structured: not JSON', 'application/cloudevents+json', '{"specversion":', 400, 'not valid JSON'],
    ['structured: an array', 'application/cloudevents+json', '[]', 400, 'not a JSON object'],
    ['structured: data and data_base64', 'application/cloudevents+json', '{"specversion":"1.0","id":"1","source":"/","type":"t","data":1,"data_base64":"AA=="}', 400, 'both data and data_base64'],
    ['structured: numeric id', 'application/cloudevents+json', '{"specversion":"1.0","id":1,"source":"/","type":"t"}', 400, 'id must be a string'],
    ['structured: object extension', 'application/cloudevents+json', '{"specversion":"1.0","id":"1","source":"/","type":"t","ext":{}}', 400, 'must be a string, an integer or a boolean'],
    ['batch: not an array', 'application/cloudevents-batch+json', '{}', 400, 'must be a JSON array'],
    ['batch: one bad event', 'application/cloudevents-batch+json', '[{"specversion":"1.0","id":"1","source":"/","type":"t"},{"specversion":"1.0","source":"/","type":"t"}]', 400, 'event 1 of the batch: missing required attribute id'],
    ['avro', 'application/cloudevents+avro', 'xx', 415, 'not supported'],
  ] as const)('%s → %s', async (_n, type, body, status, reason) => {
    const ns = freshNamespace();
    const fn = await sub();
    const { ingress } = await h.start([broker('default', {}, ns), trigger('t', { subscriber: { uri: fn.url } }, ns)]);
    const r = await post(ingress(ns), { 'content-type': type }, body);
    expect(r.status).toBe(status);
    expect(JSON.parse(r.text).detail).toContain(reason);
    // A batch is all or nothing: its valid first event was not stored either.
    expect((await post(ingress(ns), binaryEvent({ id: 'after' }).headers, '{}')).status).toBe(202);
    const [first] = await fn.until(1);
    expect(first!.headers['ce-id']).toBe('after');
  });

  it('answers 404 for an unknown broker or path, 405 for other methods, 204 to OPTIONS', async () => {
    const ns = freshNamespace();
    const { ingress, broker: b } = await h.start([broker('default', {}, ns)]);
    const missing = await post(ingress(ns, 'nope'), binaryEvent().headers, '{}');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text).detail).toBe(`broker ${ns}/nope does not exist`);
    expect((await post(`${b.url}/only-one-segment`, binaryEvent().headers, '{}')).status).toBe(404);
    expect((await post(`${b.url}/%E0%A4%A/x`, binaryEvent().headers, '{}')).status).toBe(404);
    const get = await fetch(ingress(ns));
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST, OPTIONS']);
    const options = await fetch(ingress(ns), { method: 'OPTIONS' });
    expect([options.status, options.headers.get('allow')]).toEqual([204, 'POST, OPTIONS']);
  });

  it('answers 413 to a body over the limit and lets the client read the answer', async () => {
    const ns = freshNamespace();
    const { ingress, broker: b } = await h.start([broker('default', {}, ns)], { maxEventBytes: 64 * 1024 });
    const big = Buffer.alloc(1024 * 1024, 'x');
    const declared = await post(ingress(ns), binaryEvent().headers, big);
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.text).detail).toBe('the request body exceeds the limit of 65536 bytes');
    // Chunked, without a Content-Length: refused once the limit is passed, answer still readable.
    const url = new URL(ingress(ns));
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(url, { method: 'POST', headers: { ...binaryEvent().headers, 'transfer-encoding': 'chunked' } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      for (let i = 0; i < 16; i++) req.write(Buffer.alloc(16 * 1024, 'y'));
      req.end();
    });
    expect(status).toBe(413);
    expect((await post(ingress(ns), binaryEvent().headers, '{}')).status).toBe(202);
    expect(b.metrics.total('accepted')).toBe(1);
  });

  it('answers 429 with Retry-After when more events wait to be stored than allowed', async () => {
    const ns = freshNamespace();
    const { ingress } = await h.start([broker('default', {}, ns)], { maxPendingEvents: 3 });
    const batch = [1, 2, 3, 4].map((i) => ({ specversion: '1.0', id: `${i}`, source: '/s', type: 't' }));
    const r = await post(ingress(ns), { 'content-type': 'application/cloudevents-batch+json' }, JSON.stringify(batch));
    expect([r.status, r.headers.get('retry-after')]).toEqual([429, '1']);
    expect((await post(ingress(ns), { 'content-type': 'application/cloudevents-batch+json' }, JSON.stringify(batch.slice(0, 3)))).status).toBe(202);
  });
});

describe('Triggers that cannot deliver say why in their status, and lose nothing', () => {
  it('a Trigger of a Broker that does not exist is not Ready: BrokerDoesNotExist', async () => {
    const ns = freshNamespace();
    const { source } = await h.start([trigger('orphan', { broker: 'missing', subscriber: { uri: 'http://127.0.0.1:9/' } }, ns)]);
    await source.until((s) => condition(s, ns, 'orphan', 'Ready')?.reason === 'BrokerDoesNotExist');
    expect(condition(source, ns, 'orphan', 'BrokerReady')).toMatchObject({ status: 'False', message: 'Broker "missing" does not exist' });
  });

  it('a bad filter gets nothing while bad; fixed, it gets the events sent meanwhile, filtered anew', async () => {
    const ns = freshNamespace();
    const fn = await sub();
    const bad = trigger('t', { subscriber: { uri: fn.url }, filters: [{ cesql: "type = 'a' AND" }] }, ns);
    const { source, ingress } = await h.start([broker('default', {}, ns), bad]);
    await source.until((s) => condition(s, ns, 't', 'SubscriptionReady')?.reason === 'InvalidFilter');
    expect(condition(source, ns, 't', 'SubscriptionReady')!.message).toContain('spec.filters[0].cesql: invalid CESQL expression: parse error at position 15');
    for (const type of ['a', 'b', 'a']) expect((await post(ingress(ns), binaryEvent({ type }).headers, '{}')).status).toBe(202);
    await new Promise((r) => setTimeout(r, 300));
    expect(fn.received).toHaveLength(0);
    source.apply({ ...bad, spec: { ...bad.spec, filters: [{ cesql: "type = 'a'" }] } });
    await fn.until(2);
    expect(fn.received.map((r) => r.headers['ce-type'])).toEqual(['a', 'a']);
    await source.until((s) => readyCondition(s.trigger(ns, 't')?.status?.conditions)?.status === 'True');
    expect(source.trigger(ns, 't')!.status!.observedGeneration).toBe(2);
  });

  it('an unresolvable subscriber ref keeps its events until the ref resolves (relative uri joined)', async () => {
    const ns = freshNamespace();
    const fn = await sub();
    let ready = false;
    const resolver = functionResolver((ref) => {
      if (!ready) throw new Error(`services "${ref.name}" not found`);
      return fn.url;
    });
    const t = trigger('t', { subscriber: { ref: { apiVersion: 'v1', kind: 'Service', name: 'fn' }, uri: '/hook?x=1' } }, ns);
    const { source, ingress } = await h.start([broker('default', {}, ns), t], { resolver });
    await source.until((s) => condition(s, ns, 't', 'SubscriberResolved')?.status === 'False');
    expect(condition(source, ns, 't', 'SubscriberResolved')).toMatchObject({ reason: "Unable to get the Subscriber's URI", message: 'services "fn" not found' });
    expect(source.trigger(ns, 't')!.status!.subscriberUri).toBe('');
    expect((await post(ingress(ns), binaryEvent({ id: 'waiting' }).headers, '{}')).status).toBe(202);
    ready = true;
    resolver.changed();
    const [got] = await fn.until(1);
    expect([got!.headers['ce-id'], got!.path]).toEqual(['waiting', '/hook?x=1']);
    expect(source.trigger(ns, 't')!.status!.subscriberUri).toBe(`${fn.url}hook?x=1`);
  });

  it('a bad DeliverySpec (ISO 8601 duration, policy) is reported on the Trigger and holds its events', async () => {
    const ns = freshNamespace();
    const fn = await sub();
    const t = trigger('t', { subscriber: { uri: fn.url }, delivery: { backoffDelay: '5s', backoffPolicy: 'fibonacci' } }, ns);
    const { source, ingress } = await h.start([broker('default', {}, ns), t]);
    await source.until((s) => condition(s, ns, 't', 'SubscriptionReady')?.reason === 'InvalidDeliverySpec');
    const message = condition(source, ns, 't', 'SubscriptionReady')!.message!;
    expect(message).toContain('spec.delivery.backoffPolicy: invalid value: fibonacci');
    expect(message).toContain('spec.delivery.backoffDelay: invalid value: 5s (expected an ISO 8601 duration such as PT0.2S)');
    expect((await post(ingress(ns), binaryEvent({ id: 'held' }).headers, '{}')).status).toBe(202);
    source.apply({ ...t, spec: { ...t.spec, delivery: { backoffDelay: 'PT1S', backoffPolicy: 'linear' } } });
    const [got] = await fn.until(1);
    expect(got!.headers['ce-id']).toBe('held');
  });

  it('a bad Broker DeliverySpec makes the Broker not Ready, and its Triggers say so', async () => {
    const ns = freshNamespace();
    const { source } = await h.start([broker('default', { delivery: { retry: -2 } }, ns), trigger('t', { subscriber: { uri: 'http://127.0.0.1:9/' } }, ns)]);
    await source.until((s) => readyCondition(s.broker(ns, 'default')?.status?.conditions)?.reason === 'InvalidDeliverySpec');
    await source.until((s) => condition(s, ns, 't', 'BrokerReady')?.status === 'False');
    expect(condition(source, ns, 't', 'BrokerReady')!.message).toBe('spec.delivery.retry: invalid value: -2');
    expect(source.broker(ns, 'default')!.status!.address!.url).toMatch(new RegExp(`/${ns}/default$`));
  });

  it('an unresolvable dead-letter sink is reported and holds the Trigger', async () => {
    const ns = freshNamespace();
    const t = trigger('t', { subscriber: { uri: 'http://127.0.0.1:9/' }, delivery: { deadLetterSink: { ref: { kind: 'Service', name: 'dls' } } } }, ns);
    const { source } = await h.start([broker('default', {}, ns), t]);
    await source.until((s) => condition(s, ns, 't', 'DeadLetterSinkResolved')?.status === 'False');
    expect(condition(source, ns, 't', 'DeadLetterSinkResolved')!.message).toBe('cannot resolve Service "dls": no resolver for references is configured');
  });

  it('a deleted Trigger loses its consumer; the other Triggers go on', async () => {
    const ns = freshNamespace();
    const [a, b] = [await sub(), await sub()];
    const { source, ingress, broker: running } = await h.start([broker('default', {}, ns), trigger('a', { subscriber: { uri: a.url } }, ns), trigger('b', { subscriber: { uri: b.url } }, ns)]);
    expect(await running.log.consumers(`${ns}/default`)).toEqual([`${ns}/a@uid-a`, `${ns}/b@uid-b`]);
    source.remove('Trigger', ns, 'a');
    await running.settled();
    expect(await running.log.consumers(`${ns}/default`)).toEqual([`${ns}/b@uid-b`]);
    await post(ingress(ns), binaryEvent().headers, '{}');
    await b.until(1);
    expect(a.received).toHaveLength(0);
  });
});
