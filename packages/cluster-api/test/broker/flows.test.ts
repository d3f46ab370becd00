/**
 * Channels, Subscriptions, Sequences and Parallels end to end with real processes, as a user runs
 * them: `cluster-api serve` (its embedded broker on SQLite), or `serve --no-broker` beside
 * `cluster-api broker` on a real nats-server; the objects applied with kubectl; events POSTed to
 * the addresses their statuses give; real HTTP receivers on 127.0.0.1 as steps, filters and sinks.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NatsCluster, startNats } from '../../src/broker/log/testing/nats-server.js';
import { runKubectl } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';
import { KUBECTL } from './cluster-helpers.js';
import { binaryEvent, post, type Responder } from './helpers.js';
import { subscribersPerTest } from './setup.js';
import { CLUSTER_API, start, stopAll } from './roles.js';
import { BuiltinCrds } from '../../src/serving/crds.js';

type Engine = 'sqlite' | 'nats';
const ready = existsSync(KUBECTL) && existsSync(CLUSTER_API);

/** A step: answers the event with its data's `text` suffixed, as type `<type>.<suffix>`. */
const transform = (suffix: string): Responder => (r, _n, res) => {
  const data = JSON.parse(r.body.toString()) as { text: string };
  res.writeHead(200, { 'ce-specversion': '1.0', 'ce-id': `${r.headers['ce-id']}`, 'ce-source': `/step/${suffix}`, 'ce-type': `${r.headers['ce-type']}.${suffix}`, 'content-type': 'application/json' })
    .end(JSON.stringify({ text: `${data.text}-${suffix}` }));
};

/** A filter: passes (answers the event back) when `test` holds, else answers an empty 202. */
const filter = (test: (h: Record<string, unknown>) => boolean): Responder => (r, _n, res) => {
  if (!test(r.headers)) return void res.writeHead(202).end();
  const ce = Object.fromEntries(Object.entries(r.headers).filter(([k]) => k.startsWith('ce-') || k === 'content-type')) as Record<string, string>;
  res.writeHead(200, ce).end(r.body);
};

const yaml = (...objects: object[]) => `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }, null, 1)}\n`;

