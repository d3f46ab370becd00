/**
 * apiextensions.k8s.io/v1 CustomResourceDefinition: its defaults, validation (registry/crd/) and
 * status; v1beta1 serves the same objects in its own shape (registry/crd/v1beta1.ts). Serving the resource it defines is the CRD controller's work (controllers/crd/crd.ts): it names,
 * establishes and, on delete, empties it. Deletion adds the cleanup finalizer that controller removes
 * once no custom resource is left, as kube-apiserver's CRD storage does.
 */
import type { KubeObject } from '../../api/meta.js';
import type { ResourceDefinition } from '../definition.js';
import { timestamp } from '../generic/meta.js';
import { V1beta1, validateCrd, validateCrdUpdate, v1UpdateRules } from '../crd/crd-validation.js';
import { internalOf, v1beta1Conversion, v1beta1Defaults } from '../crd/v1beta1.js';
import { servedAt } from '../versions.js';
import { CleanupFinalizer, setCondition, specOf, statusOf, type CrdStatus } from '../crd/types.js';
import { statusSubresource } from '../subresources/status.js';
import { AllVerbs, child, column } from './common.js';

/** SetDefaults_CustomResourceDefinition(Spec): singular, listKind, conversion strategy, webhook port. */
const defaults = (crd: KubeObject): void => {
  const spec = child(crd, 'spec');
  const names = child(spec, 'names');
  if (typeof names.kind === 'string' && names.kind) {
    names.singular ||= names.kind.toLowerCase();
    names.listKind ||= `${names.kind}List`;
  }
  const conversion = child(spec, 'conversion');
  conversion.strategy ??= 'None';
  const service = (conversion.webhook as { clientConfig?: { service?: { port?: number } } } | undefined)?.clientConfig?.service;
  if (service) service.port ??= 443;
};

/** Every version that has been the storage version stays in status.storedVersions until removed there. */
const recordStorageVersion = (crd: KubeObject): void => {
  const status = (crd.status ??= {}) as CrdStatus;
  const stored = (status.storedVersions ??= []);
  for (const v of specOf(crd).versions) if (v.storage && !stored.includes(v.name)) stored.push(v.name);
};

export const customResourceDefinition: ResourceDefinition = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  listKind: 'CustomResourceDefinitionList',
  plural: 'customresourcedefinitions',
  singular: 'customresourcedefinition',
  namespaced: false,
  verbs: AllVerbs,
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  subresources: { status: statusSubresource() },
  strategy: {
    prepareForCreate(crd) {
      defaults(crd);
      crd.status = { conditions: [], acceptedNames: { plural: '', kind: '' }, storedVersions: [] };
      recordStorageVersion(crd);
    },
    prepareForUpdate(crd) {
      defaults(crd);
      recordStorageVersion(crd);
    },
    validateCreate: (crd) => validateCrd(crd),
    validateUpdate: (crd, old) => [...validateCrd(crd, v1UpdateRules(old)), ...validateCrdUpdate(crd, old)],
  },
  deletion: {
    finalizers: [CleanupFinalizer],
    onDeleting(crd) {
      const status = statusOf(crd);
      setCondition(status, {
        type: 'Terminating',
        status: 'True',
        reason: 'InstanceDeletionPending',
        message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
      }, timestamp());
      crd.status = status;
    },
  },
  columns: [column('Created At', (o) => o.metadata.creationTimestamp ?? '', { type: 'date' })],
  columnLayout: 'declared',
};

/** A v1beta1 object checked in its internal form (v1's fields, the top-level ones beside), as kube-apiserver checks it. */
const validateV1beta1 = (crd: KubeObject) => {
  const internal = structuredClone(crd);
  return validateCrd(internal, V1beta1, internalOf(internal));
};

export const customResourceDefinitionV1beta1 = servedAt(customResourceDefinition, { group: 'apiextensions.k8s.io', version: 'v1beta1' }, {
  conversion: v1beta1Conversion,
  strategy: {
    prepareForCreate(crd) {
      v1beta1Defaults(crd);
      customResourceDefinition.strategy.prepareForCreate!(crd);
    },
    prepareForUpdate(crd, old) {
      v1beta1Defaults(crd);
      customResourceDefinition.strategy.prepareForUpdate!(crd, old);
    },
    validate: validateV1beta1,
    validateUpdate: validateCrdUpdate,
  },
});
