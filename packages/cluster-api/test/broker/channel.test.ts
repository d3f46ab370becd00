/**
 * Channels and Subscriptions (messaging.knative.dev/v1) on both engines: real HTTP subscribers on
 * 127.0.0.1, a real SQLite file, a real nats-server. Each event of a channel reaches every
 * Subscription; a reply goes to `spec.reply`; retries, backoff and dead-letter as the broker's.
 */
import { describe, expect, it } from 'vitest';
import { backingChannel } from '../../src/broker/channel/backing.js';
import type { Channel, Subscription } from '../../src/broker/channel/types.js';
import type { Condition } from '../../src/broker/types.js';
import { until } from '../../testing/src/poll.js';
import { binaryEvent, post } from './helpers.js';
import { engineHarness, type Engine, freshNamespace, subscribersPerTest } from './setup.js';

const FAST = { retry: 2, backoffPolicy: 'linear', backoffDelay: 'PT0.05S' };

const channel = (name: string, namespace: string, spec: Channel['spec'] = {}, kind: Channel['kind'] = 'Channel'): Channel =>
  ({ apiVersion: 'messaging.knative.dev/v1', kind, metadata: { namespace, name, uid: `uid-${name}` }, spec });

/** A Channel and the InMemoryChannel the messaging-channel controller makes for it (its backing channel). */
const backed = (name: string, namespace: string, spec: Channel['spec'] = {}): Channel[] => {
  const c = channel(name, namespace, spec);
  return [c, backingChannel(c)];
};

const subscription = (name: string, namespace: string, spec: Partial<Subscription['spec']>, ch = 'events'): Subscription =>
  ({ apiVersion: 'messaging.knative.dev/v1', kind: 'Subscription', metadata: { namespace, name, uid: `uid-${name}` },
    spec: { channel: { apiVersion: 'messaging.knative.dev/v1', kind: 'Channel', name: ch }, ...spec } });

const ready = (o: { status?: { conditions?: Condition[] } } | undefined) => o?.status?.conditions?.find((c) => c.type === 'Ready');

