/** LimitRange: per-object min/max/default resource limits in a namespace. */
import type { KubeObject } from '../../api/meta.js';
import { notSupported, type FieldError } from '../generic/validation.js';
import { AllVerbs, arr, child, column, core, obj, spec } from './common.js';
import { validateResourceList } from './quantities.js';

const Types = ['Container', 'PersistentVolumeClaim', 'Pod'] as const;
const Maps = ['default', 'defaultRequest', 'max', 'maxLimitRequestRatio', 'min'] as const;

const validate = (limits: unknown): FieldError[] =>
  arr(limits).map(obj).flatMap((l, i) => [
    ...(Types.includes(l.type as never) ? [] : [notSupported(`spec.limits[${i}].type`, l.type, Types)]),
    ...Maps.flatMap((m) => validateResourceList(l[m], `spec.limits[${i}].${m}`)),
  ]);

/**
 * SetDefaults_LimitRangeItem: a Container item's default limit is its max, and its default request
 * its default limit, else its min, for each resource that names none.
 */
const defaultItems = (o: KubeObject): void => {
  for (const item of arr(spec(o).limits)) {
    const l = obj(item);
    if (l.type !== 'Container' || l !== item) continue;
    const defaults = child(l, 'default');
    const requests = child(l, 'defaultRequest');
    for (const [k, v] of Object.entries(obj(l.max))) if (!(k in defaults)) defaults[k] = v;
    for (const [k, v] of [...Object.entries(defaults), ...Object.entries(obj(l.min))]) if (!(k in requests)) requests[k] = v;
    // Empty maps are left out, as Go's omitempty leaves them.
    for (const m of ['default', 'defaultRequest']) if (Object.keys(obj(l[m])).length === 0) delete l[m];
  }
};

export const limitRange = core({
  kind: 'LimitRange',
  plural: 'limitranges',
  singular: 'limitrange',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['limits'],
  fields: ['spec'],
  strategy: { prepareForCreate: defaultItems, prepareForUpdate: defaultItems, validate: (o) => validate(spec(o).limits) },
  // limitRangeColumnDefinitions: Name, Created At (no Age).
  columnLayout: 'declared',
  columns: [column('Created At', (o) => o.metadata.creationTimestamp ?? '', { type: 'date' })],
});
