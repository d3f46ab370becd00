/**
 * `status`: the object, of which a write through here changes only status, while a write to the
 * object itself keeps status as stored (Kubernetes' status strategies). Any kind with a status
 * subresource declares `status: statusSubresource()`, with the kind's own status rules when it has some.
 */
import type { KubeObject } from '../../api/meta.js';
import type { Strategy } from '../definition.js';
import { clone } from '../generic/meta.js';
import { decodeObject } from '../generic/views.js';
import type { SubresourceDef } from '../subresource.js';

export interface StatusOptions {
  /** A create may set status (a kubelet registers its Node with its status). */
  keptOnCreate?: boolean;
  /**
   * Metadata fields a status write may change too: Kubernetes' deployment status strategy keeps only
   * spec and labels, so the controller records `deployment.kubernetes.io/revision` without a new generation.
   */
  metadata?: readonly string[];
}

export const statusSubresource = (strategy: Strategy = {}, { keptOnCreate, metadata: writable = [] }: StatusOptions = {}): SubresourceDef => ({
  verbs: ['get', 'patch', 'update'],
  behaviour: {
    type: 'view',
    owns: ['status'],
    ...(keptOnCreate !== undefined && { keptOnCreate }),
    strategy,
    decode: decodeObject,
    merge(obj, old) {
      // managedFields travel with every write (managed-fields.ts decides what they become).
      const metadata: KubeObject['metadata'] = { ...clone(old.metadata), resourceVersion: obj.metadata.resourceVersion, managedFields: obj.metadata.managedFields };
      for (const f of writable) {
        if (obj.metadata[f] === undefined) delete metadata[f];
        else metadata[f] = clone(obj.metadata[f]);
      }
      return { ...clone(old), status: obj.status, metadata };
    },
  },
});
