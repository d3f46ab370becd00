/**
 * Knative's "living" condition sets (knative.dev/pkg/apis.NewLivingConditionSet) as a pure function:
 * `Ready` summarises the dependent conditions. Any dependent False makes Ready False with that
 * condition's reason and message; else any Unknown makes it Unknown the same way; else it is True.
 * Dependents are looked at in the order given, so Ready names the first thing to fix.
 *
 * As in knative.dev/pkg, conditions are sorted by type and `lastTransitionTime` moves only when a
 * condition's status changes, so writing the same status twice is a no-op for the API server.
 */
import type { Condition } from '../types.js';

export type ConditionStatus = Condition['status'];

/** One dependent's state, before times and sorting. */
export interface Mark {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason?: string;
  readonly message?: string;
}

export const mark = {
  true: (type: string, reason?: string, message?: string): Mark => ({ type, status: 'True', reason, message }),
  false: (type: string, reason: string, message: string): Mark => ({ type, status: 'False', reason, message }),
  unknown: (type: string, reason: string, message: string): Mark => ({ type, status: 'Unknown', reason, message }),
};

function ready(marks: readonly Mark[]): Mark {
  const failed = marks.find((m) => m.status === 'False');
  if (failed) return { type: 'Ready', status: 'False', reason: failed.reason, message: failed.message };
  const unknown = marks.find((m) => m.status === 'Unknown');
  if (unknown) return { type: 'Ready', status: 'Unknown', reason: unknown.reason, message: unknown.message };
  return { type: 'Ready', status: 'True' };
}

function toCondition(m: Mark, previous: readonly Condition[] | undefined, now: string): Condition {
  const before = previous?.find((c) => c.type === m.type);
  const c: Condition = { type: m.type, status: m.status };
  if (m.reason) c.reason = m.reason;
  if (m.message) c.message = m.message;
  c.lastTransitionTime = before && before.status === m.status && before.lastTransitionTime ? before.lastTransitionTime : now;
  return c;
}

/** The full condition list: the dependents as marked plus Ready, sorted by type. */
export function livingConditions(marks: readonly Mark[], previous: readonly Condition[] | undefined, now: string): Condition[] {
  return [...marks, ready(marks)].map((m) => toCondition(m, previous, now)).sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
}

/** The Ready condition of a status, if any. */
export function readyCondition(conditions: readonly Condition[] | undefined): Condition | undefined {
  return conditions?.find((c) => c.type === 'Ready');
}
