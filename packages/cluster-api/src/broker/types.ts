/**
 * Knative Eventing v1 Broker and Trigger, in exactly the JSON shapes of the CRDs
 * (`eventing.knative.dev/v1`, see shared/crds/knative-eventing/). Only the fields the broker reads or
 * writes are typed; everything else an object carries passes through untouched.
 */

/** `duckv1.KReference`: a reference to an object, e.g. a Service. */
export interface KReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  /** Defaults to the namespace of the object holding the reference. */
  namespace?: string;
}

/** `duckv1.Destination`: `ref`, or `uri`, or `uri` relative to the address of `ref`. */
export interface Destination {
  ref?: KReference;
  uri?: string;
  CACerts?: string;
  audience?: string;
}

/** `eventingduckv1.DeliverySpec`. Durations are ISO 8601 (`PT0.2S`). */
export interface DeliverySpec {
  deadLetterSink?: Destination;
  retry?: number;
  backoffPolicy?: string;
  backoffDelay?: string;
  timeout?: string;
  retryAfterMax?: string;
  format?: string;
}

/** `spec.filters` items: the CloudEvents Subscriptions API filter dialects. */
export interface SubscriptionsAPIFilter {
  exact?: Record<string, string>;
  prefix?: Record<string, string>;
  suffix?: Record<string, string>;
  all?: SubscriptionsAPIFilter[];
  any?: SubscriptionsAPIFilter[];
  not?: SubscriptionsAPIFilter;
  cesql?: string;
}

export interface ObjectMeta {
  name: string;
  namespace: string;
  uid?: string;
  generation?: number;
  annotations?: Record<string, string>;
  [field: string]: unknown;
}

/** A Knative condition (`knative.dev/pkg/apis.Condition`). */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  severity?: 'Error' | 'Warning' | 'Info';
  lastTransitionTime?: string;
}

export interface Addressable {
  name?: string;
  url?: string;
}

export interface BrokerStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  address?: Addressable;
  addresses?: Addressable[];
  deadLetterSinkUri?: string;
  annotations?: Record<string, string>;
}

export interface TriggerStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  subscriberUri?: string;
  deadLetterSinkUri?: string;
  annotations?: Record<string, string>;
}

export interface Broker {
  apiVersion?: 'eventing.knative.dev/v1';
  kind?: 'Broker';
  metadata: ObjectMeta;
  spec?: {
    config?: KReference;
    delivery?: DeliverySpec;
  };
  status?: BrokerStatus;
}

export interface Trigger {
  apiVersion?: 'eventing.knative.dev/v1';
  kind?: 'Trigger';
  metadata: ObjectMeta;
  spec: {
    broker: string;
    filter?: { attributes?: Record<string, string> };
    filters?: SubscriptionsAPIFilter[];
    subscriber: Destination;
    delivery?: DeliverySpec;
    [field: string]: unknown;
  };
  status?: TriggerStatus;
}

/** `namespace/name`: how brokers and triggers are keyed everywhere in the broker. */
export function objectKey(meta: { namespace: string; name: string }): string {
  return `${meta.namespace}/${meta.name}`;
}
