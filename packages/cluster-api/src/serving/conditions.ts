/**
 * Knative's conditions (knative.dev/pkg/apis Condition and its "living" condition sets): each
 * {type, status, severity?, lastTransitionTime, reason?, message?}, the time moving only when the
 * status does, and `Ready` the conjunction of a kind's dependent conditions: False when one is
 * False (its reason and message), Unknown while one is Unknown, True when all are.
 */
import { timestamp } from '../registry/generic/meta.js';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface Marked {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
}

export const isTrue = (conditions: readonly Condition[] | undefined, type: string): boolean =>
  (conditions ?? []).some((c) => c.type === type && c.status === 'True');

export const conditionOf = (o: { status?: { conditions?: Condition[] } }, type: string): Condition | undefined =>
  (o.status?.conditions ?? []).find((c) => c.type === type);

/**
 * The conditions `marked` plus `Ready` aggregated over them (or as marked, for a kind whose only
 * condition is Ready), and the `informational` ones Ready does not depend on (a Revision's
 * Active), keeping each unchanged condition's
 * lastTransitionTime from `previous`, sorted by type as Knative writes them.
 */
export function conditionSet(previous: readonly Condition[] | undefined, marked: readonly Marked[], informational: readonly Marked[] = []): Condition[] {
  const own = marked.find((m) => m.type === 'Ready');
  const deps = marked.filter((m) => m.type !== 'Ready');
  const failed = deps.find((m) => m.status === 'False');
  const unknown = deps.find((m) => m.status === 'Unknown');
  const readyOf: Marked = own ?? (failed ? { ...failed, type: 'Ready' } : unknown ? { ...unknown, type: 'Ready' } : { type: 'Ready', status: 'True' });
  const now = timestamp();
  return [...deps, readyOf, ...informational]
    .map((m) => {
      const before = (previous ?? []).find((c) => c.type === m.type);
      const c: Condition = { type: m.type, status: m.status, ...(m.reason && { reason: m.reason }), ...(m.message && { message: m.message }) };
      return { ...c, lastTransitionTime: before && before.status === m.status ? (before.lastTransitionTime ?? now) : now };
    })
    .sort((a, b) => a.type.localeCompare(b.type));
}