describe.runIf(ready).each<Engine>(['sqlite', 'nats'])('channels and flows on serve (%s)', (engine) => {
  let dir: string;
  let nats: NatsCluster | undefined;
  let env: NodeJS.ProcessEnv;
  const kubectl = (...args: string[]) => runKubectl(KUBECTL, env, args);
  const sub = subscribersPerTest();
  const apply = async (name: string, ...objects: object[]) => {
    writeFileSync(join(dir, `${name}.yaml`), yaml(...objects));
    return kubectl('apply', '-f', join(dir, `${name}.yaml`));
  };
  const readyAddress = (resource: string, name: string) =>
    until(`${resource}/${name} Ready with an address`, async () => {
      const o = JSON.parse((await kubectl('get', resource, name, '-o', 'json')).stdout || '{}') as { status?: { conditions?: { type: string; status: string }[]; address?: { url?: string } } };
      return o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && o.status.address?.url;
    }, { timeoutMs: 30_000 });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `flows-${engine}-`));
    const data = join(dir, 'data');
    const kubeconfig = join(data, 'kubeconfig.yaml');
    env = { PATH: process.env.PATH, HOME: dir, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'cache') };
    if (engine === 'sqlite') {
      const api = start([CLUSTER_API, 'serve', '--port', '0', '--data-dir', data]);
      await api.line((e) => e.msg === 'listening');
    } else {
      nats = await startNats(1);
      const api = start([CLUSTER_API, 'serve', '--port', '0', '--data-dir', data, '--no-broker']);
      await api.line((e) => e.msg === 'listening');
      // Without its broker, serve installs no eventing CRDs: the ones it would have, applied as an operator would.
      writeFileSync(join(dir, 'crds.yaml'), yaml(...BuiltinCrds.filter((c) => /\.(messaging|flows)\.knative\.dev$/.test(c.metadata.name!))));
      expect((await kubectl('apply', '-f', join(dir, 'crds.yaml'))).code).toBe(0);
      const broker = start([CLUSTER_API, 'broker', '--kubeconfig', kubeconfig, '--broker-store', nats.url, '--port', '0', '--data-dir', join(dir, 'broker')]);
      await broker.line((e) => e.msg === 'listening');
    }
    await until('the flows CRDs served', async () => (await kubectl('get', 'sequences,parallels,channels,inmemorychannels,subscriptions')).code === 0, { timeoutMs: 30_000 });
  }, 120_000);

  afterAll(async () => {
    await stopAll();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a Sequence of two steps transforms an event in order, and its reply reaches a third receiver', async () => {
    const [one, two, last] = [await sub(transform('one')), await sub(transform('two')), await sub()];
    const applied = await apply('sequence', {
      apiVersion: 'flows.knative.dev/v1', kind: 'Sequence', metadata: { name: 'pipeline' },
      spec: { channelTemplate: { apiVersion: 'messaging.knative.dev/v1', kind: 'InMemoryChannel' }, steps: [{ uri: one.url }, { uri: two.url }], reply: { uri: last.url } },
    });
    expect(applied.stderr).toBe('');
    const address = await readyAddress('sequence', 'pipeline');
    const table = (await kubectl('get', 'sequences')).stdout;
    expect(table).toMatch(new RegExp(`^pipeline\\s+${address.replaceAll('.', '\\.')}\\s+\\S+\\s+True`, 'm'));
    // Knative's children: a channel and a Subscription per step, owned by the Sequence.
    const children = (await kubectl('get', 'inmemorychannels,subscriptions', '-o', 'name')).stdout;
    for (const n of ['inmemorychannel.messaging.knative.dev/pipeline-kn-sequence-0', 'inmemorychannel.messaging.knative.dev/pipeline-kn-sequence-1', 'subscription.messaging.knative.dev/pipeline-kn-sequence-0', 'subscription.messaging.knative.dev/pipeline-kn-sequence-1'])
      expect(children).toContain(n);
    const seq = JSON.parse((await kubectl('get', 'sequence', 'pipeline', '-o', 'json')).stdout);
    expect(seq.status.channelStatuses.map((c: { channel: { name: string }; ready: { status: string } }) => [c.channel.name, c.ready.status])).toEqual([['pipeline-kn-sequence-0', 'True'], ['pipeline-kn-sequence-1', 'True']]);
    expect(seq.status.subscriptionStatuses).toHaveLength(2);

    const e = binaryEvent({ id: 's1', type: 'order' }, '{"text":"start"}');
    expect((await post(address, e.headers, e.body)).status).toBe(202);
    const [got] = await last.until(1, 30_000);
    expect(got!.headers).toMatchObject({ 'ce-type': 'order.one.two', 'ce-source': '/step/two' });
    expect(JSON.parse(got!.body.toString())).toEqual({ text: 'start-one-two' });
    expect(one.received[0]!.headers['ce-type']).toBe('order');
    expect(two.received[0]!.headers['ce-type']).toBe('order.one');
  }, 90_000);

  it('a Sequence shrunk to one step loses the channel and Subscription of the step removed; its reply now comes from that step', async () => {
    const [one, last] = [await sub(transform('one')), await sub()];
    const spec = (steps: object[]) => ({ apiVersion: 'flows.knative.dev/v1', kind: 'Sequence', metadata: { name: 'shrinks' }, spec: { steps, reply: { uri: last.url } } });
    expect((await apply('shrinks', spec([{ uri: one.url }, { uri: one.url }]))).stderr).toBe('');
    await readyAddress('sequence', 'shrinks');
    expect((await apply('shrinks', spec([{ uri: one.url }]))).stderr).toBe('');
    await until('the second step\'s children deleted', async () => {
      const names = (await kubectl('get', 'inmemorychannels,subscriptions', '-o', 'name')).stdout;
      return !names.includes('shrinks-kn-sequence-1') && names.includes('shrinks-kn-sequence-0');
    }, { timeoutMs: 30_000 });
    const address = await until('one channel status', async () => {
      const o = JSON.parse((await kubectl('get', 'sequence', 'shrinks', '-o', 'json')).stdout);
      return o.status?.channelStatuses?.length === 1 && o.status.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True') && o.status.address.url;
    }, { timeoutMs: 30_000 });
    const e = binaryEvent({ id: 'k1', type: 'x' }, '{"text":"a"}');
    expect((await post(address, e.headers, e.body)).status).toBe(202);
    const [got] = await last.until(1, 30_000);
    expect(JSON.parse(got!.body.toString())).toEqual({ text: 'a-one' });
    // Deleting the Sequence deletes its children (owner references, the garbage collector).
    expect((await kubectl('delete', 'sequence', 'shrinks')).code).toBe(0);
    await until('the children gone', async () => !(await kubectl('get', 'inmemorychannels,subscriptions', '-o', 'name')).stdout.includes('shrinks-'), { timeoutMs: 30_000 });
  }, 90_000);

  it('a Parallel with two filtered branches delivers to each branch whose filter passes the event', async () => {
    const eu = await sub(filter((h) => h['ce-region'] === 'eu'));
    const orders = await sub(filter((h) => h['ce-type'] === 'order.created'));
    const [a, b] = [await sub(), await sub()];
    expect((await apply('parallel', {
      apiVersion: 'flows.knative.dev/v1', kind: 'Parallel', metadata: { name: 'fanout' },
      spec: { branches: [{ filter: { uri: eu.url }, subscriber: { uri: a.url } }, { filter: { uri: orders.url }, subscriber: { uri: b.url } }] },
    })).stderr).toBe('');
    const address = await readyAddress('parallel', 'fanout');
    const p = JSON.parse((await kubectl('get', 'parallel', 'fanout', '-o', 'json')).stdout);
    expect(p.status.ingressChannelStatus.channel.name).toBe('fanout-kn-parallel');
    expect(p.status.branchStatuses.map((s: { filterSubscriptionStatus: { subscription: { name: string } } }) => s.filterSubscriptionStatus.subscription.name)).toEqual(['fanout-kn-parallel-filter-0', 'fanout-kn-parallel-filter-1']);
    for (const [id, type, region] of [['both', 'order.created', 'eu'], ['b-only', 'order.created', 'us'], ['a-only', 'user.created', 'eu'], ['none', 'user.created', 'us']]) {
      const e = binaryEvent({ id: id!, type: type!, region: region! }, '{}');
      expect((await post(address, e.headers, e.body)).status).toBe(202);
    }
    await a.until(2, 30_000);
    await b.until(2, 30_000);
    await eu.until(4, 30_000);
    await orders.until(4, 30_000);
    expect(a.received.map((r) => r.headers['ce-id']).sort()).toEqual(['a-only', 'both']);
    expect(b.received.map((r) => r.headers['ce-id']).sort()).toEqual(['b-only', 'both']);
  }, 90_000);

  it('a Parallel branch without a filter gets every event, and its reply goes to the Parallel\'s reply', async () => {
    const [answer, replies] = [await sub(transform('seen')), await sub()];
    expect((await apply('unfiltered', {
      apiVersion: 'flows.knative.dev/v1', kind: 'Parallel', metadata: { name: 'all' },
      spec: { branches: [{ subscriber: { uri: answer.url } }], reply: { uri: replies.url } },
    })).stderr).toBe('');
    const address = await readyAddress('parallel', 'all');
    for (const id of ['u1', 'u2']) expect((await post(address, binaryEvent({ id, type: 'any' }, '{"text":"t"}').headers, '{"text":"t"}')).status).toBe(202);
    const got = await replies.until(2, 30_000);
    expect(got.map((r) => r.headers['ce-type'])).toEqual(['any.seen', 'any.seen']);
  }, 90_000);

  it('a Channel with two Subscriptions delivers each event to both, retrying one that fails and then dead-lettering', async () => {
    const ok = await sub();
    const failing = await sub((_r, n, res) => void res.writeHead(500).end(`attempt ${n}`));
    const dls = await sub();
    expect((await apply('channel',
      { apiVersion: 'messaging.knative.dev/v1', kind: 'Channel', metadata: { name: 'orders' } },
      { apiVersion: 'messaging.knative.dev/v1', kind: 'Subscription', metadata: { name: 'ok' }, spec: { channel: { apiVersion: 'messaging.knative.dev/v1', kind: 'Channel', name: 'orders' }, subscriber: { uri: ok.url } } },
      { apiVersion: 'messaging.knative.dev/v1', kind: 'Subscription', metadata: { name: 'failing' }, spec: {
        channel: { apiVersion: 'messaging.knative.dev/v1', kind: 'Channel', name: 'orders' }, subscriber: { uri: failing.url },
        delivery: { retry: 2, backoffPolicy: 'linear', backoffDelay: 'PT0.1S', deadLetterSink: { uri: dls.url } } } },
    )).stderr).toBe('');
    // `channel` alone is also Knative's category of every channel kind: kubectl needs the full name.
    const address = await readyAddress('channels.messaging.knative.dev', 'orders');
    await until('both Subscriptions Ready', async () => /^failing\s+\S+\s+True/m.test((await kubectl('get', 'subscriptions')).stdout) && /^ok\s+\S+\s+True/m.test((await kubectl('get', 'subscriptions')).stdout), { timeoutMs: 30_000 });
    const ch = JSON.parse((await kubectl('get', 'channels.messaging.knative.dev', 'orders', '-o', 'json')).stdout);
    expect(ch.status.subscribers).toHaveLength(2);
    const sub1 = JSON.parse((await kubectl('get', 'subscription', 'failing', '-o', 'json')).stdout);
    expect(sub1.status.physicalSubscription).toMatchObject({ subscriberUri: failing.url, deadLetterSinkUri: dls.url });

    for (const id of ['c1', 'c2']) expect((await post(address, binaryEvent({ id }).headers, '{"n":1}')).status).toBe(202);
    expect((await ok.until(2, 30_000)).map((r) => r.headers['ce-id']).sort()).toEqual(['c1', 'c2']);
    const dead = await dls.until(2, 30_000);
    expect(dead.map((d) => d.headers['ce-id']).sort()).toEqual(['c1', 'c2']);
    expect(dead[0]!.headers).toMatchObject({ 'ce-knativeerrordest': failing.url, 'ce-knativeerrorcode': '500' });
    expect(failing.received).toHaveLength(6);
  }, 90_000);

  it('a Channel makes its backing InMemoryChannel and reports it; an InMemoryChannel made directly serves Subscriptions; Knative\'s InMemoryChannel CRD applied over ours keeps both working', async () => {
    const [viaChannel, viaImc] = [await sub(), await sub()];
    const ref = (kind: string, name: string) => ({ apiVersion: 'messaging.knative.dev/v1', kind, name });
    expect((await apply('imc',
      { apiVersion: 'messaging.knative.dev/v1', kind: 'Channel', metadata: { name: 'backed' } },
      { apiVersion: 'messaging.knative.dev/v1', kind: 'Subscription', metadata: { name: 'via-channel' }, spec: { channel: ref('Channel', 'backed'), subscriber: { uri: viaChannel.url } } },
      { apiVersion: 'messaging.knative.dev/v1', kind: 'InMemoryChannel', metadata: { name: 'direct' } },
      { apiVersion: 'messaging.knative.dev/v1', kind: 'Subscription', metadata: { name: 'via-imc' }, spec: { channel: ref('InMemoryChannel', 'direct'), subscriber: { uri: viaImc.url } } },
    )).stderr).toBe('');
    const channelAddress = await readyAddress('channels.messaging.knative.dev', 'backed');
    const imcAddress = await readyAddress('inmemorychannels', 'direct');
    const get = async (resource: string, name: string) => JSON.parse((await kubectl('get', resource, name, '-o', 'json')).stdout);
    const channel = await get('channels.messaging.knative.dev', 'backed');
    const backing = await get('inmemorychannels', 'backed');
    // Knative's backing object: an InMemoryChannel of the Channel's name, controlled by it; the Channel's address and readiness are its.
    expect(backing.metadata.ownerReferences).toEqual([{ apiVersion: 'messaging.knative.dev/v1', kind: 'Channel', name: 'backed', uid: channel.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    expect(channel.status.channel).toEqual({ apiVersion: 'messaging.knative.dev/v1', kind: 'InMemoryChannel', name: 'backed', namespace: 'default' });
    expect(channelAddress).toBe(backing.status.address.url);
    expect(channel.status.conditions.find((c: { type: string }) => c.type === 'BackingChannelReady')).toMatchObject({ status: 'True' });
    expect(backing.status.subscribers).toEqual([expect.objectContaining({ ready: 'True' })]);
    expect(channel.status.subscribers).toEqual(backing.status.subscribers);
    const table = (await kubectl('get', 'inmemorychannels')).stdout;
    expect(table).toMatch(new RegExp(`^backed\\s+${channelAddress.replaceAll('.', '\\.')}\\s+\\S+\\s+True`, 'm'));
    expect(table).toMatch(new RegExp(`^direct\\s+${imcAddress.replaceAll('.', '\\.')}\\s+\\S+\\s+True`, 'm'));
    const send = async (address: string, id: string) => expect((await post(address, binaryEvent({ id }).headers, '{"n":1}')).status).toBe(202);
    await send(channelAddress, 'ch-1');
    await send(imcAddress, 'imc-1');
    expect((await viaChannel.until(1, 30_000))[0]!.headers['ce-id']).toBe('ch-1');
    expect((await viaImc.until(1, 30_000))[0]!.headers['ce-id']).toBe('imc-1');

    // Knative's own CRD over ours: a structural schema that prunes what it does not name.
    const crd = fileURLToPath(new URL('./fixtures/knative-inmemorychannel-crd.yaml', import.meta.url));
    expect((await kubectl('apply', '-f', crd)).stderr).toBe('');
    await kubectl('wait', '--for=condition=Established', '--timeout=20s', '-f', crd);
    expect(JSON.parse((await kubectl('get', 'crd', 'inmemorychannels.messaging.knative.dev', '-o', 'json')).stdout).spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.subscribers.type).toBe('array');
    await send(channelAddress, 'ch-2');
    await send(imcAddress, 'imc-2');
    expect((await viaChannel.until(2, 30_000))[1]!.headers['ce-id']).toBe('ch-2');
    expect((await viaImc.until(2, 30_000))[1]!.headers['ce-id']).toBe('imc-2');
    // A Channel made after it is backed, Ready and addressable as before; its backing channel's status kept whole.
    expect((await apply('imc-after', { apiVersion: 'messaging.knative.dev/v1', kind: 'Channel', metadata: { name: 'later' } })).stderr).toBe('');
    const laterAddress = await readyAddress('channels.messaging.knative.dev', 'later');
    const laterBacking = await get('inmemorychannels', 'later');
    expect(laterBacking.status.address.url).toBe(laterAddress);
    expect(laterBacking.status.conditions.map((c: { type: string }) => c.type)).toContain('DispatcherReady');
    // Deleting the Channel deletes its backing channel (the garbage collector, by the owner reference).
    await kubectl('delete', 'channels.messaging.knative.dev', 'later');
    await until('the backing InMemoryChannel gone', async () => (await kubectl('get', 'inmemorychannels', '-o', 'name')).stdout.split('\n').every((l) => !l.endsWith('/later')), { timeoutMs: 30_000 });
  }, 120_000);

  it('refuses malformed specs with the webhook\'s messages', async () => {
    const bad = async (name: string, o: object) => (await apply(name, o)).stderr;
    expect(await bad('no-steps', { apiVersion: 'flows.knative.dev/v1', kind: 'Sequence', metadata: { name: 'empty' }, spec: { steps: [] } }))
      .toContain('admission webhook "validation.webhook.eventing.knative.dev" denied the request: validation failed: missing field(s): spec.steps');
    expect(await bad('bad-step', { apiVersion: 'flows.knative.dev/v1', kind: 'Sequence', metadata: { name: 'bad' }, spec: { steps: [{ uri: 'http://127.0.0.1:1/' }, {}], channelTemplate: { apiVersion: 'messaging.knative.dev/v1', kind: 'KafkaChannel' } } }))
      .toMatch(/expected at least one, got neither: ref, uri: spec\.steps\[1\][\s\S]*channel template messaging\.knative\.dev\/v1\/KafkaChannel is not supported/);
    expect(await bad('no-subscriber', { apiVersion: 'flows.knative.dev/v1', kind: 'Parallel', metadata: { name: 'bad' }, spec: { branches: [{ filter: { uri: 'http://127.0.0.1:1/' } }] } }))
      .toContain('missing field(s): spec.branches[0].subscriber');
    expect(await bad('sub-nothing', { apiVersion: 'messaging.knative.dev/v1', kind: 'Subscription', metadata: { name: 'bad' }, spec: { channel: { apiVersion: 'messaging.knative.dev/v1', kind: 'Channel', name: 'orders' } } }))
      .toContain('expected at least one, got none: reply, subscriber: spec');
    expect(await bad('sub-delivery', { apiVersion: 'messaging.knative.dev/v1', kind: 'Subscription', metadata: { name: 'bad' }, spec: { channel: { apiVersion: 'messaging.knative.dev/v1', kind: 'Channel', name: 'orders' }, subscriber: { uri: 'http://127.0.0.1:1/' }, delivery: { backoffDelay: 'soon' } } }))
      .toContain('invalid value: soon (expected an ISO 8601 duration such as PT0.2S): spec.delivery.backoffDelay');
    // A Subscription's channel never changes.
    expect(await bad('sub-move', { apiVersion: 'messaging.knative.dev/v1', kind: 'Subscription', metadata: { name: 'ok' }, spec: { channel: { apiVersion: 'messaging.knative.dev/v1', kind: 'InMemoryChannel', name: 'other' }, subscriber: { uri: 'http://127.0.0.1:1/' } } }))
      .toContain('Immutable fields changed (-old +new): spec.channel');
    const list = (await kubectl('get', 'sequences,parallels', '-o', 'name')).stdout;
    expect(list).not.toMatch(/empty|bad/);
  }, 60_000);
});
