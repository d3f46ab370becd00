/** PersistentVolumeClaim: born Pending; the spec is immutable but for resources.requests (expansion). */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../api/meta.js';
import { forbiddenField, required, type FieldError } from '../generic/validation.js';
import { accessModes, AllVerbs, column, core, obj, spec, status, str } from './common.js';
import { statusSubresource } from '../subresources/status.js';
import { validateAccessModes, validateResourceList } from './quantities.js';

const validate = (o: KubeObject): FieldError[] => {
  const s = spec(o);
  const requests = obj(obj(s.resources).requests);
  return [
    ...validateAccessModes(s.accessModes, 'spec.accessModes'),
    ...(requests.storage === undefined ? [required('spec.resources[storage]')] : []),
    ...validateResourceList(requests, 'spec.resources.requests'),
    ...validateResourceList(obj(s.resources).limits, 'spec.resources.limits'),
  ];
};

const withoutRequests = (o: KubeObject) => ({ ...spec(o), resources: { ...obj(spec(o).resources), requests: undefined } });

const validateUpdate = (o: KubeObject, old: KubeObject): FieldError[] =>
  isDeepStrictEqual(withoutRequests(o), withoutRequests(old))
    ? []
    : [forbiddenField('spec', 'spec is immutable after creation except resources.requests for bound claims')];

export const persistentVolumeClaim = core({
  kind: 'PersistentVolumeClaim',
  plural: 'persistentvolumeclaims',
  singular: 'persistentvolumeclaim',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['pvc'],
  subresources: { status: statusSubresource() },
  strategy: {
    prepareForCreate(o) {
      o.status = { phase: 'Pending' };
    },
    validate,
    validateUpdate,
  },
  columns: [
    column('Status', (o) => str(status(o).phase)),
    column('Volume', (o) => str(spec(o).volumeName)),
    column('Capacity', (o) => str(obj(status(o).capacity).storage)),
    column('Access Modes', (o) => accessModes(status(o).accessModes)),
    column('StorageClass', (o) => str(spec(o).storageClassName)),
    column('VolumeAttributesClass', (o) => str(spec(o).volumeAttributesClassName) || '<unset>'),
    column('VolumeMode', (o) => str(spec(o).volumeMode) || '<unset>', { priority: 1 }),
  ],
});