describe.each<Engine>(['sqlite', 'nats'])('channels on %s', (engine) => {
  const h = engineHarness(engine);
  const sub = subscribersPerTest();

  it('delivers each event to both Subscriptions, sends a reply to spec.reply, and reports status as Knative does', async () => {
    const ns = freshNamespace();
    const replier = await sub((r, _n, res) => void res.writeHead(200, { 'ce-specversion': '1.0', 'ce-id': `re-${r.headers['ce-id']}`, 'ce-source': '/a', 'ce-type': 'answered', 'content-type': 'text/plain' }).end('hi'));
    const [b, replies] = [await sub(), await sub()];
    const { source, broker } = await h.start([
      ...backed('events', ns),
      subscription('a', ns, { subscriber: { uri: replier.url }, reply: { uri: replies.url } }),
      subscription('b', ns, { subscriber: { uri: b.url } }),
    ]);
    const ch = source.get<Channel>('Channel', ns, 'events')!;
    expect(ready(ch)).toMatchObject({ status: 'True' });
    const address = ch.status!.address!.url!;
    // The Channel reports its backing InMemoryChannel: its address, its readiness, and the same subscribers.
    expect(address).toBe(`${broker.url}/inmemorychannels/${ns}/events`);
    expect(ch.status!.channel).toEqual({ apiVersion: 'messaging.knative.dev/v1', kind: 'InMemoryChannel', name: 'events', namespace: ns });
    const listed = [{ uid: 'uid-a', observedGeneration: 1, ready: 'True' }, { uid: 'uid-b', observedGeneration: 1, ready: 'True' }];
    expect(ch.status!.subscribers).toEqual(expect.arrayContaining(listed));
    expect(ch.status!.conditions!.map((c) => c.type)).toEqual(['Addressable', 'BackingChannelReady', 'DeadLetterSinkResolved', 'Ready']);
    const imc = source.get<Channel>('InMemoryChannel', ns, 'events')!;
    expect(imc.status!.address!.url).toBe(address);
    expect(imc.status!.subscribers).toEqual(expect.arrayContaining(listed));
    const a = source.get<Subscription>('Subscription', ns, 'a')!;
    expect(ready(a)).toMatchObject({ status: 'True' });
    expect(a.status!.physicalSubscription).toEqual({ subscriberUri: replier.url, replyUri: replies.url });
    expect(a.status!.conditions!.map((c) => c.type)).toEqual(['AddedToChannel', 'ChannelReady', 'OIDCIdentityCreated', 'Ready', 'ReferencesResolved']);

    for (const id of ['e1', 'e2']) expect((await post(address, binaryEvent({ id }).headers, '{"n":1}')).status).toBe(202);
    const got = [await replier.until(2), await b.until(2)];
    for (const list of got) expect(list.map((r) => r.headers['ce-id']).sort()).toEqual(['e1', 'e2']);
    const forwarded = await replies.until(2);
    expect(forwarded.map((r) => r.headers['ce-id']).sort()).toEqual(['re-e1', 're-e2']);
    expect(forwarded[0]!.body.toString()).toBe('hi');
    expect(forwarded[0]!.headers.prefer).toBeUndefined();
  });

  it('an InMemoryChannel serves the same, with its own conditions; a Subscription with only a reply forwards the event itself', async () => {
    const ns = freshNamespace();
    const target = await sub();
    const { source } = await h.start([
      channel('imc', ns, {}, 'InMemoryChannel'),
      { ...subscription('fwd', ns, { reply: { uri: target.url } }), spec: { channel: { apiVersion: 'messaging.knative.dev/v1', kind: 'InMemoryChannel', name: 'imc' }, reply: { uri: target.url } } },
    ]);
    const imc = source.get<Channel>('InMemoryChannel', ns, 'imc')!;
    expect(imc.status!.conditions!.map((c) => `${c.type}=${c.status}`)).toEqual(['Addressable=True', 'ChannelServiceReady=True', 'DeadLetterSinkResolved=True', 'DispatcherReady=True', 'EndpointsReady=True', 'Ready=True', 'ServiceReady=True']);
    expect((await post(imc.status!.address!.url!, binaryEvent({ id: 'x1' }).headers, '{}')).status).toBe(202);
    const [got] = await target.until(1);
    expect(got!.headers['ce-id']).toBe('x1');
  });

  it('retries with backoff, then dead-letters with the URL that failed: the subscriber, or the reply', async () => {
    const ns = freshNamespace();
    const failing = await sub((_r, _n, res) => void res.writeHead(500).end('boom'));
    const answering = await sub((r, _n, res) => void res.writeHead(200, { 'ce-specversion': '1.0', 'ce-id': 'r', 'ce-source': '/s', 'ce-type': 't' }).end());
    const badReply = await sub((_r, _n, res) => void res.writeHead(503).end());
    const dls = await sub();
    const { source, broker } = await h.start([
      ...backed('events', ns, { delivery: { deadLetterSink: { uri: dls.url } } }),
      subscription('fails', ns, { subscriber: { uri: failing.url }, delivery: FAST }),
      subscription('reply-fails', ns, { subscriber: { uri: answering.url }, reply: { uri: badReply.url }, delivery: { retry: 1, backoffDelay: 'PT0.05S' } }),
    ]);
    expect(source.get<Subscription>('Subscription', ns, 'fails')!.status!.physicalSubscription!.deadLetterSinkUri).toBe(dls.url);
    const address = source.get<Channel>('Channel', ns, 'events')!.status!.address!.url!;
    expect((await post(address, binaryEvent({ id: 'd1' }).headers, '{"keep":"me"}')).status).toBe(202);
    const dead = await dls.until(2);
    await failing.until(3);
    await badReply.until(2);
    const byDest = Object.fromEntries(dead.map((d) => [d.headers['ce-knativeerrordest'], d]));
    expect(byDest[failing.url]!.headers).toMatchObject({ 'ce-id': 'd1', 'ce-knativeerrorcode': '500', 'ce-knativeerrordata': Buffer.from('boom').toString('base64') });
    expect(byDest[failing.url]!.body.toString()).toBe('{"keep":"me"}');
    expect(byDest[badReply.url]!.headers).toMatchObject({ 'ce-id': 'd1', 'ce-knativeerrorcode': '503' });
    expect(failing.received).toHaveLength(3);
    await until('counted', () => broker.metrics.total('deadLettered') === 2 && broker.metrics.total('retried') === 3, { timeoutMs: 15_000 });
  });

  it('without delivery on either object makes one attempt and drops (logged) without a dead-letter sink', async () => {
    const ns = freshNamespace();
    const failing = await sub((_r, _n, res) => void res.writeHead(500).end());
    const { source, broker, logs } = await h.start([...backed('events', ns), subscription('once', ns, { subscriber: { uri: failing.url } })]);
    const address = source.get<Channel>('Channel', ns, 'events')!.status!.address!.url!;
    expect((await post(address, binaryEvent({ id: 'o1' }).headers, '{}')).status).toBe(202);
    await until('dropped', () => broker.metrics.total('dropped') === 1, { timeoutMs: 15_000 });
    expect(failing.received).toHaveLength(1);
    expect(logs.find((l) => l.msg === 'event dropped')?.fields).toMatchObject({ id: 'o1' });
  });

  it('stores a reply to a channel it serves directly in that channel, one hop lower: a Subscription replying into its own channel stops after 255 hops', async () => {
    const ns = freshNamespace();
    const echo = await sub((r, _n, res) => void res.writeHead(200, { 'ce-specversion': '1.0', 'ce-id': `${r.headers['ce-id']}`, 'ce-source': '/echo', 'ce-type': 'again' }).end());
    const { source, broker, logs } = await h.start([
      ...backed('loop', ns),
      subscription('echo', ns, { subscriber: { uri: echo.url }, reply: { ref: { apiVersion: 'messaging.knative.dev/v1', kind: 'Channel', name: 'loop' } } }, 'loop'),
    ]);
    const address = source.get<Channel>('Channel', ns, 'loop')!.status!.address!.url!;
    expect(source.get<Subscription>('Subscription', ns, 'echo')!.status!.physicalSubscription!.replyUri).toBe(address);
    expect((await post(address, binaryEvent({ id: 'l1' }).headers, '{}')).status).toBe(202);
    await until('the loop cut', () => broker.metrics.total('dropped') === 1, { timeoutMs: 60_000 });
    expect(echo.received).toHaveLength(255);
    expect(broker.metrics.total('accepted')).toBe(1);
    expect(logs.find((l) => l.msg === 'event dropped')?.fields?.reason).toContain('hop limit is exhausted');
  }, 90_000);

  it('a Channel without its backing InMemoryChannel, or with one of its name that it does not control, is not Ready and has no address', async () => {
    const ns = freshNamespace();
    const target = await sub();
    const foreign = { ...channel('taken', ns, {}, 'InMemoryChannel'), metadata: { namespace: ns, name: 'taken', uid: 'uid-imc' } };
    const { source, broker } = await h.start([
      channel('alone', ns),
      channel('taken', ns),
      foreign,
      subscription('waits', ns, { subscriber: { uri: target.url } }, 'alone'),
    ]);
    for (const name of ['alone', 'taken']) {
      const ch = source.get<Channel>('Channel', ns, name)!;
      const cond = (type: string) => ch.status!.conditions!.find((c) => c.type === type);
      expect(cond('BackingChannelReady')).toMatchObject({ status: 'Unknown', reason: 'BackingChannelNotConfigured', message: 'BackingChannel has not yet been reconciled.' });
      expect(cond('Addressable')).toMatchObject({ status: 'False', reason: 'EmptyHostname', message: 'hostname is the empty string' });
      expect(ready(ch)).toMatchObject({ status: 'False', reason: 'EmptyHostname' });
      expect(ch.status!.address).toBeUndefined();
      expect(ch.status!.channel).toBeUndefined();
    }
    expect(ready(source.get<Subscription>('Subscription', ns, 'waits'))).toMatchObject({ status: 'False', reason: 'ChannelNotReady' });
    // The Channel has no stream of its own: its old path is no address.
    expect((await post(`${broker.url}/channels/${ns}/alone`, binaryEvent().headers, '{}')).status).toBe(404);
    // Its backing channel appears: Ready, and the Subscription waiting on it delivers.
    const [alone] = backed('alone', ns).slice(1);
    source.apply(alone!);
    await until('the Channel Ready', () => ready(source.get<Channel>('Channel', ns, 'alone'))?.status === 'True', { timeoutMs: 15_000 });
    const address = source.get<Channel>('Channel', ns, 'alone')!.status!.address!.url!;
    expect((await post(address, binaryEvent({ id: 'late' }).headers, '{}')).status).toBe(202);
    expect((await target.until(1))[0]!.headers['ce-id']).toBe('late');
  });

  it('turns malformed Channels and Subscriptions into False conditions naming the field, and keeps their events until fixed', async () => {
    const ns = freshNamespace();
    const late = await sub();
    const { source, broker } = await h.start([
      ...backed('events', ns),
      channel('kafka', ns, { channelTemplate: { apiVersion: 'messaging.knative.dev/v1beta1', kind: 'KafkaChannel' } }),
      channel('bad-delivery', ns, { delivery: { retry: -1 } }),
      { ...subscription('no-channel', ns, {}), spec: { subscriber: { uri: late.url } } } as unknown as Subscription,
      { ...subscription('wrong-kind', ns, {}), spec: { channel: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x' }, subscriber: { uri: late.url } } },
      subscription('nothing', ns, {}),
      subscription('bad-uri', ns, { subscriber: { uri: 'not a url' } }),
      subscription('bad-backoff', ns, { subscriber: { uri: late.url }, delivery: { backoffPolicy: 'sometimes' } }),
      subscription('missing', ns, { subscriber: { uri: late.url } }, 'nope'),
      subscription('paused', ns, { subscriber: { ref: { apiVersion: 'v1', kind: 'Service', name: 'later' } } }),
    ]);
    const cond = (kind: 'Channel' | 'Subscription', name: string) => ready(source.get(kind, ns, name));
    expect(cond('Channel', 'kafka')).toMatchObject({ status: 'False', reason: 'InvalidSpec', message: expect.stringContaining('spec.channelTemplate: channel template messaging.knative.dev/v1beta1/KafkaChannel is not supported') });
    expect(cond('Channel', 'bad-delivery')).toMatchObject({ status: 'False', reason: 'InvalidSpec', message: 'spec.delivery.retry: invalid value: -1' });
    expect(cond('Subscription', 'no-channel')).toMatchObject({ status: 'False', reason: 'InvalidSpec', message: 'spec.channel: missing field(s)' });
    expect(cond('Subscription', 'wrong-kind')).toMatchObject({ status: 'False', message: expect.stringContaining('spec.channel: v1/ConfigMap is not a channel kind served here') });
    expect(cond('Subscription', 'nothing')).toMatchObject({ status: 'False', message: 'spec: expected at least one, got none: reply, subscriber' });
    expect(cond('Subscription', 'bad-uri')).toMatchObject({ status: 'False', reason: 'SubscriberResolveFailed', message: 'Failed to resolve spec.subscriber: URI "not a url" is not an absolute http or https URL' });
    expect(cond('Subscription', 'bad-backoff')).toMatchObject({ status: 'False', reason: 'InvalidSpec', message: expect.stringContaining('spec.delivery.backoffPolicy: invalid value: sometimes') });
    expect(cond('Subscription', 'missing')).toMatchObject({ status: 'False', reason: 'ChannelReferenceFailed', message: expect.stringContaining('Channel "nope" not found') });
    expect(cond('Subscription', 'paused')).toMatchObject({ status: 'False', reason: 'SubscriberResolveFailed' });
    // The channel lists each Subscription with why it is not ready.
    const listed = source.get<Channel>('Channel', ns, 'events')!.status!.subscribers!;
    expect(listed.find((s) => s.uid === 'uid-paused')).toMatchObject({ ready: 'Unknown', message: expect.stringContaining('Failed to resolve spec.subscriber') });
    // An unknown channel answers 404; the paused Subscription keeps its event until it is fixed.
    expect((await post(`${broker.url}/channels/${ns}/nope`, binaryEvent().headers, '{}')).status).toBe(404);
    expect((await post(`${broker.url}/widgets/${ns}/events`, binaryEvent().headers, '{}')).status).toBe(404);
    const address = source.get<Channel>('Channel', ns, 'events')!.status!.address!.url!;
    expect((await post(address, binaryEvent({ id: 'kept' }).headers, '{}')).status).toBe(202);
    source.apply(subscription('paused', ns, { subscriber: { uri: late.url } }));
    const [got] = await late.until(1);
    expect(got!.headers['ce-id']).toBe('kept');
  });
});
