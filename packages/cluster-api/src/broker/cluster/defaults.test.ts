import { describe, expect, it } from 'vitest';
import type { Broker, Trigger } from '../types.js';
import { defaultBroker, defaultTrigger } from './defaults.js';

const broker = (spec?: Broker['spec'], annotations?: Record<string, string>): Broker => ({ metadata: { namespace: 'ns', name: 'b', ...(annotations ? { annotations } : {}) }, ...(spec ? { spec } : {}) });
const trigger = (spec: Partial<Trigger['spec']>, labels?: Record<string, string>): Trigger =>
  ({ metadata: { namespace: 'ns', name: 't', ...(labels ? { labels } : {}) }, spec: spec as Trigger['spec'] });

describe("Knative's webhook defaults in the broker's view", () => {
  it('gives a Broker the default class and the shipped delivery, keeping what it sets', () => {
    expect(defaultBroker(broker())).toMatchObject({
      metadata: { annotations: { 'eventing.knative.dev/broker.class': 'MTChannelBasedBroker' } },
      spec: { delivery: { retry: 10, backoffPolicy: 'exponential', backoffDelay: 'PT0.2S' } },
    });
    const own = defaultBroker(broker({ delivery: { retry: 1, deadLetterSink: { ref: { apiVersion: 'v1', kind: 'Service', name: 'dls' } } } }, { 'eventing.knative.dev/broker.class': 'Kafka', x: 'y' }));
    expect(own.metadata.annotations).toEqual({ 'eventing.knative.dev/broker.class': 'Kafka', x: 'y' });
    expect(own.spec!.delivery).toEqual({ retry: 1, deadLetterSink: { ref: { apiVersion: 'v1', kind: 'Service', name: 'dls', namespace: 'ns' } } });
  });

  it('gives a Trigger an empty filter, its broker label and the namespace of its refs', () => {
    const t = defaultTrigger(trigger({ broker: 'default', subscriber: { ref: { apiVersion: 'v1', kind: 'Service', name: 'fn' } }, delivery: { deadLetterSink: { ref: { apiVersion: 'v1', kind: 'Service', name: 'dls', namespace: 'other' } } } }, { app: 'x' }));
    expect(t.metadata.labels).toEqual({ app: 'x', 'eventing.knative.dev/broker': 'default' });
    expect(t.spec).toMatchObject({ filter: {}, subscriber: { ref: { namespace: 'ns' } }, delivery: { deadLetterSink: { ref: { namespace: 'other' } } } });
    expect(defaultTrigger(trigger({ broker: 'b', filter: { attributes: { type: 'x' } }, subscriber: { uri: 'http://x/' } })).spec).toEqual({ broker: 'b', filter: { attributes: { type: 'x' } }, subscriber: { uri: 'http://x/' } });
  });

  it('leaves what it cannot default for the status to report, and the input untouched', () => {
    const input = trigger({ subscriber: undefined as never });
    const t = defaultTrigger(input);
    expect(t.metadata.labels).toBeUndefined();
    expect(t.spec.subscriber).toEqual({});
    expect(input.spec).toEqual({ subscriber: undefined });
    const b = broker();
    defaultBroker(b);
    expect(b).toEqual(broker());
  });
});
