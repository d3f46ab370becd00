/**
 * `status`: the object, of which a write through here changes only status, while a write to the
 * object itself keeps status as stored (Kubernetes' status strategies). Any kind with a status
 * subresource declares `status: statusSubresource()`, with the kind's own status rules when it has some.
 */
import type { Strategy } from '../definition.js';
import { clone } from '../generic/meta.js';
import { decodeObject } from '../generic/views.js';
import type { SubresourceDef } from '../subresource.js';

export const statusSubresource = (strategy: Strategy = {}, options: { keptOnCreate?: boolean } = {}): SubresourceDef => ({
  verbs: ['get', 'patch', 'update'],
  behaviour: {
    type: 'view',
    owns: ['status'],
    ...options,
    strategy,
    decode: decodeObject,
    merge(obj, old) {
      // managedFields travel with every write (managed-fields.ts decides what they become).
      const metadata = { ...clone(old.metadata), resourceVersion: obj.metadata.resourceVersion, managedFields: obj.metadata.managedFields };
      return { ...clone(old), status: obj.status, metadata };
    },
  },
});
