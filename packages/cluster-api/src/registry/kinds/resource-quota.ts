/** ResourceQuota: aggregate limits per namespace; status (hard/used) is written through /status. */
import type { KubeObject } from '../../api/meta.js';
import { notSupported, type FieldError } from '../generic/validation.js';
import { AllVerbs, arr, column, core, obj, spec, status } from './common.js';
import { statusSubresource } from '../subresources/status.js';
import { validateResourceList } from './quantities.js';
import { ageColumn } from './columns.js';

const Scopes = ['BestEffort', 'CrossNamespacePodAffinity', 'NotBestEffort', 'NotTerminating', 'PriorityClass', 'Terminating'] as const;

const validate = (o: KubeObject): FieldError[] => [
  ...validateResourceList(spec(o).hard, 'spec.hard'),
  ...arr(spec(o).scopes).flatMap((s, i) => (Scopes.includes(s as never) ? [] : [notSupported(`spec.scopes[${i}]`, s, Scopes)])),
];

/** `requests.cpu: 0/1` pairs, as kubectl's quota printer shows them. */
const usage = (o: KubeObject, limits: boolean): string =>
  Object.entries(obj(status(o).hard))
    .filter(([k]) => k.startsWith('limits.') === limits)
    .map(([k, v]) => `${k}: ${String(obj(status(o).used)[k] ?? 0)}/${String(v)}`)
    .join(', ');

export const resourceQuota = core({
  kind: 'ResourceQuota',
  plural: 'resourcequotas',
  singular: 'resourcequota',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['quota'],
  subresources: {
    status: statusSubresource({
      validate: (o) => [...validateResourceList(status(o).hard, 'status.hard'), ...validateResourceList(status(o).used, 'status.used')],
    }),
  },
  strategy: {
    // With no quota controller here, status.hard follows spec.hard as the controller would set it.
    prepareForCreate(o) {
      o.status = { hard: obj(spec(o).hard), used: {} };
    },
    prepareForUpdate(o) {
      o.status = { ...obj(o.status), hard: obj(spec(o).hard) };
    },
    validate,
  },
  // resourceQuotaColumnDefinitions: Age before Request and Limit.
  columnLayout: 'declared',
  columns: [ageColumn, column('Request', (o) => usage(o, false)), column('Limit', (o) => usage(o, true))],
});
