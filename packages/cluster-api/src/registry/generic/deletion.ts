/**
 * DeleteOptions rules (apimachinery's ValidateDeleteOptions) and the deletion lifecycle of the
 * generic store (rest.BeforeDelete, deletionFinalizersForGarbageCollection): graceful deletion, the
 * `orphan` / `foregroundDeletion` finalizers the garbage collector acts on, and finalizers that keep
 * a marked object (deletionTimestamp) until an update removes the last one.
 */
import { PropagationPolicies, type DeleteOptions, type KubeObject } from '../../api/meta.js';
import type { ResourceDefinition } from '../definition.js';
import { conflict, invalid, type GroupResource } from '../../api/errors.js';
import { clone, timestamp } from './meta.js';
import { invalidValue, notSupported, type FieldError } from './validation.js';

export const checkDeleteOptions = (options: DeleteOptions): void => {
  const errs: FieldError[] = [];
  const g = options.gracePeriodSeconds;
  if (g !== undefined && g !== null && (!Number.isInteger(g) || g < 0)) {
    errs.push(invalidValue('gracePeriodSeconds', g, 'must be greater than or equal to 0'));
  }
  const policy = options.propagationPolicy;
  if (options.orphanDependents !== undefined && options.orphanDependents !== null && policy !== undefined && policy !== null) {
    errs.push(invalidValue('propagationPolicy', policy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  if (policy !== undefined && policy !== null && !PropagationPolicies.includes(policy)) {
    errs.push(notSupported('propagationPolicy', policy, ['Foreground', 'Background', 'Orphan', 'nil']));
  }
  if (errs.length) {
    throw invalid('DeleteOptions', 'meta.k8s.io', '', errs.map((e) => ({ reason: e.type, message: e.message, field: e.field })));
  }
};

/** Preconditions are checked against the stored object: 409 with Kubernetes' wording. */
export const deletePrecondition = (gr: GroupResource, obj: KubeObject, options: DeleteOptions): void => {
  const p = options.preconditions;
  const name = obj.metadata.name ?? '';
  if (p?.uid && p.uid !== obj.metadata.uid) {
    throw conflict(gr, name, `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${obj.metadata.uid ?? ''}`);
  }
  if (p?.resourceVersion && p.resourceVersion !== obj.metadata.resourceVersion) {
    throw conflict(gr, name,
      `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${obj.metadata.resourceVersion ?? ''}`);
  }
};

export const OrphanFinalizer = 'orphan';
export const ForegroundFinalizer = 'foregroundDeletion';

const given = <T>(v: T | null | undefined): v is T => v !== undefined && v !== null;

/** shouldOrphanDependents: the request, then the object's finalizers, then the kind's default. */
const shouldOrphan = (def: ResourceDefinition, obj: KubeObject, o: DeleteOptions): boolean => {
  if (given(o.orphanDependents)) return o.orphanDependents;
  if (given(o.propagationPolicy)) return o.propagationPolicy === 'Orphan';
  const f = obj.metadata.finalizers ?? [];
  if (f.includes(OrphanFinalizer)) return true;
  if (f.includes(ForegroundFinalizer)) return false;
  return def.deletion?.defaultPropagation === 'Orphan';
};

/** shouldDeleteDependents: Foreground from the request, or a foregroundDeletion finalizer already there. */
const shouldForeground = (obj: KubeObject, o: DeleteOptions): boolean => {
  if (given(o.orphanDependents)) return false;
  if (given(o.propagationPolicy)) return o.propagationPolicy === 'Foreground';
  return (obj.metadata.finalizers ?? []).includes(ForegroundFinalizer);
};

/** The finalizers the delete leaves on the object: both GC finalizers removed, then added back as the options say. */
export const gcFinalizers = (def: ResourceDefinition, obj: KubeObject, o: DeleteOptions): string[] => {
  const kept = (obj.metadata.finalizers ?? []).filter((f) => f !== OrphanFinalizer && f !== ForegroundFinalizer);
  if (shouldOrphan(def, obj, o)) kept.push(OrphanFinalizer);
  if (shouldForeground(obj, o)) kept.push(ForegroundFinalizer);
  return kept;
};

/** What a delete does to the stored object. */
export type DeletePlan =
  /** Already being deleted with a grace period that this request does not shorten: answer the object. */
  | { action: 'pending' }
  /** Write `next` (marked, finalizers adjusted) and keep it. */
  | { action: 'mark'; next: KubeObject }
  /** Remove the object now. */
  | { action: 'remove' };

const at = (base: Date, seconds: number): string => timestamp(new Date(base.getTime() + seconds * 1000));

/** Grace first (BeforeDelete), then finalizers: anything left holding the object keeps it, marked. */
export const planDelete = (def: ResourceDefinition, old: KubeObject, options: DeleteOptions, now = new Date()): DeletePlan => {
  const next = clone(old);
  const meta = next.metadata;
  let graceful = false;
  if (meta.deletionTimestamp) {
    const current = meta.deletionGracePeriodSeconds ?? 0;
    const asked = options.gracePeriodSeconds;
    if (current > 0 && (!given(asked) || asked >= current)) return { action: 'pending' };
    if (current > 0 && given(asked)) {
      // Only a shorter grace period may be given: the deadline moves earlier by the difference.
      meta.deletionTimestamp = at(new Date(Date.parse(meta.deletionTimestamp)), asked - current);
      meta.deletionGracePeriodSeconds = asked;
      graceful = asked > 0;
    }
  } else {
    const period = def.deletion?.gracePeriod?.(old, options) ?? 0;
    if (period > 0) {
      meta.deletionTimestamp = at(now, period);
      meta.deletionGracePeriodSeconds = period;
      if (meta.generation) meta.generation += 1;
      graceful = true;
    }
  }
  const finalizers = gcFinalizers(def, next, options);
  if (!old.metadata.deletionTimestamp) for (const f of def.deletion?.finalizers ?? []) if (!finalizers.includes(f)) finalizers.push(f);
  if (finalizers.length > 0) meta.finalizers = finalizers;
  else delete meta.finalizers;
  const held = finalizers.length > 0 || def.deletion?.heldBy?.(next) === true;
  if (!graceful && !held) return { action: 'remove' };
  if (!meta.deletionTimestamp) {
    meta.deletionTimestamp = timestamp(now);
    meta.deletionGracePeriodSeconds = 0;
  }
  if (!old.metadata.deletionTimestamp) def.deletion?.onDeleting?.(next);
  return { action: 'mark', next };
};

/**
 * Kubernetes' ShouldDeleteDuringUpdate: an update removed the last finalizer of a marked object.
 * An object still inside a grace period is left to whoever ends it (the pod reaper here).
 */
export const releasedByUpdate = (def: ResourceDefinition, next: KubeObject, old: KubeObject): boolean => {
  if (!next.metadata.deletionTimestamp || next.metadata.finalizers?.length || def.deletion?.heldBy?.(next)) return false;
  const wasHeld = Boolean(old.metadata.finalizers?.length) || def.deletion?.heldBy?.(old) === true;
  return wasHeld && !(old.metadata.deletionGracePeriodSeconds && old.metadata.deletionGracePeriodSeconds > 0);
};
