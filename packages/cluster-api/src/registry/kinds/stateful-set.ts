/**
 * StatefulSet (apps/v1; also apps/v1beta1): ordered pods with stable names. Defaults as apps/v1
 * (OrderedReady, RollingUpdate with partition 0, 10 revisions, PVCs retained), ValidateStatefulSetSpec,
 * and its update rule: only replicas, ordinals, template, updateStrategy, the PVC retention policy and
 * minReadySeconds may change.
 */
import type { KubeObject } from '../../api/meta.js';
import { isDeepStrictEqual } from 'node:util';
import type { Strategy } from '../definition.js';
import { forbiddenField, notSupported, type FieldError } from '../generic/validation.js';
import { scale } from '../subresources/scale.js';
import { statusSubresource } from '../subresources/status.js';
import { AllVerbs, child, column, inGroup, obj, setDefault, spec, status, type Obj } from './common.js';
import { count, templateColumns } from './columns.js';
import { selectorString } from './label-selector.js';
import { defaultTemplate, nonNegativeFields, notAbove, validateSelectedTemplate } from './workload.js';

const Management = ['OrderedReady', 'Parallel'] as const;
const UpdateTypes = ['RollingUpdate', 'OnDelete'] as const;
const Retention = ['Retain', 'Delete'] as const;

const defaults = (o: KubeObject): void => {
  const s = child(o, 'spec');
  setDefault(s, 'replicas', 1);
  setDefault(s, 'podManagementPolicy', 'OrderedReady');
  const update = child(s, 'updateStrategy');
  setDefault(update, 'type', 'RollingUpdate');
  if (update.type === 'RollingUpdate') setDefault(child(update, 'rollingUpdate'), 'partition', 0);
  setDefault(s, 'revisionHistoryLimit', 10);
  const retention = child(s, 'persistentVolumeClaimRetentionPolicy');
  setDefault(retention, 'whenDeleted', 'Retain');
  setDefault(retention, 'whenScaled', 'Retain');
  defaultTemplate(s);
};

const validate = (o: KubeObject): FieldError[] => {
  const s = spec(o);
  const errs = [
    ...nonNegativeFields(s, 'spec', ['replicas', 'minReadySeconds', 'revisionHistoryLimit']),
    ...validateSelectedTemplate(s, 'spec', { noun: 'statefulset', restartPolicies: ['Always'] }),
  ];
  if (!Management.includes(s.podManagementPolicy as never)) errs.push(notSupported('spec.podManagementPolicy', s.podManagementPolicy ?? '', Management));
  const update = obj(s.updateStrategy);
  if (!UpdateTypes.includes(update.type as never)) errs.push(notSupported('spec.updateStrategy.type', update.type ?? '', UpdateTypes));
  if (update.type === 'OnDelete' && update.rollingUpdate) {
    errs.push(forbiddenField('spec.updateStrategy.rollingUpdate', "only allowed for updateStrategy 'RollingUpdate'"));
  }
  errs.push(...nonNegativeFields(obj(update.rollingUpdate), 'spec.updateStrategy.rollingUpdate', ['partition']));
  errs.push(...nonNegativeFields(obj(s.ordinals), 'spec.ordinals', ['start']));
  const retention = obj(s.persistentVolumeClaimRetentionPolicy);
  for (const f of ['whenDeleted', 'whenScaled']) {
    if (!Retention.includes(retention[f] as never)) errs.push(notSupported(`spec.persistentVolumeClaimRetentionPolicy.${f}`, retention[f] ?? '', Retention));
  }
  return errs;
};

const Mutable = ['replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'];

/** ValidateStatefulSetUpdate: the rest of the spec is fixed. */
const validateUpdate = (o: KubeObject, old: KubeObject): FieldError[] => {
  const fixed = (s: Obj) => Object.fromEntries(Object.entries(s).filter(([k, v]) => !Mutable.includes(k) && v !== undefined));
  return isDeepStrictEqual(fixed(spec(o)), fixed(spec(old))) ? [] : [forbiddenField('spec',
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")];
};

const validateStatus = (o: KubeObject): FieldError[] => {
  const st = status(o);
  return [...nonNegativeFields(st, 'status', ['replicas', 'readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas', 'observedGeneration', 'collisionCount']),
    ...notAbove(st, 'readyReplicas', 'replicas'), ...notAbove(st, 'currentReplicas', 'replicas'), ...notAbove(st, 'updatedReplicas', 'replicas'),
    ...notAbove(st, 'availableReplicas', 'replicas'), ...notAbove(st, 'availableReplicas', 'readyReplicas')];
};

export const statefulSetStrategy = (prepare: (o: KubeObject) => void = () => {}): Strategy => ({
  prepareForCreate(o) {
    prepare(o);
    defaults(o);
    o.status = { replicas: 0, availableReplicas: 0 };
  },
  prepareForUpdate(o) {
    prepare(o);
    defaults(o);
  },
  validate,
  validateUpdate,
});

export const statefulSetColumns = [
  column('Ready', (o) => `${count(status(o).readyReplicas)}/${count(spec(o).replicas)}`, { description: 'Number of the pod with ready state' }),
  ...templateColumns((o) => spec(o).template),
];

export const statefulSet = inGroup('apps', 'v1')({
  kind: 'StatefulSet',
  plural: 'statefulsets',
  singular: 'statefulset',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['sts'],
  categories: ['all'],
  subresources: { status: statusSubresource({ validate: validateStatus }), scale: scale((o) => selectorString(spec(o).selector)) },
  strategy: statefulSetStrategy(),
  columns: statefulSetColumns,
});
