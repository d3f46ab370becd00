/**
 * Deployment (apps/v1, the storage version; also served at apps/v1beta1 and extensions/v1beta1 as the
 * same objects, see apps-versions.ts). Kubernetes' deployment strategy: status and generation are the
 * server's, a change of spec or annotations bumps generation (a rollback is asked by annotation),
 * defaults per version (apps/v1: 25% surge and unavailability, 10 revisions kept, 600 s progress
 * deadline), and ValidateDeploymentSpec. The controller writes status through /status and reads the
 * replica count through /scale.
 */
import type { KubeObject } from '../../api/meta.js';
import { isDeepStrictEqual } from 'node:util';
import type { Strategy } from '../definition.js';
import { specChanged } from '../generic/strategy.js';
import { forbiddenField, invalidValue, notSupported, type FieldError } from '../generic/validation.js';
import { scale } from '../subresources/scale.js';
import { statusSubresource } from '../subresources/status.js';
import { AllVerbs, child, column, inGroup, num, obj, setDefault, spec, status, type Obj } from './common.js';
import { count, templateColumns } from './columns.js';
import { selectorString } from './label-selector.js';
import { defaultTemplate, immutableSelector, nonNegativeFields, notAbove, validateIntOrPercent, validateSelectedTemplate } from './workload.js';

const StrategyTypes = ['Recreate', 'RollingUpdate'] as const;

/** The defaults of one served version: rolling-update bounds, revisions kept, progress deadline. */
export interface DeploymentDefaults {
  surge: number | string;
  unavailable: number | string;
  revisionHistoryLimit: number;
  progressDeadlineSeconds: number;
}

export const AppsV1Defaults: DeploymentDefaults = { surge: '25%', unavailable: '25%', revisionHistoryLimit: 10, progressDeadlineSeconds: 600 };

export const defaultDeployment = (o: KubeObject, d: DeploymentDefaults): void => {
  const s = child(o, 'spec');
  setDefault(s, 'replicas', 1);
  const strategy = child(s, 'strategy');
  setDefault(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const rolling = child(strategy, 'rollingUpdate');
    setDefault(rolling, 'maxUnavailable', d.unavailable);
    setDefault(rolling, 'maxSurge', d.surge);
  }
  setDefault(s, 'revisionHistoryLimit', d.revisionHistoryLimit);
  setDefault(s, 'progressDeadlineSeconds', d.progressDeadlineSeconds);
  defaultTemplate(s);
};

const validateStrategy = (strategy: Obj, at: string): FieldError[] => {
  if (strategy.type === 'Recreate') {
    return strategy.rollingUpdate ? [forbiddenField(`${at}.rollingUpdate`, "may not be specified when strategy `type` is 'Recreate'")] : [];
  }
  if (strategy.type !== 'RollingUpdate') return [notSupported(`${at}.type`, strategy.type ?? '', StrategyTypes)];
  const rolling = obj(strategy.rollingUpdate);
  const errs = [
    ...validateIntOrPercent(rolling.maxUnavailable, `${at}.rollingUpdate.maxUnavailable`, true),
    ...validateIntOrPercent(rolling.maxSurge, `${at}.rollingUpdate.maxSurge`),
  ];
  const zero = (v: unknown) => v === 0 || v === '0%';
  if (zero(rolling.maxUnavailable) && zero(rolling.maxSurge)) {
    errs.push(invalidValue(`${at}.rollingUpdate.maxUnavailable`, rolling.maxUnavailable, 'may not be 0 when `maxSurge` is 0'));
  }
  return errs;
};

/** ValidateDeploymentSpec. */
export const validateDeployment = (o: KubeObject): FieldError[] => {
  const s = spec(o);
  const errs = [
    ...nonNegativeFields(s, 'spec', ['replicas', 'minReadySeconds', 'revisionHistoryLimit', 'progressDeadlineSeconds']),
    ...validateSelectedTemplate(s, 'spec', { noun: 'deployment', restartPolicies: ['Always'] }),
    ...validateStrategy(obj(s.strategy), 'spec.strategy'),
  ];
  if (typeof s.progressDeadlineSeconds === 'number' && s.progressDeadlineSeconds <= num(s.minReadySeconds)) {
    errs.push(invalidValue('spec.progressDeadlineSeconds', s.progressDeadlineSeconds, 'must be greater than minReadySeconds'));
  }
  const rollback = obj(s.rollbackTo);
  if (s.rollbackTo !== undefined && !(Number.isInteger(rollback.revision ?? 0) && num(rollback.revision) >= 0)) {
    errs.push(invalidValue('spec.rollbackTo.revision', rollback.revision, 'must be greater than or equal to 0'));
  }
  return errs;
};

const validateStatus = (o: KubeObject): FieldError[] => {
  const st = status(o);
  const errs = nonNegativeFields(st, 'status', ['observedGeneration', 'replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas', 'unavailableReplicas', 'terminatingReplicas', 'collisionCount']);
  return [...errs, ...notAbove(st, 'updatedReplicas', 'replicas'), ...notAbove(st, 'readyReplicas', 'replicas'),
    ...notAbove(st, 'availableReplicas', 'replicas'), ...notAbove(st, 'availableReplicas', 'readyReplicas')];
};

/** A spec or annotation change bumps generation: a rollback is asked by annotation (deprecated.deployment.rollback.to). */
const generationChanged = (o: KubeObject, old: KubeObject): boolean =>
  specChanged(o, old) || !isDeepStrictEqual(o.metadata.annotations ?? {}, old.metadata.annotations ?? {});

/** The strategy of one served version: its defaults; apps/v1 alone keeps the selector immutable. */
export const deploymentStrategy = (d: DeploymentDefaults, prepare: (o: KubeObject) => void = () => {}, selectorFixed = true): Strategy => ({
  prepareForCreate(o) {
    prepare(o);
    defaultDeployment(o, d);
    o.status = {};
  },
  prepareForUpdate(o) {
    prepare(o);
    defaultDeployment(o, d);
  },
  validate: validateDeployment,
  ...(selectorFixed && { validateUpdate: immutableSelector }),
  generationChanged,
});

const replicasSelector = (o: KubeObject): string => selectorString(spec(o).selector);

export const deploymentColumns = [
  column('Ready', (o) => `${count(status(o).readyReplicas)}/${count(spec(o).replicas)}`, { description: 'Number of the pod with ready state' }),
  column('Up-to-date', (o) => count(status(o).updatedReplicas), { description: 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.' }),
  column('Available', (o) => count(status(o).availableReplicas), { description: 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.' }),
  ...templateColumns((o) => spec(o).template, (o) => spec(o).selector),
];

export const deployment = inGroup('apps', 'v1')({
  kind: 'Deployment',
  plural: 'deployments',
  singular: 'deployment',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['deploy'],
  categories: ['all'],
  subresources: { status: statusSubresource({ validate: validateStatus }), scale: scale(replicasSelector) },
  strategy: deploymentStrategy(AppsV1Defaults),
  columns: deploymentColumns,
});

export { replicasSelector };
