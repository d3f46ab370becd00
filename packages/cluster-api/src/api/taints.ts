/**
 * Taints, tolerations and node selector terms as k8s.io/api/core/v1 and component-helpers define
 * them (Toleration.ToleratesTaint, MatchNodeSelectorTerms): the scheduler filters with them and the
 * node lifecycle controller decides evictions with them.
 */

export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export interface SelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: SelectorRequirement[];
  matchFields?: SelectorRequirement[];
}

/** Toleration.ToleratesTaint. */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  const op = t.operator || 'Equal';
  if (op === 'Exists') return true;
  return op === 'Equal' && (t.value ?? '') === (taint.value ?? '');
}

export const toleratedBy = (tolerations: readonly Toleration[] | undefined, taint: Taint): boolean =>
  (tolerations ?? []).some((t) => tolerates(t, taint));

/** `{key: value}` as kube-scheduler prints an untolerated taint. */
export const describeTaint = (t: Taint): string => `{${t.key}: ${t.value ?? ''}}`;

function requirementMatches(r: SelectorRequirement, get: (key: string) => string | undefined): boolean {
  const v = get(r.key);
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In': return v !== undefined && values.includes(v);
    case 'NotIn': return v === undefined || !values.includes(v);
    case 'Exists': return v !== undefined;
    case 'DoesNotExist': return v === undefined;
    case 'Gt': case 'Lt': {
      if (v === undefined || values.length !== 1 || !/^-?\d+$/.test(v) || !/^-?\d+$/.test(values[0]!)) return false;
      return r.operator === 'Gt' ? Number(v) > Number(values[0]) : Number(v) < Number(values[0]);
    }
    default: return false;
  }
}

/** A term matches when it names at least one requirement and all of them hold; terms are ORed. */
export function matchesTerms(terms: readonly NodeSelectorTerm[], labels: Record<string, string>, name: string): boolean {
  return terms.some((term) => {
    const exprs = term.matchExpressions ?? [];
    const fields = term.matchFields ?? [];
    if (exprs.length === 0 && fields.length === 0) return false;
    return exprs.every((r) => requirementMatches(r, (k) => labels[k])) && fields.every((r) => requirementMatches(r, (k) => (k === 'metadata.name' ? name : undefined)));
  });
}
