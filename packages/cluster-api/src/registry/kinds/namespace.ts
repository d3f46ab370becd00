/**
 * Namespace: born Active with the `kubernetes` finalizer in spec.finalizers; only /finalize changes
 * spec.finalizers and only /status changes status (Kubernetes' namespace strategies). Every new
 * namespace gets the `default` ServiceAccount (Kubernetes' service account controller, reduced to
 * what clients see: pods default to it, `kubectl get sa` lists it), right after its create.
 */
import { isApiError } from '../../api/errors.js';
import type { Hooks } from '../definition.js';
import type { Registry } from '../rest.js';
import { isDNS1123Label } from '../generic/validation.js';
import { finalize } from '../subresources/finalize.js';
import { statusSubresource } from '../subresources/status.js';
import { AllButDeleteCollection, arr, child, column, core, spec, status, str } from './common.js';

const Immortal = ['default', 'kube-system', 'kube-public'];

export const DefaultServiceAccount = 'default';

const hooks: Hooks = {
  async afterCreate(created, _ctx, services) {
    const sa = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DefaultServiceAccount } };
    await services.find('', 'v1', 'serviceaccounts')!.create({ namespace: created.object.metadata.name }, sa).catch((err: unknown) => {
      if (!(isApiError(err) && err.reason === 'AlreadyExists')) throw err;
    });
  },
};

export const namespace = core({
  kind: 'Namespace',
  plural: 'namespaces',
  singular: 'namespace',
  namespaced: false,
  verbs: AllButDeleteCollection,
  shortNames: ['ns'],
  subresources: { status: statusSubresource(), finalize },
  hooks,
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

/** The namespaces kube-apiserver's bootstrap controller keeps: clients assume `default` exists. */
export const SystemNamespaces = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const;

/** Create the system namespaces that are missing; call once at start-up, before serving. */
export const ensureSystemNamespaces = async (registry: Pick<Registry, 'find'>): Promise<void> => {
  const namespaces = registry.find('', 'v1', 'namespaces')!;
  for (const name of SystemNamespaces) {
    await namespaces.create({}, { metadata: { name } }).catch((err: unknown) => {
      if (!(isApiError(err) && err.reason === 'AlreadyExists')) throw err;
    });
  }
};
