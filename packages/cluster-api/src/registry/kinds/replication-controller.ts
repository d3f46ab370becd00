/**
 * ReplicationController: replicas default 1, the selector defaults to the template's labels and must
 * match them (Kubernetes' SetDefaults_ReplicationController / ValidateReplicationControllerSpec).
 */
import type { KubeObject } from '../../api/meta.js';
import { invalidValue, required, validateLabels, type FieldError } from '../generic/validation.js';
import { AllVerbs, arr, child, column, core, obj, spec, status, str } from './common.js';
import { defaultPodSpec, validatePodSpec } from './pod-spec.js';
import { scale, selectorString } from '../subresources/scale.js';
import { statusSubresource } from '../subresources/status.js';

const templateOf = (o: KubeObject) => obj(spec(o).template);
const labelsOf = (o: KubeObject) => obj(obj(templateOf(o).metadata).labels) as Record<string, string>;

const defaults = (o: KubeObject): void => {
  const s = child(o, 'spec');
  if (s.replicas === undefined || s.replicas === null) s.replicas = 1;
  if (Object.keys(obj(s.selector)).length === 0 && Object.keys(labelsOf(o)).length) s.selector = { ...labelsOf(o) };
  if (s.template !== undefined) defaultPodSpec(child(child(s, 'template'), 'spec'));
};

const validate = (o: KubeObject): FieldError[] => {
  const s = spec(o);
  const selector = obj(s.selector) as Record<string, string>;
  const errs: FieldError[] = [];
  if (Object.keys(selector).length === 0) errs.push(required('spec.selector'));
  if (!Number.isInteger(s.replicas) || (s.replicas as number) < 0) errs.push(invalidValue('spec.replicas', s.replicas, 'must be greater than or equal to 0'));
  errs.push(...validateLabels(selector, 'spec.selector'));
  if (s.template === undefined) return [...errs, required('spec.template')];
  const labels = labelsOf(o);
  if (Object.entries(selector).some(([k, v]) => labels[k] !== v)) {
    errs.push(invalidValue('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'));
  }
  return [...errs, ...validateLabels(labels, 'spec.template.metadata.labels'), ...validatePodSpec(obj(templateOf(o).spec), 'spec.template.spec')];
};

const containers = (o: KubeObject) => arr(obj(templateOf(o).spec).containers).map(obj);
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

export const replicationController = core({
  kind: 'ReplicationController',
  plural: 'replicationcontrollers',
  singular: 'replicationcontroller',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['rc'],
  categories: ['all'],
  subresources: { status: statusSubresource(), scale: scale((o) => selectorString(spec(o).selector)) },
  strategy: {
    prepareForCreate(o) {
      defaults(o);
      o.status = { replicas: 0 };
    },
    prepareForUpdate: defaults,
    validate,
    fieldsOf: (o) => ({ 'status.replicas': String(num(status(o).replicas)) }),
  },
  // rcStrategy.DefaultGarbageCollectionPolicy: v1 keeps its pods unless the client asks otherwise.
  deletion: { defaultPropagation: 'Orphan' },
  columns: [
    column('Desired', (o) => num(spec(o).replicas), { type: 'integer' }),
    column('Current', (o) => num(status(o).replicas), { type: 'integer' }),
    column('Ready', (o) => num(status(o).readyReplicas), { type: 'integer' }),
    column('Containers', (o) => containers(o).map((c) => str(c.name)).join(','), { priority: 1 }),
    column('Images', (o) => containers(o).map((c) => str(c.image)).join(','), { priority: 1 }),
    column('Selector', (o) => selectorString(spec(o).selector), { priority: 1 }),
  ],
});
