/**
 * StorageClass (storage.k8s.io/v1; also v1beta1, the same fields): cluster-scoped, top-level fields,
 * the class marked default by annotation printed as `name (default)`. SetDefaults_StorageClass
 * (reclaimPolicy Delete, volumeBindingMode Immediate), ValidateStorageClass, and the fields a class
 * may never change (ValidateStorageClassUpdate).
 */
import type { KubeObject } from '../../api/meta.js';
import { isDeepStrictEqual } from 'node:util';
import { check, forbiddenField, isQualifiedName, notSupported, required, type FieldError } from '../generic/validation.js';
import { servedAt } from '../versions.js';
import { AllVerbs, column, inGroup, obj, setDefault, str, type Obj } from './common.js';
import { ageColumn, nameColumn } from './columns.js';

const ReclaimPolicies = ['Delete', 'Retain'] as const;
const BindingModes = ['Immediate', 'WaitForFirstConsumer'] as const;
const DefaultAnnotations = ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class'];

const defaults = (o: KubeObject): void => {
  setDefault(o as Obj, 'reclaimPolicy', 'Delete');
  setDefault(o as Obj, 'volumeBindingMode', 'Immediate');
};

const validate = (o: KubeObject): FieldError[] => {
  const errs: FieldError[] = [];
  if (!str(o.provisioner)) errs.push(required('provisioner'));
  else errs.push(...check('provisioner', str(o.provisioner), isQualifiedName));
  const params = Object.keys(obj(o.parameters));
  if (params.length > 512) errs.push({ type: 'FieldValueTooLong', field: 'parameters', message: 'Too long: may not have more than 512 parameters' });
  params.forEach((k) => { if (!k) errs.push(required('parameters', 'parameter name must be non-empty')); });
  if (!ReclaimPolicies.includes(o.reclaimPolicy as never)) errs.push(notSupported('reclaimPolicy', o.reclaimPolicy ?? '', ReclaimPolicies));
  if (!BindingModes.includes(o.volumeBindingMode as never)) errs.push(notSupported('volumeBindingMode', o.volumeBindingMode ?? '', BindingModes));
  return errs;
};

const validateUpdate = (o: KubeObject, old: KubeObject): FieldError[] => {
  const errs: FieldError[] = [];
  if (!isDeepStrictEqual(o.parameters ?? {}, old.parameters ?? {})) errs.push(forbiddenField('parameters', 'updates to parameters are forbidden.'));
  if (o.provisioner !== old.provisioner) errs.push(forbiddenField('provisioner', 'updates to provisioner are forbidden.'));
  if (o.reclaimPolicy !== old.reclaimPolicy) errs.push(forbiddenField('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
  if (o.volumeBindingMode !== old.volumeBindingMode) errs.push(forbiddenField('volumeBindingMode', 'field is immutable'));
  return errs;
};

const isDefault = (o: KubeObject): boolean => DefaultAnnotations.some((a) => o.metadata.annotations?.[a] === 'true');

export const storageClass = inGroup('storage.k8s.io', 'v1')({
  kind: 'StorageClass',
  plural: 'storageclasses',
  singular: 'storageclass',
  namespaced: false,
  verbs: AllVerbs,
  shortNames: ['sc'],
  fields: ['provisioner', 'parameters', 'reclaimPolicy', 'mountOptions', 'allowVolumeExpansion', 'volumeBindingMode', 'allowedTopologies'],
  strategy: { prepareForCreate: defaults, prepareForUpdate: defaults, validate, validateUpdate, generationChanged: () => false },
  columnLayout: 'own',
  columns: [
    { ...nameColumn, cell: (o) => `${o.metadata.name ?? ''}${isDefault(o) ? ' (default)' : ''}` },
    column('Provisioner', (o) => str(o.provisioner), { description: 'provisioner indicates the type of the provisioner.' }),
    column('ReclaimPolicy', (o) => str(o.reclaimPolicy) || 'Delete', { description: 'reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.' }),
    column('VolumeBindingMode', (o) => str(o.volumeBindingMode) || 'Immediate', { description: 'volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.' }),
    column('AllowVolumeExpansion', (o) => o.allowVolumeExpansion === true, { description: 'allowVolumeExpansion shows whether the storage class allow volume expand.' }),
    ageColumn,
  ],
});

export const storageClassV1beta1 = servedAt(storageClass, { group: 'storage.k8s.io', version: 'v1beta1' });

