/**
 * Lease (coordination.k8s.io/v1): what leader election and node heartbeats hold. ValidateLeaseSpec:
 * a positive duration, non-negative transitions; acquire and renew times are MicroTimes
 * (RFC 3339 with microseconds, as client-go writes them).
 */
import type { KubeObject } from '../../api/meta.js';
import { invalidValue, notSupported, type FieldError } from '../generic/validation.js';
import { ownLeaseOnly } from './node-restriction.js';
import { AllVerbs, child, column, inGroup, normalizeMicroTimes, spec, str } from './common.js';

const Strategies = ['OldestEmulationVersion'] as const;
const MicroTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

const validate = (o: KubeObject): FieldError[] => {
  const s = spec(o);
  const errs: FieldError[] = [];
  const d = s.leaseDurationSeconds;
  if (d !== undefined && d !== null && !(Number.isInteger(d) && (d as number) > 0)) errs.push(invalidValue('spec.leaseDurationSeconds', d, 'must be greater than 0'));
  const t = s.leaseTransitions;
  if (t !== undefined && t !== null && !(Number.isInteger(t) && (t as number) >= 0)) errs.push(invalidValue('spec.leaseTransitions', t, 'must be greater than or equal to 0'));
  for (const f of ['acquireTime', 'renewTime']) {
    const v = s[f];
    if (v !== undefined && v !== null && !(typeof v === 'string' && MicroTime.test(v) && !Number.isNaN(Date.parse(v)))) {
      errs.push(invalidValue(`spec.${f}`, v, 'must be an RFC 3339 time with microseconds, e.g. 2006-01-02T15:04:05.000000Z'));
    }
  }
  if (s.strategy !== undefined && s.strategy !== null && !Strategies.includes(s.strategy as never)) errs.push(notSupported('spec.strategy', s.strategy, Strategies));
  if (s.preferredHolder && !s.strategy) errs.push(invalidValue('spec.preferredHolder', s.preferredHolder, 'may only be specified if `strategy` is defined'));
  return errs;
};

export const lease = inGroup('coordination.k8s.io', 'v1')({
  kind: 'Lease',
  plural: 'leases',
  singular: 'lease',
  namespaced: true,
  verbs: AllVerbs,
  fields: ['spec'],
  strategy: { validate, canonicalize: (o) => normalizeMicroTimes(child(o, 'spec'), ['acquireTime', 'renewTime']) },
  hooks: { admit: ownLeaseOnly },
  columns: [column('Holder', (o) => str(spec(o).holderIdentity), { description: 'holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.' })],
});
