/**
 * CronJob (batch/v1; also batch/v2alpha1, the spec's version): Jobs on a schedule. SetDefaults_CronJob
 * (Allow, not suspended, 3 successful and 1 failed job kept), ValidateCronJob: a schedule the cron
 * parser accepts (its message in the cause), an IANA time zone, a jobTemplate whose selector the Job
 * strategy will generate, and a name short enough for the Jobs it names after itself (≤ 52).
 */
import type { KubeObject } from '../../api/meta.js';
import { invalidValue, notSupported, required, type FieldError } from '../generic/validation.js';
import { statusSubresource } from '../subresources/status.js';
import { AllVerbs, arr, child, column, defaultedWithStatus, inGroup, obj, setDefault, spec, status, str, type Obj } from './common.js';
import { humanAge, templateColumns } from './columns.js';
import { cronError } from './cron.js';
import { validateJobSpec } from './job.js';
import { defaultTemplate, nonNegativeFields, validateSelectedTemplate } from './workload.js';

const ConcurrencyPolicies = ['Allow', 'Forbid', 'Replace'] as const;

const defaults = (o: KubeObject): void => {
  const s = child(o, 'spec');
  setDefault(s, 'concurrencyPolicy', 'Allow');
  if (s.suspend === undefined || s.suspend === null) s.suspend = false;
  setDefault(s, 'successfulJobsHistoryLimit', 3);
  setDefault(s, 'failedJobsHistoryLimit', 1);
  defaultTemplate(child(child(s, 'jobTemplate'), 'spec'));
};

/** Go's time.LoadLocation, by the IANA database Node carries. */
const timeZoneError = (zone: string): string | undefined => {
  if (zone.toLowerCase() === 'local') return 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return undefined;
  } catch {
    return `unknown time zone ${zone}`;
  }
};

const validateSchedule = (s: Obj): FieldError[] => {
  const schedule = str(s.schedule);
  if (!schedule) return [required('spec.schedule')];
  const errs: FieldError[] = [];
  const error = cronError(schedule.replace(/^(CRON_)?TZ=\S+\s+/, ''));
  if (error) errs.push(invalidValue('spec.schedule', schedule, error));
  if (schedule.includes('TZ')) errs.push(invalidValue('spec.schedule', schedule, 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
  if (typeof s.timeZone === 'string') {
    const zoneError = timeZoneError(s.timeZone);
    if (zoneError) errs.push(invalidValue('spec.timeZone', s.timeZone, zoneError));
  }
  return errs;
};

const validate = (o: KubeObject): FieldError[] => {
  const s = spec(o);
  const errs = [...validateSchedule(s), ...nonNegativeFields(s, 'spec', ['startingDeadlineSeconds', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit'])];
  if (!ConcurrencyPolicies.includes(s.concurrencyPolicy as never)) errs.push(notSupported('spec.concurrencyPolicy', s.concurrencyPolicy ?? '', ConcurrencyPolicies));
  if ((o.metadata.name ?? '').length > 52) errs.push(invalidValue('metadata.name', o.metadata.name, 'must be no more than 52 characters'));
  const job = obj(obj(s.jobTemplate).spec);
  errs.push(...validateJobSpec(job, 'spec.jobTemplate.spec'));
  if (job.selector !== undefined && job.selector !== null) errs.push(invalidValue('spec.jobTemplate.spec.selector', job.selector, '`selector` will be auto-generated'));
  if (job.manualSelector === true) errs.push(notSupported('spec.jobTemplate.spec.manualSelector', job.manualSelector, ['nil', 'false']));
  // The template itself, as the Job made from it would be checked (its selector is not generated yet).
  const template = validateSelectedTemplate({ ...job, selector: { matchLabels: {} } }, 'spec.jobTemplate.spec', { noun: 'job', restartPolicies: ['OnFailure', 'Never'] });
  return [...errs, ...template.filter((e) => !e.field.endsWith('.selector'))];
};

const jobTemplate = (o: KubeObject) => obj(obj(spec(o).jobTemplate).spec);

export const cronJob = inGroup('batch', 'v1')({
  kind: 'CronJob',
  plural: 'cronjobs',
  singular: 'cronjob',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['cj'],
  categories: ['all'],
  subresources: { status: statusSubresource() },
  strategy: {
    ...defaultedWithStatus(defaults),
    validate,
  },
  columns: [
    column('Schedule', (o) => str(spec(o).schedule), { description: 'The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.' }),
    column('Timezone', (o) => str(spec(o).timeZone) || '<none>', { description: 'The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.' }),
    column('Suspend', (o) => (spec(o).suspend === true ? 'True' : 'False'), { type: 'boolean', description: 'This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.' }),
    column('Active', (o) => arr(status(o).active).length, { type: 'integer', description: 'A list of pointers to currently running jobs.' }),
    column('Last Schedule', (o) => (status(o).lastScheduleTime ? humanAge(status(o).lastScheduleTime) : '<none>'), { description: 'Information when was the last time the job was successfully scheduled.' }),
    ...templateColumns((o) => jobTemplate(o).template, (o) => jobTemplate(o).selector),
  ],
});
