/**
 * meta/v1 wire types shared by every kind (Kubernetes' k8s.io/apimachinery/pkg/apis/meta/v1).
 * Field names and optionality follow Kubernetes so JSON round-trips with real clients.
 */

import type { OwnerReference } from '@func/kube-client';

/** metadata.ownerReferences[]: the one definition is kube-client's, which this server's own clients use too. */
export type { OwnerReference };

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  selfLink?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  clusterName?: string;
  managedFields?: unknown[];
  [extra: string]: unknown;
}

export interface ListMeta {
  selfLink?: string;
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/** Any stored object: apiVersion, kind, metadata, and kind-specific fields. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion: string;
  kind: string;
  metadata: ListMeta;
  items: T[];
}

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: ListMeta;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  /** Go's omitempty: a DELETE's Success Status carries none. */
  code?: number;
}

export const PropagationPolicies = ['Orphan', 'Background', 'Foreground'] as const;
export type PropagationPolicy = (typeof PropagationPolicies)[number];

export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

export interface DeleteOptions {
  kind?: 'DeleteOptions';
  apiVersion?: string;
  gracePeriodSeconds?: number;
  preconditions?: Preconditions;
  orphanDependents?: boolean;
  propagationPolicy?: PropagationPolicy;
  dryRun?: string[];
}

export const WatchEventTypes = ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'] as const;
export type WatchEventType = (typeof WatchEventTypes)[number];

export interface WatchEvent<T = KubeObject | Status> {
  type: WatchEventType;
  object: T;
}
