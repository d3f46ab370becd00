/**
 * PersistentVolume: exactly one volume source, a capacity and access modes. With no volume controller
 * here, a new volume is Available at once (the phase Kubernetes' controller moves it to from Pending).
 */
import type { KubeObject } from '../../api/meta.js';
import { forbiddenField, notSupported, required, type FieldError } from '../generic/validation.js';
import { accessModes, AllVerbs, child, column, core, obj, setDefault, spec, status, str } from './common.js';
import { statusSubresource } from '../subresources/status.js';
import { validateAccessModes, validateResourceList } from './quantities.js';

const Sources = [
  'awsElasticBlockStore', 'azureDisk', 'azureFile', 'cephfs', 'cinder', 'csi', 'fc', 'flexVolume', 'flocker',
  'gcePersistentDisk', 'glusterfs', 'hostPath', 'iscsi', 'local', 'nfs', 'photonPersistentDisk', 'portworxVolume',
  'quobyte', 'rbd', 'scaleIO', 'storageos', 'vsphereVolume',
] as const;
const ReclaimPolicies = ['Delete', 'Recycle', 'Retain'] as const;

const validate = (o: KubeObject): FieldError[] => {
  const s = spec(o);
  const sources = Sources.filter((k) => s[k] !== undefined);
  const errs: FieldError[] = [...validateAccessModes(s.accessModes, 'spec.accessModes')];
  if (sources.length === 0) errs.push(required('spec', 'must specify a volume type'));
  if (sources.length > 1) errs.push(forbiddenField(`spec.${sources[1]}`, 'may not specify more than 1 volume type'));
  if (obj(s.capacity).storage === undefined) errs.push(required('spec.capacity'));
  errs.push(...validateResourceList(s.capacity, 'spec.capacity'));
  const policy = s.persistentVolumeReclaimPolicy;
  if (!ReclaimPolicies.includes(policy as never)) errs.push(notSupported('spec.persistentVolumeReclaimPolicy', policy, ReclaimPolicies));
  return errs;
};

const claim = (o: KubeObject): string => {
  const ref = obj(spec(o).claimRef);
  return ref.name ? `${str(ref.namespace)}/${str(ref.name)}` : '';
};

export const persistentVolume = core({
  kind: 'PersistentVolume',
  plural: 'persistentvolumes',
  singular: 'persistentvolume',
  namespaced: false,
  verbs: AllVerbs,
  shortNames: ['pv'],
  subresources: { status: statusSubresource() },
  strategy: {
    prepareForCreate(o) {
      setDefault(child(o, 'spec'), 'persistentVolumeReclaimPolicy', 'Retain');
      o.status = { phase: 'Available' };
    },
    validate,
  },
  columns: [
    column('Capacity', (o) => str(obj(spec(o).capacity).storage)),
    column('Access Modes', (o) => accessModes(spec(o).accessModes)),
    column('Reclaim Policy', (o) => str(spec(o).persistentVolumeReclaimPolicy)),
    column('Status', (o) => str(status(o).phase)),
    column('Claim', claim),
    column('StorageClass', (o) => str(spec(o).storageClassName)),
    column('VolumeAttributesClass', (o) => str(spec(o).volumeAttributesClassName) || '<unset>'),
    column('Reason', (o) => str(status(o).reason)),
    column('VolumeMode', (o) => str(spec(o).volumeMode) || '<unset>', { priority: 1 }),
  ],
});
