/** LimitRange: per-object min/max/default resource limits in a namespace. */
import { notSupported, type FieldError } from '../generic/validation.js';
import { AllVerbs, arr, column, core, obj, spec } from './common.js';
import { validateResourceList } from './quantities.js';

const Types = ['Container', 'PersistentVolumeClaim', 'Pod'] as const;
const Maps = ['default', 'defaultRequest', 'max', 'maxLimitRequestRatio', 'min'] as const;

const validate = (limits: unknown): FieldError[] =>
  arr(limits).map(obj).flatMap((l, i) => [
    ...(Types.includes(l.type as never) ? [] : [notSupported(`spec.limits[${i}].type`, l.type, Types)]),
    ...Maps.flatMap((m) => validateResourceList(l[m], `spec.limits[${i}].${m}`)),
  ]);

export const limitRange = core({
  kind: 'LimitRange',
  plural: 'limitranges',
  singular: 'limitrange',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['limits'],
  fields: ['spec'],
  strategy: { validate: (o) => validate(spec(o).limits) },
  // limitRangeColumnDefinitions: Name, Created At (no Age).
  columnLayout: 'declared',
  columns: [column('Created At', (o) => o.metadata.creationTimestamp ?? '', { type: 'date' })],
});
