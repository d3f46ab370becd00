/**
 * Broker and Trigger `status` as Knative's mt-broker reconcilers write them: the same condition
 * types, reasons and messages, `status.address.url`, `subscriberUri`, `deadLetterSinkUri` and
 * `observedGeneration`. Pure: what the broker observed goes in, the status object comes out; wiring
 * it to the API is writing the result to the `/status` subresource when it differs.
 *
 * Where Knative's webhook would have refused an object (a bad filter, a bad DeliverySpec), the object
 * here is admitted by the CRD schema alone, so the refusal becomes a False condition naming the field.
 */
import type { FieldProblem } from '../delivery/policy.js';
import type { Broker, BrokerStatus, Trigger, TriggerStatus } from '../types.js';
import { livingConditions, mark, type Mark, readyCondition } from './conditions.js';

/** The outcome of resolving a Destination: its URL, or why not. */
/** A destination resolved (`uri`, and every endpoint a delivery may go to when it has several), or why not. */
export type Resolution = { readonly uri: string; readonly endpoints?: readonly string[] } | { readonly error: string };

export interface BrokerObservation {
  readonly broker: Broker;
  /** The Broker's ingress URL, or undefined while no ingress listens. */
  readonly address: string | undefined;
  /** The Broker's stream in the event log: created, or why not. */
  readonly stream: { readonly ready: true } | { readonly ready: false; readonly message: string };
  readonly dispatcherReady: boolean;
  /** Undefined when `spec.delivery.deadLetterSink` is not set. */
  readonly deadLetterSink: Resolution | undefined;
  readonly deliveryProblems: readonly FieldProblem[];
  readonly now: string;
}

const describe = (problems: readonly FieldProblem[]): string => problems.map((p) => `${p.path}: ${p.message}`).join('; ');

function deadLetterMark(type: string, dls: Resolution | undefined, reason: string): Mark {
  if (!dls) return mark.true(type, 'DeadLetterSinkNotConfigured', 'No dead letter sink is configured.');
  return 'uri' in dls ? mark.true(type) : mark.false(type, reason, dls.error);
}

export function brokerStatus(o: BrokerObservation): BrokerStatus {
  const marks: Mark[] = [
    o.address ? mark.true('Addressable') : mark.false('Addressable', 'nil URL', 'URL is nil'),
    deadLetterMark('DeadLetterSinkResolved', o.deadLetterSink, "Unable to get the dead letter sink's URI"),
    o.deliveryProblems.length > 0
      ? mark.false('FilterReady', 'InvalidDeliverySpec', describe(o.deliveryProblems))
      : o.dispatcherReady
        ? mark.true('FilterReady')
        : mark.unknown('FilterReady', 'DispatcherNotReady', 'The dispatcher has not started yet.'),
    o.address ? mark.true('IngressReady') : mark.unknown('IngressReady', 'IngressNotListening', 'The ingress is not listening yet.'),
    o.stream.ready ? mark.true('TriggerChannelReady') : mark.false('TriggerChannelReady', 'StreamUnavailable', o.stream.message),
  ];
  const status: BrokerStatus = {
    ...(o.broker.status?.annotations ? { annotations: o.broker.status.annotations } : {}),
    conditions: livingConditions(marks, o.broker.status?.conditions, o.now),
  };
  if (o.broker.metadata.generation !== undefined) status.observedGeneration = o.broker.metadata.generation;
  if (o.address) {
    status.address = { name: 'http', url: o.address };
    status.addresses = [{ name: 'http', url: o.address }];
  }
  if (o.deadLetterSink && 'uri' in o.deadLetterSink) status.deadLetterSinkUri = o.deadLetterSink.uri;
  return status;
}

export interface TriggerObservation {
  readonly trigger: Trigger;
  /** The Trigger's Broker with its current status, or undefined when it does not exist. */
  readonly broker: Broker | undefined;
  /** Undefined while not resolved yet. */
  readonly subscriber: Resolution | undefined;
  /** Undefined when neither the Trigger nor its Broker sets a dead-letter sink. */
  readonly deadLetterSink: Resolution | undefined;
  readonly filterProblems: readonly FieldProblem[];
  readonly deliveryProblems: readonly FieldProblem[];
  /** True once the dispatcher delivers this Trigger's events. */
  readonly programmed: boolean;
  readonly now: string;
}

function brokerMark(t: Trigger, broker: Broker | undefined): Mark {
  // Knative's webhook refuses both; the CRD schema admits them.
  if (typeof t.spec.broker !== 'string' || t.spec.broker === '') {
    const why = t.spec.brokerRef ? 'spec.brokerRef: Brokers in other namespaces are not supported (cross-namespace-event-links is disabled); set spec.broker' : 'missing field(s): spec.broker';
    return mark.false('BrokerReady', 'BrokerDoesNotExist', why);
  }
  if (!broker) return mark.false('BrokerReady', 'BrokerDoesNotExist', `Broker "${t.spec.broker}" does not exist`);
  const ready = readyCondition(broker.status?.conditions);
  if (!ready) return mark.unknown('BrokerReady', 'BrokerNotConfigured', 'Broker has not yet been reconciled.');
  if (ready.status === 'True') return mark.true('BrokerReady');
  const reason = ready.reason ?? 'BrokerNotReady';
  return ready.status === 'False' ? mark.false('BrokerReady', reason, ready.message ?? '') : mark.unknown('BrokerReady', reason, ready.message ?? '');
}

function subscriptionMark(o: TriggerObservation): Mark {
  if (o.filterProblems.length > 0) return mark.false('SubscriptionReady', 'InvalidFilter', describe(o.filterProblems));
  if (o.deliveryProblems.length > 0) return mark.false('SubscriptionReady', 'InvalidDeliverySpec', describe(o.deliveryProblems));
  if (o.programmed) return mark.true('SubscriptionReady');
  return mark.unknown('SubscriptionReady', 'SubscriptionNotConfigured', 'Subscription has not yet been reconciled.');
}

function subscriberMark(sub: Resolution | undefined): Mark {
  if (!sub) return mark.unknown('SubscriberResolved', 'SubscriberNotResolved', 'The subscriber has not been resolved yet.');
  return 'uri' in sub ? mark.true('SubscriberResolved') : mark.false('SubscriberResolved', "Unable to get the Subscriber's URI", sub.error);
}

export function triggerStatus(o: TriggerObservation): TriggerStatus {
  const marks: Mark[] = [
    brokerMark(o.trigger, o.broker),
    deadLetterMark('DeadLetterSinkResolved', o.deadLetterSink, "Unable to get the dead letter sink's URI"),
    mark.true('DependencyReady'),
    mark.true('OIDCIdentityCreated', 'authentication-oidc feature disabled'),
    subscriberMark(o.subscriber),
    subscriptionMark(o),
  ];
  const status: TriggerStatus = {
    ...(o.trigger.status?.annotations ? { annotations: o.trigger.status.annotations } : {}),
    conditions: livingConditions(marks, o.trigger.status?.conditions, o.now),
    // The control-plane contract: the empty string while spec.subscriber cannot be resolved.
    subscriberUri: o.subscriber && 'uri' in o.subscriber ? o.subscriber.uri : '',
  };
  if (o.trigger.metadata.generation !== undefined) status.observedGeneration = o.trigger.metadata.generation;
  if (o.deadLetterSink && 'uri' in o.deadLetterSink) status.deadLetterSinkUri = o.deadLetterSink.uri;
  return status;
}
