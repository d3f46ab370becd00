/**
 * kube-apiserver's naming controller: the names a CRD asks for are accepted unless another CRD of the
 * same group (or a built-in resource of it) already holds them; names it holds already stay its own.
 * Established follows once the names are accepted (the CRD controller serves the resource first).
 */
import type { KubeObject } from '../../api/meta.js';
import { conditionOf, specOf, statusOf, type CrdCondition, type CrdNames } from './types.js';

/** Names taken in a group: resources (plural, singular, short names) and kinds (kind, listKind). */
export interface UsedNames {
  resources: Set<string>;
  kinds: Set<string>;
}

export interface NamingResult {
  accepted: Partial<CrdNames>;
  namesAccepted: CrdCondition;
  established: CrdCondition;
}

const fresh = (requested: string | undefined, accepted: string | undefined, used: Set<string>): string | undefined =>
  requested === accepted || !requested || !used.has(requested) ? undefined : `"${requested}" is already in use`;

/** calculateNamesAndConditions: the names `crd` may have given what `used` holds, and its two conditions. */
export const nameCrd = (crd: KubeObject, used: UsedNames): NamingResult => {
  const requested = specOf(crd).names;
  const was = statusOf(crd).acceptedNames ?? {};
  const accepted: Partial<CrdNames> = { ...was };
  let conflict: { reason: string; message: string } | undefined;
  const take = (field: 'plural' | 'singular' | 'kind' | 'listKind', set: Set<string>, reason: string) => {
    const err = fresh(requested[field], was[field], set);
    if (err) conflict = { reason, message: err };
    else accepted[field] = requested[field];
  };
  take('plural', used.resources, 'PluralConflict');
  take('singular', used.resources, 'SingularConflict');
  const taken = (requested.shortNames ?? []).filter((s) => !(was.shortNames ?? []).includes(s) && used.resources.has(s));
  if (taken.length) conflict = { reason: 'ShortNamesConflict', message: taken.map((s) => `"${s}" is already in use`).join(', ') };
  else accepted.shortNames = requested.shortNames;
  take('kind', used.kinds, 'KindConflict');
  take('listKind', used.kinds, 'ListKindConflict');
  accepted.categories = requested.categories;
  const namesAccepted: CrdCondition = conflict
    ? { type: 'NamesAccepted', status: 'False', ...conflict }
    : { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' };
  const old = conditionOf(crd, 'Established');
  const established: CrdCondition = old?.status === 'True'
    ? old
    : namesAccepted.status === 'True'
      ? { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }
      : { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' };
  return { accepted, namesAccepted, established };
};

/** The names a served definition holds in its group. */
export const addUsed = (used: UsedNames, names: { plural?: string; singular?: string; kind?: string; listKind?: string; shortNames?: readonly string[] }): void => {
  for (const n of [names.plural, names.singular, ...(names.shortNames ?? [])]) if (n) used.resources.add(n);
  for (const k of [names.kind, names.listKind]) if (k) used.kinds.add(k);
};
