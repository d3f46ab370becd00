/**
 * Knative's defaulting webhook, applied to the broker's own view of each object. On Knative the
 * webhook writes these into the stored object; here nothing mutates Brokers and Triggers on
 * admission (the CRDs carry no `default:`), so the broker reads every object as the webhook would
 * have left it, and the stored object stays as the user wrote it.
 *
 * Applied: the Broker's `eventing.knative.dev/broker.class` annotation (`MTChannelBasedBroker`),
 * the Broker's `spec.delivery` from the shipped `config-br-defaults` (retry 10, exponential,
 * PT0.2S) when it has none, the namespace of `ref`s in Broker and Trigger destinations, the
 * Trigger's empty `spec.filter` and its `eventing.knative.dev/broker` label, the namespace of
 * `ref`s in Subscriptions' subscriber, reply and dead-letter sink.
 * Not applied: the Broker's `spec.config` (Knative's channel ConfigMap: no channel here reads it).
 */
import { DEFAULT_DELIVERY } from '../delivery/policy.js';
import type { Subscription } from '../channel/types.js';
import type { Broker, DeliverySpec, Destination, Trigger } from '../types.js';

export const BROKER_CLASS_ANNOTATION = 'eventing.knative.dev/broker.class';
export const DEFAULT_BROKER_CLASS = 'MTChannelBasedBroker';
export const BROKER_LABEL = 'eventing.knative.dev/broker';

/** `apis.WithinParent` + `Destination.SetDefaults`: a `ref` without a namespace is in the holder's. */
function destination(dest: Destination | undefined, namespace: string): Destination | undefined {
  if (!dest?.ref || dest.ref.namespace) return dest;
  return { ...dest, ref: { ...dest.ref, namespace } };
}

function delivery(spec: DeliverySpec | undefined, namespace: string): DeliverySpec | undefined {
  if (!spec?.deadLetterSink) return spec;
  return { ...spec, deadLetterSink: destination(spec.deadLetterSink, namespace) };
}

export function defaultBroker(b: Broker): Broker {
  const annotations = b.metadata.annotations ?? {};
  const spec = b.spec ?? {};
  return {
    ...b,
    metadata: annotations[BROKER_CLASS_ANNOTATION] ? b.metadata : { ...b.metadata, annotations: { ...annotations, [BROKER_CLASS_ANNOTATION]: DEFAULT_BROKER_CLASS } },
    spec: { ...spec, delivery: spec.delivery ? delivery(spec.delivery, b.metadata.namespace) : { ...DEFAULT_DELIVERY } },
  };
}

export function defaultTrigger(t: Trigger): Trigger {
  const spec = t.spec ?? ({} as Trigger['spec']);
  const ns = t.metadata.namespace;
  const labels = (t.metadata.labels ?? {}) as Record<string, string>;
  return {
    ...t,
    metadata: typeof spec.broker === 'string' && spec.broker !== '' ? { ...t.metadata, labels: { ...labels, [BROKER_LABEL]: spec.broker } } : t.metadata,
    spec: {
      ...spec,
      filter: spec.filter ?? {},
      subscriber: destination(spec.subscriber, ns) ?? {},
      ...(spec.delivery ? { delivery: delivery(spec.delivery, ns) } : {}),
    },
  };
}

/** The namespace of `ref`s in a Subscription's subscriber, reply and dead-letter sink. */
export function defaultSubscription(s: Subscription): Subscription {
  const spec = s.spec ?? ({} as Subscription['spec']);
  const ns = s.metadata.namespace;
  return {
    ...s,
    spec: {
      ...spec,
      ...(spec.subscriber ? { subscriber: destination(spec.subscriber, ns) } : {}),
      ...(spec.reply ? { reply: destination(spec.reply, ns) } : {}),
      ...(spec.delivery ? { delivery: delivery(spec.delivery, ns) } : {}),
    },
  };
}
