/**
 * Kubernetes' NamespaceLifecycle admission, with its exact messages: a namespaced object may be
 * created only in a namespace that exists (404) and is not being deleted (403 NamespaceTerminating).
 * Every namespaced create reads its namespace, so the phase is parsed once per namespace revision.
 */
import { ApiError, forbidden, fromStorageError, notFound, type GroupResource } from '../../api/errors.js';
import type { Storage } from '../../storage/interface.js';
import * as keys from '../../storage/keys.js';
import { decode } from './meta.js';

type Phase = 'Active' | 'Terminating';

const MaxPhasesKept = 4096;
const namespaces: GroupResource = { group: '', resource: 'namespaces' };

export class NamespaceLifecycle {
  private readonly phases = new Map<string, { rev: number; phase: Phase }>();

  constructor(private readonly storage: Storage) {}

  private async phase(namespace: string): Promise<Phase | 'Absent'> {
    const kv = await this.storage.get(keys.objectKey(namespaces.resource, undefined, namespace));
    if (!kv) return 'Absent';
    const known = this.phases.get(namespace);
    if (known?.rev === kv.modRevision) return known.phase;
    const phase: Phase = decode(kv).metadata.deletionTimestamp ? 'Terminating' : 'Active';
    if (this.phases.size >= MaxPhasesKept) this.phases.clear();
    this.phases.set(namespace, { rev: kv.modRevision, phase });
    return phase;
  }

  /** Throws unless `name` of `gr` may be created in `namespace`. */
  async admitCreate(gr: GroupResource, namespace: string, name: string): Promise<void> {
    // A store outage here must surface as 503 + retryAfterSeconds like any other storage call.
    const phase = await this.phase(namespace).catch((err: unknown) => {
      throw fromStorageError(err, namespaces, namespace);
    });
    if (phase === 'Absent') throw notFound(namespaces, namespace);
    if (phase === 'Terminating') {
      const err = forbidden(gr, name, `unable to create new content in namespace ${namespace} because it is being terminated`);
      throw new ApiError(403, 'Forbidden', err.message, {
        ...err.details,
        causes: [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }],
      });
    }
  }
}
