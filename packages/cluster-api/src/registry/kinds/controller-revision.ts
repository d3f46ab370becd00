/**
 * ControllerRevision (apps/v1; also apps/v1beta1): an immutable snapshot of a StatefulSet's or
 * DaemonSet's template, as their controllers record history (`kubectl rollout history|undo`). Top-level
 * `data` (any object) and `revision`; only metadata may change after create (ValidateControllerRevisionUpdate).
 */
import type { KubeObject } from '../../api/meta.js';
import { isDeepStrictEqual } from 'node:util';
import { immutable, invalidValue, required, type FieldError } from '../generic/validation.js';
import { AllVerbs, column, inGroup, str } from './common.js';

const validate = (o: KubeObject): FieldError[] => {
  const errs: FieldError[] = [];
  if (o.data === undefined || o.data === null) errs.push(required('data'));
  if (!Number.isInteger(o.revision) || (o.revision as number) < 0) errs.push(invalidValue('revision', o.revision ?? null, 'must be greater than or equal to 0'));
  return errs;
};

const validateUpdate = (o: KubeObject, old: KubeObject): FieldError[] =>
  isDeepStrictEqual(o.data, old.data) ? [] : [immutable('data', o.data)];

/** `statefulset.apps/web`: the controller's kind and name (GetControllerOf), lower-cased with its group. */
const controllerOf = (o: KubeObject): string => {
  const ref = (o.metadata.ownerReferences ?? []).find((r) => r.controller === true);
  if (!ref) return '<none>';
  const group = str(ref.apiVersion).includes('/') ? str(ref.apiVersion).split('/')[0] : '';
  return `${ref.kind.toLowerCase()}${group ? `.${group}` : ''}/${ref.name}`;
};

export const controllerRevision = inGroup('apps', 'v1')({
  kind: 'ControllerRevision',
  plural: 'controllerrevisions',
  singular: 'controllerrevision',
  namespaced: true,
  verbs: AllVerbs,
  fields: ['data', 'revision'],
  strategy: { validate, validateUpdate, generationChanged: () => false },
  columns: [
    column('Controller', controllerOf, { description: 'Controller of the object' }),
    column('Revision', (o) => (typeof o.revision === 'number' ? o.revision : 0), { description: 'Revision indicates the revision of the state represented by Data.' }),
  ],
});
