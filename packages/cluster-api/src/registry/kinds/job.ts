/**
 * Job (batch/v1): run-to-completion pods. Kubernetes' job strategy: the selector is generated from
 * the Job's uid unless `manualSelector` (the template gets the `job-name` and `controller-uid` labels,
 * old and `batch.kubernetes.io/` spelling), SetDefaults_Job (one completion, parallelism 1, 6 retries,
 * NonIndexed, not suspended), ValidateJobSpec, and the template fixed once created unless suspended.
 * batch/v1 keeps a deleted Job's pods unless asked otherwise (DefaultGarbageCollectionPolicy: Orphan).
 */
import type { KubeObject } from '../../api/meta.js';
import { isDeepStrictEqual } from 'node:util';
import { immutable, invalidValue, notSupported, required, type FieldError } from '../generic/validation.js';
import { statusSubresource } from '../subresources/status.js';
import { AllVerbs, arr, child, column, inGroup, num, obj, setDefault, spec, status, type Obj } from './common.js';
import { humanDuration, humanAge, templateColumns } from './columns.js';
import { defaultTemplate, immutableSelector, nonNegativeFields, templateLabels, validateSelectedTemplate } from './workload.js';

const CompletionModes = ['NonIndexed', 'Indexed'] as const;

/** SetDefaults_Job (batch/v1) on a job spec. */
export const defaultJobSpec = (s: Obj): void => {
  if ((s.completions === undefined || s.completions === null) && (s.parallelism === undefined || s.parallelism === null)) s.completions = 1;
  setDefault(s, 'parallelism', 1);
  setDefault(s, 'backoffLimit', s.backoffLimitPerIndex !== undefined ? 2147483647 : 6);
  setDefault(s, 'completionMode', 'NonIndexed');
  if (s.suspend === undefined || s.suspend === null) s.suspend = false;
  setDefault(s, 'podReplacementPolicy', s.podFailurePolicy ? 'Failed' : 'TerminatingOrFailed');
  defaultTemplate(s);
};

/** generateSelector: the template's job-name and controller-uid labels, selected by the uid. */
const generateSelector = (o: KubeObject): void => {
  const s = child(o, 'spec');
  const meta = child(child(s, 'template'), 'metadata');
  const labels = child(meta, 'labels') as Record<string, string>;
  const name = o.metadata.name ?? '';
  const uid = o.metadata.uid ?? '';
  for (const k of ['job-name', 'batch.kubernetes.io/job-name']) labels[k] ??= name;
  for (const k of ['controller-uid', 'batch.kubernetes.io/controller-uid']) labels[k] ??= uid;
  const matchLabels = child(child(s, 'selector'), 'matchLabels');
  matchLabels['batch.kubernetes.io/controller-uid'] ??= uid;
};

/** ValidateJobSpec for a job's spec under `at` (also a CronJob's jobTemplate). */
export const validateJobSpec = (s: Obj, at: string): FieldError[] => {
  const errs = nonNegativeFields(s, at, ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished', 'backoffLimitPerIndex', 'maxFailedIndexes']);
  if (s.completionMode !== undefined && !CompletionModes.includes(s.completionMode as never)) errs.push(notSupported(`${at}.completionMode`, s.completionMode, CompletionModes));
  if (s.completionMode === 'Indexed' && (s.completions === undefined || s.completions === null)) {
    errs.push(required(`${at}.completions`, 'when completion mode is Indexed'));
  }
  return errs;
};

const validate = (o: KubeObject): FieldError[] => [
  ...validateJobSpec(spec(o), 'spec'),
  ...validateSelectedTemplate(spec(o), 'spec', { noun: 'job', restartPolicies: ['OnFailure', 'Never'] }),
];

/** ValidateJobSpecUpdate: selector, completion mode and (unless the job is suspended) the template are fixed. */
const validateUpdate = (o: KubeObject, old: KubeObject): FieldError[] => {
  const errs = immutableSelector(o, old);
  if (spec(o).completionMode !== spec(old).completionMode) errs.push(immutable('spec.completionMode', spec(o).completionMode));
  if (spec(old).suspend !== true && !isDeepStrictEqual(spec(o).template, spec(old).template)) errs.push(immutable('spec.template', spec(o).template));
  return errs;
};

const condition = (o: KubeObject, type: string): boolean =>
  arr(status(o).conditions).map(obj).some((c) => c.type === type && c.status === 'True');

/** printJob's Status column. */
const jobStatus = (o: KubeObject): string => {
  if (condition(o, 'Complete')) return 'Complete';
  if (condition(o, 'Failed')) return 'Failed';
  if (o.metadata.deletionTimestamp) return 'Terminating';
  if (condition(o, 'Suspended')) return 'Suspended';
  if (condition(o, 'FailureTarget')) return 'FailureTarget';
  return 'Running';
};

const completions = (o: KubeObject): string => {
  const s = spec(o);
  const succeeded = num(status(o).succeeded);
  if (typeof s.completions === 'number') return `${succeeded}/${s.completions}`;
  return num(s.parallelism) > 1 ? `${succeeded}/1 of ${num(s.parallelism)}` : `${succeeded}/1`;
};

const duration = (o: KubeObject): string => {
  const { startTime, completionTime } = status(o);
  if (typeof startTime !== 'string') return '';
  if (typeof completionTime !== 'string') return humanAge(startTime);
  return humanDuration(Date.parse(completionTime) - Date.parse(startTime));
};

const validateStatus = (o: KubeObject): FieldError[] => {
  const errs = nonNegativeFields(status(o), 'status', ['active', 'succeeded', 'failed', 'ready', 'terminating']);
  const { startTime, completionTime } = status(o);
  if (typeof completionTime === 'string' && typeof startTime === 'string' && Date.parse(completionTime) < Date.parse(startTime)) {
    errs.push(invalidValue('status.completionTime', completionTime, 'completionTime cannot be set before startTime'));
  }
  return errs;
};

export const job = inGroup('batch', 'v1')({
  kind: 'Job',
  plural: 'jobs',
  singular: 'job',
  namespaced: true,
  verbs: AllVerbs,
  categories: ['all'],
  subresources: { status: statusSubresource({ validate: validateStatus }) },
  strategy: {
    prepareForCreate(o) {
      const s = child(o, 'spec');
      if (s.manualSelector !== true) generateSelector(o);
      defaultJobSpec(s);
      if (Object.keys(o.metadata.labels ?? {}).length === 0) o.metadata.labels = { ...templateLabels(obj(s.template)) };
      o.status = {};
    },
    prepareForUpdate: (o) => defaultJobSpec(child(o, 'spec')),
    validate,
    validateUpdate,
    fieldsOf: (o) => ({ 'status.successful': String(num(status(o).succeeded)) }),
  },
  deletion: { defaultPropagation: 'Orphan' },
  columns: [
    column('Status', jobStatus, { description: 'Status of the job.' }),
    column('Completions', completions, { description: 'The number of pods which reached phase Succeeded.' }),
    column('Duration', duration, { description: 'Time required to complete the job.' }),
    ...templateColumns((o) => spec(o).template, (o) => spec(o).selector),
  ],
});
