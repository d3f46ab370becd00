/**
 * The wiring and status of Sequence and Parallel as pure functions: what their controllers make and
 * report, including what the API server's admission would have refused (an object stored without
 * it) and a child of the wanted name that the flow does not control.
 */
import { describe, expect, it } from 'vitest';
import { parallelChildren, sequenceChildren } from './children.js';
import { flowStatus } from './status.js';
import type { Parallel, Sequence } from './types.js';
import { parallelProblems, sequenceProblems } from './validation.js';

const NOW = '2026-12-05T00:00:00Z';
const meta = { namespace: 'ns', name: 'f', uid: 'uid-f', generation: 3 };
const ready = { conditions: [{ type: 'Ready', status: 'True' as const }], address: { url: 'http://broker/inmemorychannels/ns/f-kn-sequence-0' } };

describe('Sequence', () => {
  const seq: Sequence = { metadata: meta, spec: { steps: [{ uri: 'http://a/' }, { ref: { apiVersion: 'v1', kind: 'Service', name: 'b' }, delivery: { retry: 2 } }], reply: { uri: 'http://r/' } } };

  it('makes a channel of the default kind and a Subscription per step, each replying to the next channel, owned by the Sequence', () => {
    const { channels, subscriptions } = sequenceChildren(seq);
    expect(channels.map((c) => [c.apiVersion, c.kind, c.metadata.name])).toEqual([['messaging.knative.dev/v1', 'InMemoryChannel', 'f-kn-sequence-0'], ['messaging.knative.dev/v1', 'InMemoryChannel', 'f-kn-sequence-1']]);
    expect(channels[0]!.metadata.ownerReferences).toEqual([{ apiVersion: 'flows.knative.dev/v1', kind: 'Sequence', name: 'f', uid: 'uid-f', controller: true, blockOwnerDeletion: true }]);
    expect(subscriptions.map((s) => s.spec)).toEqual([
      { channel: { apiVersion: 'messaging.knative.dev/v1', kind: 'InMemoryChannel', name: 'f-kn-sequence-0' }, subscriber: { uri: 'http://a/' }, reply: { ref: { apiVersion: 'messaging.knative.dev/v1', kind: 'InMemoryChannel', name: 'f-kn-sequence-1', namespace: 'ns' } } },
      { channel: { apiVersion: 'messaging.knative.dev/v1', kind: 'InMemoryChannel', name: 'f-kn-sequence-1' }, subscriber: { ref: { apiVersion: 'v1', kind: 'Service', name: 'b' } }, reply: { uri: 'http://r/' }, delivery: { retry: 2 } },
    ]);
  });

  it('is Ready with the first channel\'s address once every child is; names the first child that is not', () => {
    const wanted = sequenceChildren(seq);
    const all = flowStatus({ flow: seq, kind: 'Sequence', problems: [], wanted, actual: (c) => ({ ...c, status: ready }), now: NOW });
    expect(all.conditions!.map((c) => `${c.type}=${c.status}`)).toEqual(['Addressable=True', 'ChannelsReady=True', 'Ready=True', 'SubscriptionsReady=True']);
    expect(all.address).toEqual({ name: 'http', url: ready.address.url });
    expect(all.observedGeneration).toBe(3);
    expect(all.channelStatuses![1]).toEqual({ channel: { apiVersion: 'messaging.knative.dev/v1', kind: 'InMemoryChannel', name: 'f-kn-sequence-1', namespace: 'ns' }, ready: { type: 'Ready', status: 'True' } });
    const notOwned = flowStatus({ flow: seq, kind: 'Sequence', problems: [], wanted, now: NOW,
      actual: (c) => (c.kind === 'Subscription' && c.metadata.name === 'f-kn-sequence-1' ? { error: 'There is an existing Subscription "f-kn-sequence-1" that we do not own.' } : { ...c, status: ready }) });
    expect(notOwned.conditions!.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'SubscriptionsNotReady', message: expect.stringContaining('that we do not own') });
    const missing = flowStatus({ flow: seq, kind: 'Sequence', problems: [], wanted, actual: () => undefined, now: NOW });
    expect(missing.conditions!.find((c) => c.type === 'Ready')).toMatchObject({ status: 'Unknown', reason: 'ChannelsNotReady' });
    expect(missing.address).toBeUndefined();
  });

  it('names every field Knative\'s webhook refuses, in a status with no children', () => {
    const bad = { metadata: meta, spec: { steps: [{}, { uri: 'http://a/', delivery: { backoffPolicy: 'never' } }], channelTemplate: { apiVersion: 'messaging.knative.dev/v1', kind: 'KafkaChannel' }, reply: { ref: { kind: 'Broker' } } } } as unknown as Sequence;
    const problems = sequenceProblems(bad);
    expect(problems.map((p) => p.path)).toEqual(['spec.steps[0]', 'spec.steps[1].delivery.backoffPolicy', 'spec.channelTemplate', 'spec.reply.ref']);
    expect(sequenceProblems({ metadata: meta, spec: {} } as unknown as Sequence)).toEqual([{ path: 'spec.steps', message: 'missing field(s)' }]);
    const status = flowStatus({ flow: bad, kind: 'Sequence', problems, wanted: { channels: [], subscriptions: [] }, actual: () => undefined, now: NOW });
    expect(status.conditions!.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'InvalidSpec', message: expect.stringContaining('spec.steps[0]: expected at least one, got neither: ref, uri') });
    expect(status.channelStatuses).toBeUndefined();
  });
});

