import { describe, expect, it } from 'vitest';
import type { Broker, Trigger } from '../types.js';
import { brokerStatus, type TriggerObservation, triggerStatus } from './status.js';

const T0 = '2024-01-01T00:00:00Z';
const T1 = '2024-01-01T00:01:00Z';

const broker: Broker = { metadata: { namespace: 'ns', name: 'default', generation: 3 } };
const trigger: Trigger = {
  metadata: { namespace: 'ns', name: 't', generation: 2 },
  spec: { broker: 'default', subscriber: { ref: { apiVersion: 'v1', kind: 'Service', name: 'fn' } } },
};

function readyBroker(): Broker {
  const status = brokerStatus({
    broker,
    address: 'http://127.0.0.1:8080/ns/default',
    stream: { ready: true },
    dispatcherReady: true,
    deadLetterSink: undefined,
    deliveryProblems: [],
    now: T0,
  });
  return { ...broker, status };
}

function observe(o: Partial<TriggerObservation>): TriggerObservation {
  return {
    trigger,
    broker: readyBroker(),
    subscriber: { uri: 'http://fn.ns.svc/' },
    deadLetterSink: undefined,
    filterProblems: [],
    deliveryProblems: [],
    programmed: true,
    now: T0,
    ...o,
  };
}

const cond = (s: { conditions?: { type: string }[] }, type: string) => s.conditions?.find((c) => c.type === type);

describe('Broker status', () => {
  it('is Ready and addressable as the mt-broker writes it', () => {
    const s = readyBroker().status!;
    expect(s.observedGeneration).toBe(3);
    expect(s.address).toEqual({ name: 'http', url: 'http://127.0.0.1:8080/ns/default' });
    expect(s.conditions!.map((c) => `${c.type}=${c.status}`)).toEqual([
      'Addressable=True',
      'DeadLetterSinkResolved=True',
      'FilterReady=True',
      'IngressReady=True',
      'Ready=True',
      'TriggerChannelReady=True',
    ]);
    expect(cond(s, 'DeadLetterSinkResolved')).toMatchObject({ reason: 'DeadLetterSinkNotConfigured', message: 'No dead letter sink is configured.' });
  });

  it('is not Ready when its stream cannot be made, and says why', () => {
    const s = brokerStatus({ broker, address: 'http://x/ns/default', stream: { ready: false, message: 'nats: no responders' }, dispatcherReady: true, deadLetterSink: undefined, deliveryProblems: [], now: T0 });
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: 'StreamUnavailable', message: 'nats: no responders' });
  });

  it('reports a bad DeliverySpec and an unresolvable dead-letter sink', () => {
    const s = brokerStatus({ broker, address: 'http://x/ns/default', stream: { ready: true }, dispatcherReady: true, deadLetterSink: { error: 'service "dls" not found' }, deliveryProblems: [{ path: 'spec.delivery.backoffDelay', message: 'invalid value: 5s' }], now: T0 });
    expect(cond(s, 'DeadLetterSinkResolved')).toMatchObject({ status: 'False', message: 'service "dls" not found' });
    expect(cond(s, 'FilterReady')).toMatchObject({ status: 'False', reason: 'InvalidDeliverySpec', message: 'spec.delivery.backoffDelay: invalid value: 5s' });
    expect(s.deadLetterSinkUri).toBeUndefined();
  });
});

describe('Trigger status', () => {
  it('is Ready with the resolved subscriber', () => {
    const s = triggerStatus(observe({}));
    expect(s).toMatchObject({ observedGeneration: 2, subscriberUri: 'http://fn.ns.svc/' });
    expect(cond(s, 'Ready')).toMatchObject({ status: 'True', lastTransitionTime: T0 });
    expect(s.conditions!.map((c) => c.type)).toEqual([
      'BrokerReady', 'DeadLetterSinkResolved', 'DependencyReady', 'OIDCIdentityCreated', 'Ready', 'SubscriberResolved', 'SubscriptionReady',
    ]);
  });

  it.each([
    [{ broker: undefined }, 'BrokerReady', 'BrokerDoesNotExist', 'Broker "default" does not exist'],
    [{ subscriber: { error: 'services "fn" not found' } }, 'SubscriberResolved', "Unable to get the Subscriber's URI", 'services "fn" not found'],
    [{ deadLetterSink: { error: 'no endpoints' } }, 'DeadLetterSinkResolved', "Unable to get the dead letter sink's URI", 'no endpoints'],
    [{ filterProblems: [{ path: 'spec.filters[0].cesql', message: 'invalid CESQL expression' }] }, 'SubscriptionReady', 'InvalidFilter', 'spec.filters[0].cesql: invalid CESQL expression'],
    [{ deliveryProblems: [{ path: 'spec.delivery.backoffDelay', message: 'invalid value: 1s' }] }, 'SubscriptionReady', 'InvalidDeliverySpec', 'spec.delivery.backoffDelay: invalid value: 1s'],
  ] as [Partial<TriggerObservation>, string, string, string][])('%j → %s False', (o, type, reason, message) => {
    const s = triggerStatus(observe(o));
    expect(cond(s, type)).toMatchObject({ status: 'False', reason, message });
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason, message });
  });

  it('clears subscriberUri while the subscriber does not resolve', () => {
    expect(triggerStatus(observe({ subscriber: { error: 'x' } })).subscriberUri).toBe('');
  });

  it('propagates a Broker that is not ready', () => {
    const b = { ...broker, status: brokerStatus({ broker, address: undefined, stream: { ready: true }, dispatcherReady: true, deadLetterSink: undefined, deliveryProblems: [], now: T0 }) };
    expect(cond(triggerStatus(observe({ broker: b })), 'BrokerReady')).toMatchObject({ status: 'False', reason: 'nil URL' });
  });

  it('keeps lastTransitionTime while a condition keeps its status', () => {
    const first = triggerStatus(observe({}));
    const again = triggerStatus(observe({ trigger: { ...trigger, status: first }, now: T1 }));
    expect(again).toEqual(first);
    const broken = triggerStatus(observe({ trigger: { ...trigger, status: first }, subscriber: { error: 'gone' }, now: T1 }));
    expect(cond(broken, 'SubscriberResolved')!).toMatchObject({ lastTransitionTime: T1 });
    expect(cond(broken, 'BrokerReady')!).toMatchObject({ lastTransitionTime: T0 });
  });
});
