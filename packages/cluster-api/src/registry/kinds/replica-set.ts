/**
 * ReplicaSet (apps/v1; also extensions/v1beta1): replicas default 1, a required selector that selects
 * the template's labels (apps/v1: immutable), status and scale subresources as the ReplicaSet
 * controller and `kubectl scale rs` use them.
 */
import type { KubeObject } from '../../api/meta.js';
import type { Strategy } from '../definition.js';
import type { FieldError } from '../generic/validation.js';
import { scale } from '../subresources/scale.js';
import { statusSubresource } from '../subresources/status.js';
import { AllVerbs, child, column, inGroup, setDefault, spec, status } from './common.js';
import { count, templateColumns } from './columns.js';
import { selectorString } from './label-selector.js';
import { defaultTemplate, immutableSelector, nonNegativeFields, notAbove, validateSelectedTemplate } from './workload.js';

const defaults = (o: KubeObject): void => {
  const s = child(o, 'spec');
  setDefault(s, 'replicas', 1);
  defaultTemplate(s);
};

const validate = (o: KubeObject): FieldError[] => [
  ...nonNegativeFields(spec(o), 'spec', ['replicas', 'minReadySeconds']),
  ...validateSelectedTemplate(spec(o), 'spec', { noun: 'replicaset', restartPolicies: ['Always'] }),
];

const validateStatus = (o: KubeObject): FieldError[] => {
  const st = status(o);
  return [...nonNegativeFields(st, 'status', ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'terminatingReplicas', 'observedGeneration']),
    ...notAbove(st, 'fullyLabeledReplicas', 'replicas'), ...notAbove(st, 'readyReplicas', 'replicas'),
    ...notAbove(st, 'availableReplicas', 'replicas'), ...notAbove(st, 'availableReplicas', 'readyReplicas')];
};

export const replicaSetStrategy = (prepare: (o: KubeObject) => void = () => {}, selectorFixed = true): Strategy => ({
  prepareForCreate(o) {
    prepare(o);
    defaults(o);
    o.status = { replicas: 0 };
  },
  prepareForUpdate(o) {
    prepare(o);
    defaults(o);
  },
  validate,
  ...(selectorFixed && { validateUpdate: immutableSelector }),
  fieldsOf: (o) => ({ 'status.replicas': String(count(status(o).replicas)) }),
});

export const replicaSetColumns = [
  column('Desired', (o) => count(spec(o).replicas), { type: 'integer', description: 'Replicas is the number of desired pods.' }),
  column('Current', (o) => count(status(o).replicas), { type: 'integer', description: 'Replicas is the most recently observed number of replicas.' }),
  column('Ready', (o) => count(status(o).readyReplicas), { type: 'integer', description: 'The number of ready replicas for this replica set.' }),
  ...templateColumns((o) => spec(o).template, (o) => spec(o).selector),
];

export const replicaSet = inGroup('apps', 'v1')({
  kind: 'ReplicaSet',
  plural: 'replicasets',
  singular: 'replicaset',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['rs'],
  categories: ['all'],
  subresources: { status: statusSubresource({ validate: validateStatus }), scale: scale((o) => selectorString(spec(o).selector)) },
  strategy: replicaSetStrategy(),
  columns: replicaSetColumns,
});
