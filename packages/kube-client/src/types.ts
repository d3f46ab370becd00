/** The few API shapes the client reads itself; objects are otherwise the caller's types. */

/** metadata.ownerReferences[] (meta/v1 OwnerReference). */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  creationTimestamp?: string;
  managedFields?: unknown[];
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [key: string]: unknown;
}

export interface KubeList<T> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}
