/**
 * Namespace: born Active with the `kubernetes` finalizer in spec.finalizers; only /finalize changes
 * spec.finalizers and only /status changes status (Kubernetes' namespace strategies).
 */
import { isDNS1123Label } from '../generic/validation.js';
import { AllButDeleteCollection, arr, child, column, core, spec, status, str } from './common.js';

const Immortal = ['default', 'kube-system', 'kube-public'];

export const namespace = core({
  kind: 'Namespace',
  plural: 'namespaces',
  singular: 'namespace',
  namespaced: false,
  verbs: AllButDeleteCollection,
  shortNames: ['ns'],
  subresources: ['status', 'finalize'],
  nameRule: isDNS1123Label,
  strategy: {
    prepareForCreate(o) {
      const s = child(o, 'spec');
      const finalizers = arr(s.finalizers).filter((f): f is string => typeof f === 'string');
      s.finalizers = finalizers.includes('kubernetes') ? finalizers : [...finalizers, 'kubernetes'];
      o.status = { phase: 'Active' };
    },
    prepareForUpdate(o, old) {
      child(o, 'spec').finalizers = spec(old).finalizers;
    },
    fieldsOf: (o) => ({ 'status.phase': str(status(o).phase) }),
  },
  statusStrategy: {},
  // The namespace stays, Terminating, until the namespace controller has emptied it and cleared
  // spec.finalizers through /finalize.
  deletion: {
    heldBy: (o) => arr(spec(o).finalizers).length > 0,
    onDeleting: (o) => void (child(o, 'status').phase = 'Terminating'),
    // NamespaceLifecycle admission: the namespaces the API server itself keeps.
    undeletable: (o) => (Immortal.includes(o.metadata.name ?? '') ? 'this namespace may not be deleted' : undefined),
  },
  columns: [column('Status', (o) => str(status(o).phase))],
});
