/**
 * DeleteOptions rules (apimachinery's ValidateDeleteOptions) and the finalizer half of the deletion
 * lifecycle: an object with finalizers is only marked (deletionTimestamp) and stays until an update
 * removes the last finalizer.
 */
import { PropagationPolicies, type DeleteOptions, type KubeObject } from '../api/meta.js';
import { conflict, invalid, type GroupResource } from './errors.js';
import { timestamp } from './meta.js';
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

export const markDeleting = (obj: KubeObject): KubeObject => ({
  ...obj,
  metadata: { ...obj.metadata, deletionTimestamp: timestamp(), deletionGracePeriodSeconds: 0 },
});
