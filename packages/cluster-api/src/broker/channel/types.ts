/**
 * Knative's `messaging.knative.dev/v1` Channel, InMemoryChannel and Subscription in the CRDs' JSON
 * shapes: only the fields the broker reads or writes are typed; the rest passes through untouched.
 */
import type { Addressable, Condition, DeliverySpec, Destination, ObjectMeta } from '../types.js';

export const MESSAGING_V1 = 'messaging.knative.dev/v1';

/** The channel kinds the broker serves, each a durable stream of its own. */
export const ChannelKinds = {
  Channel: { plural: 'channels', crd: 'channels.messaging.knative.dev' },
  InMemoryChannel: { plural: 'inmemorychannels', crd: 'inmemorychannels.messaging.knative.dev' },
} as const;
export type ChannelKind = keyof typeof ChannelKinds;

/** `messaging.knative.dev/v1` `SubscriberStatus`: one Subscription as its Channel reports it. */
export interface SubscriberStatus {
  uid?: string;
  observedGeneration?: number;
  ready: 'True' | 'False' | 'Unknown';
  message?: string;
}

export interface ChannelStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  address?: Addressable;
  addresses?: Addressable[];
  subscribers?: SubscriberStatus[];
  deadLetterSinkUri?: string;
  /** A Channel's backing channel, as Knative's Channel reconciler records it. */
  channel?: { apiVersion: string; kind: string; name: string; namespace: string };
  delivery?: DeliverySpec;
  annotations?: Record<string, string>;
}

export interface Channel {
  apiVersion?: string;
  kind: ChannelKind;
  metadata: ObjectMeta;
  spec?: {
    channelTemplate?: { apiVersion?: string; kind?: string; spec?: unknown };
    delivery?: DeliverySpec;
    [field: string]: unknown;
  };
  status?: ChannelStatus;
}

export interface PhysicalSubscription {
  subscriberUri?: string;
  replyUri?: string;
  deadLetterSinkUri?: string;
  delivery?: DeliverySpec;
}

export interface SubscriptionStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  physicalSubscription?: PhysicalSubscription;
  annotations?: Record<string, string>;
}

export interface Subscription {
  apiVersion?: string;
  kind: 'Subscription';
  metadata: ObjectMeta;
  spec: {
    /** `corev1.ObjectReference` to a Channel or InMemoryChannel of the Subscription's namespace. */
    channel: { apiVersion?: string; kind?: string; name?: string; [field: string]: unknown };
    subscriber?: Destination;
    reply?: Destination;
    delivery?: DeliverySpec;
    [field: string]: unknown;
  };
  status?: SubscriptionStatus;
}

/** The stream of a channel in the event log: `<plural>/<namespace>/<name>` (a Broker's is `<namespace>/<name>`). */
export function channelStream(kind: ChannelKind, namespace: string, name: string): string {
  return `${ChannelKinds[kind].plural}/${namespace}/${name}`;
}

/** The kind a plural names, for the ingress path `/<plural>/<namespace>/<name>`. */
export function channelKindOf(plural: string): ChannelKind | undefined {
  return (Object.keys(ChannelKinds) as ChannelKind[]).find((k) => ChannelKinds[k].plural === plural);
}
