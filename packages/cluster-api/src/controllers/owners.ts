/**
 * Which owner's key a change of a dependent wakes (the add/update/delete pod handlers every
 * Kubernetes workload controller has): the controller its controllerRef names (now and before the
 * change), and, for an orphan, every owner in its namespace whose selector matches it, so one of
 * them adopts it.
 */
import type { KubeObject, OwnerReference } from '../api/meta.js';
import type { ObjectCache } from './cache.js';
import { objectKey } from './context.js';

interface OwnerKind {
  group: string;
  kind: string;
}

const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

const controllerOf = (o: KubeObject): OwnerReference | undefined => o.metadata.ownerReferences?.find((r) => r.controller === true);

/** The cached owner a controllerRef names, when it is of `kind` and still the same object. */
export const resolveOwner = (ref: OwnerReference | undefined, namespace: string | undefined, kind: OwnerKind, owners: ObjectCache): KubeObject | undefined => {
  if (!ref || ref.kind !== kind.kind || groupOf(ref.apiVersion) !== kind.group) return undefined;
  const owner = owners.get(namespace, ref.name);
  return owner?.metadata.uid === ref.uid ? owner : undefined;
};

export const enqueueOwners = (
  obj: KubeObject,
  old: KubeObject | undefined,
  kind: OwnerKind,
  owners: ObjectCache,
  queue: { add(key: string): void },
  matches: (owner: KubeObject, dependent: KubeObject) => boolean,
): void => {
  const ns = obj.metadata.namespace;
  const ref = controllerOf(obj);
  const now = resolveOwner(ref, ns, kind, owners);
  if (now) queue.add(objectKey(now));
  const before = old && resolveOwner(controllerOf(old), ns, kind, owners);
  if (before && before !== now) queue.add(objectKey(before));
  if (ref || obj.metadata.deletionTimestamp) return;
  for (const owner of owners.list(ns)) if (matches(owner, obj)) queue.add(objectKey(owner));
};
