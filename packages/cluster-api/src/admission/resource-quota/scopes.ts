/**
 * Which objects a ResourceQuota counts: its `scopes` and `scopeSelector` (all must match). Scopes
 * select pods only — a quota with any scope counts no other kind, as kube's generic evaluators match
 * no scope. Terminating: `activeDeadlineSeconds` set; BestEffort: no container requests or limits
 * cpu or memory; PriorityClass: by `priorityClassName`; CrossNamespacePodAffinity: affinity terms
 * that reach other namespaces.
 */
import type { KubeObject } from '../../api/meta.js';
import { arr, obj, spec, str, type Obj } from '../../registry/kinds/common.js';

interface ScopeRequirement {
  scopeName: string;
  operator: string;
  values: string[];
}

/** spec.scopes as `Exists` requirements, then the selector's own. */
const requirements = (quota: KubeObject): ScopeRequirement[] => [
  ...arr(spec(quota).scopes).map((s) => ({ scopeName: str(s), operator: 'Exists', values: [] })),
  ...arr(obj(spec(quota).scopeSelector).matchExpressions).map(obj).map((e) => ({ scopeName: str(e.scopeName), operator: str(e.operator), values: arr(e.values).map(str) })),
];

const isBestEffort = (podSpec: Obj): boolean =>
  [...arr(podSpec.containers), ...arr(podSpec.initContainers)].map(obj).every((c) => {
    const r = obj(c.resources);
    return ['cpu', 'memory'].every((k) => !(k in obj(r.requests)) && !(k in obj(r.limits)));
  });

const crossNamespaceAffinity = (podSpec: Obj): boolean => {
  const affinity = obj(podSpec.affinity);
  return ['podAffinity', 'podAntiAffinity'].some((kind) => {
    const a = obj(affinity[kind]);
    const terms = [
      ...arr(a.requiredDuringSchedulingIgnoredDuringExecution).map(obj),
      ...arr(a.preferredDuringSchedulingIgnoredDuringExecution).map((t) => obj(obj(t).podAffinityTerm)),
    ];
    return terms.some((t) => arr(t.namespaces).length > 0 || t.namespaceSelector !== undefined);
  });
};

/** Whether a pod is in one scope (the `Exists` sense of it). */
const inScope = (scope: string, pod: KubeObject): boolean => {
  const s = spec(pod);
  switch (scope) {
    case 'Terminating': return typeof s.activeDeadlineSeconds === 'number' && s.activeDeadlineSeconds >= 0;
    case 'NotTerminating': return !(typeof s.activeDeadlineSeconds === 'number' && s.activeDeadlineSeconds >= 0);
    case 'BestEffort': return isBestEffort(s);
    case 'NotBestEffort': return !isBestEffort(s);
    case 'PriorityClass': return str(s.priorityClassName) !== '';
    case 'CrossNamespacePodAffinity': return crossNamespaceAffinity(s);
    default: return false;
  }
};

const matches = (r: ScopeRequirement, pod: KubeObject): boolean => {
  if (r.scopeName === 'PriorityClass' && (r.operator === 'In' || r.operator === 'NotIn')) {
    const has = r.values.includes(str(spec(pod).priorityClassName));
    return r.operator === 'In' ? has : !has;
  }
  if (r.operator === 'Exists') return inScope(r.scopeName, pod);
  if (r.operator === 'DoesNotExist') return !inScope(r.scopeName, pod);
  return false;
};

/** Whether `quota` counts `o` (of `group`/`plural`) at all. */
export const quotaSelects = (quota: KubeObject, group: string, plural: string, o: KubeObject): boolean => {
  const reqs = requirements(quota);
  if (reqs.length === 0) return true;
  if (group !== '' || plural !== 'pods') return false;
  return reqs.every((r) => matches(r, o));
};
