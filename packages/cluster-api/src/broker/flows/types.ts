/**
 * Knative's `flows.knative.dev/v1` Sequence and Parallel in the CRDs' JSON shapes: only the fields
 * their controllers read or write are typed; the rest passes through untouched.
 */
import type { Addressable, Condition, DeliverySpec, Destination, ObjectMeta } from '../types.js';

export const FLOWS_V1 = 'flows.knative.dev/v1';

/** `messaging.knative.dev/v1` ChannelTemplateSpec: the kind of channel made, and its spec. */
export interface ChannelTemplate {
  apiVersion?: string;
  kind?: string;
  spec?: Record<string, unknown>;
}

export interface SequenceStep extends Destination {
  delivery?: DeliverySpec;
}

export interface Sequence {
  apiVersion?: string;
  kind?: 'Sequence';
  metadata: ObjectMeta;
  spec: { steps: SequenceStep[]; channelTemplate?: ChannelTemplate; reply?: Destination; [field: string]: unknown };
  status?: FlowStatus;
}

export interface ParallelBranch {
  filter?: Destination;
  subscriber: Destination;
  reply?: Destination;
  delivery?: DeliverySpec;
}

export interface Parallel {
  apiVersion?: string;
  kind?: 'Parallel';
  metadata: ObjectMeta;
  spec: { branches: ParallelBranch[]; channelTemplate?: ChannelTemplate; reply?: Destination; [field: string]: unknown };
  status?: FlowStatus;
}

/** A child as the flow's status names it, with a copy of its Ready condition. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
}
export interface ChannelStatusRef {
  channel: ObjectRef;
  ready: Condition;
}
export interface SubscriptionStatusRef {
  subscription: ObjectRef;
  ready: Condition;
}

export interface FlowStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  address?: Addressable;
  addresses?: Addressable[];
  /** Sequence. */
  channelStatuses?: ChannelStatusRef[];
  subscriptionStatuses?: SubscriptionStatusRef[];
  /** Parallel. */
  ingressChannelStatus?: ChannelStatusRef;
  branchStatuses?: { filterSubscriptionStatus: SubscriptionStatusRef; filterChannelStatus: ChannelStatusRef; subscriptionStatus: SubscriptionStatusRef }[];
  [field: string]: unknown;
}
