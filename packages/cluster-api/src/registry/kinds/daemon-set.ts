/**
 * DaemonSet (apps/v1; also extensions/v1beta1): one pod per eligible node. Defaults as apps/v1
 * (RollingUpdate with maxUnavailable 1 and maxSurge 0, 10 revisions), ValidateDaemonSetSpec; no scale.
 */
import type { KubeObject } from '../../api/meta.js';
import type { Strategy } from '../definition.js';
import { forbiddenField, invalidValue, notSupported, type FieldError } from '../generic/validation.js';
import { statusSubresource } from '../subresources/status.js';
import { AllVerbs, child, column, inGroup, obj, setDefault, spec, status } from './common.js';
import { count, templateColumns } from './columns.js';
import { defaultTemplate, immutableSelector, nonNegativeFields, validateIntOrPercent, validateSelectedTemplate } from './workload.js';

const UpdateTypes = ['OnDelete', 'RollingUpdate'] as const;

export const defaultDaemonSet = (o: KubeObject, unavailable: number | string = 1): void => {
  const s = child(o, 'spec');
  const update = child(s, 'updateStrategy');
  setDefault(update, 'type', 'RollingUpdate');
  if (update.type === 'RollingUpdate') {
    const rolling = child(update, 'rollingUpdate');
    setDefault(rolling, 'maxUnavailable', unavailable);
    setDefault(rolling, 'maxSurge', 0);
  }
  setDefault(s, 'revisionHistoryLimit', 10);
  defaultTemplate(s);
};

const validate = (o: KubeObject): FieldError[] => {
  const s = spec(o);
  const errs = [
    ...nonNegativeFields(s, 'spec', ['minReadySeconds', 'revisionHistoryLimit']),
    ...validateSelectedTemplate(s, 'spec', { noun: 'daemonset', restartPolicies: ['Always'] }),
  ];
  const update = obj(s.updateStrategy);
  if (!UpdateTypes.includes(update.type as never)) return [...errs, notSupported('spec.updateStrategy.type', update.type ?? '', UpdateTypes)];
  if (update.type === 'OnDelete' && update.rollingUpdate) errs.push(forbiddenField('spec.updateStrategy.rollingUpdate', "may not be specified when strategy `type` is 'OnDelete'"));
  const rolling = obj(update.rollingUpdate);
  errs.push(...validateIntOrPercent(rolling.maxUnavailable, 'spec.updateStrategy.rollingUpdate.maxUnavailable', true));
  errs.push(...validateIntOrPercent(rolling.maxSurge, 'spec.updateStrategy.rollingUpdate.maxSurge', true));
  const zero = (v: unknown) => v === 0 || v === '0%';
  if (update.type === 'RollingUpdate' && zero(rolling.maxUnavailable) && zero(rolling.maxSurge)) {
    errs.push(invalidValue('spec.updateStrategy.rollingUpdate.maxUnavailable', rolling.maxUnavailable, 'may not be 0 when `maxSurge` is 0'));
  }
  return errs;
};

const validateStatus = (o: KubeObject): FieldError[] =>
  nonNegativeFields(status(o), 'status', ['currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady',
    'observedGeneration', 'updatedNumberScheduled', 'numberAvailable', 'numberUnavailable', 'collisionCount']);

export const daemonSetStrategy = (prepare: (o: KubeObject) => void = (o) => defaultDaemonSet(o), selectorFixed = true): Strategy => ({
  prepareForCreate(o) {
    prepare(o);
    o.status = { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 };
  },
  prepareForUpdate: prepare,
  validate,
  ...(selectorFixed && { validateUpdate: immutableSelector }),
});

const labelsString = (m: unknown): string =>
  Object.entries(obj(m)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${String(v)}`).join(',') || '<none>';

export const daemonSetColumns = [
  column('Desired', (o) => count(status(o).desiredNumberScheduled), { type: 'integer', description: 'The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod).' }),
  column('Current', (o) => count(status(o).currentNumberScheduled), { type: 'integer', description: 'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.' }),
  column('Ready', (o) => count(status(o).numberReady), { type: 'integer', description: 'numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.' }),
  column('Up-to-date', (o) => count(status(o).updatedNumberScheduled), { type: 'integer', description: 'The total number of nodes that are running updated daemon pod' }),
  column('Available', (o) => count(status(o).numberAvailable), { type: 'integer', description: 'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)' }),
  column('Node Selector', (o) => labelsString(obj(obj(spec(o).template).spec).nodeSelector), { description: 'NodeSelector is a selector which must be true for the pod to fit on a node.' }),
  ...templateColumns((o) => spec(o).template, (o) => spec(o).selector),
];

export const daemonSet = inGroup('apps', 'v1')({
  kind: 'DaemonSet',
  plural: 'daemonsets',
  singular: 'daemonset',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['ds'],
  categories: ['all'],
  subresources: { status: statusSubresource({ validate: validateStatus }) },
  strategy: daemonSetStrategy(),
  columns: daemonSetColumns,
});