describe('Parallel', () => {
  const par: Parallel = { metadata: meta, spec: { channelTemplate: { apiVersion: 'messaging.knative.dev/v1', kind: 'Channel' }, branches: [{ filter: { uri: 'http://f/' }, subscriber: { uri: 'http://s0/' }, reply: { uri: 'http://own/' } }, { subscriber: { uri: 'http://s1/' } }], reply: { uri: 'http://r/' } } };

  it('makes an ingress channel, and per branch a channel, a filter Subscription (none without a filter) and a Subscription replying to the branch\'s reply, else the Parallel\'s', () => {
    const { channels, subscriptions } = parallelChildren(par);
    expect(channels.map((c) => `${c.kind}/${c.metadata.name}`)).toEqual(['Channel/f-kn-parallel', 'Channel/f-kn-parallel-0', 'Channel/f-kn-parallel-1']);
    expect(subscriptions.map((s) => [s.metadata.name, s.spec.channel.name, s.spec.subscriber, s.spec.reply])).toEqual([
      ['f-kn-parallel-filter-0', 'f-kn-parallel', { uri: 'http://f/' }, { ref: { apiVersion: 'messaging.knative.dev/v1', kind: 'Channel', name: 'f-kn-parallel-0', namespace: 'ns' } }],
      ['f-kn-parallel-0', 'f-kn-parallel-0', { uri: 'http://s0/' }, { uri: 'http://own/' }],
      ['f-kn-parallel-filter-1', 'f-kn-parallel', undefined, { ref: { apiVersion: 'messaging.knative.dev/v1', kind: 'Channel', name: 'f-kn-parallel-1', namespace: 'ns' } }],
      ['f-kn-parallel-1', 'f-kn-parallel-1', { uri: 'http://s1/' }, { uri: 'http://r/' }],
    ]);
    const status = flowStatus({ flow: par, kind: 'Parallel', problems: [], wanted: parallelChildren(par), actual: (c) => ({ ...c, status: ready }), now: NOW });
    expect(status.ingressChannelStatus!.channel.name).toBe('f-kn-parallel');
    expect(status.branchStatuses!.map((b) => [b.filterSubscriptionStatus.subscription.name, b.filterChannelStatus.channel.name, b.subscriptionStatus.subscription.name]))
      .toEqual([['f-kn-parallel-filter-0', 'f-kn-parallel-0', 'f-kn-parallel-0'], ['f-kn-parallel-filter-1', 'f-kn-parallel-1', 'f-kn-parallel-1']]);
  });

  it('refuses no branches, a branch without a subscriber, and bad destinations', () => {
    expect(parallelProblems({ metadata: meta, spec: { branches: [] } } as unknown as Parallel)).toEqual([{ path: 'spec.branches', message: 'missing field(s)' }]);
    expect(parallelProblems({ metadata: meta, spec: { branches: [{ filter: {} }, { subscriber: { ref: { name: 'x' } } }] } } as unknown as Parallel).map((p) => p.path))
      .toEqual(['spec.branches[0].subscriber', 'spec.branches[0].filter', 'spec.branches[1].subscriber.ref']);
  });
});
