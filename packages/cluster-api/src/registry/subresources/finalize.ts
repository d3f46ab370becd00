/**
 * `namespaces/{name}/finalize`: the only write that changes a Namespace's spec.finalizers (the
 * namespace controller clears them once the namespace is empty), with no other update rule applied.
 */
import { clone, isObject } from '../generic/meta.js';
import { decodeObject } from '../generic/views.js';
import type { SubresourceDef } from '../subresource.js';

export const finalize: SubresourceDef = {
  verbs: ['update'],
  behaviour: {
    type: 'view',
    strategy: {},
    decode: decodeObject,
    merge(obj, old) {
      const next = clone(old);
      next.spec = { ...(isObject(old.spec) ? old.spec : {}), finalizers: isObject(obj.spec) ? obj.spec.finalizers : undefined };
      next.metadata.resourceVersion = obj.metadata.resourceVersion;
      return next;
    },
  },
};
