/**
 * PolicyRule arithmetic, as Kubernetes has it (pkg/apis/rbac/v1 evaluation helpers and
 * component-helpers' policy comparator): whether a rule allows a request, whether one set of rules
 * covers another (escalation checks), and the compact form kubectl and the escalation message print.
 */
import type { PolicyRule } from '../../api/rbac-v1.js';
import type { Attributes } from '../authorization.js';

const All = '*';

const has = (set: readonly string[] | undefined, value: string): boolean => set !== undefined && set.includes(value);

const hasAll = (set: readonly string[] | undefined, values: readonly string[] | undefined): boolean =>
  (values ?? []).every((v) => has(set, v));

export const verbMatches = (rule: PolicyRule, verb: string): boolean => has(rule.verbs, All) || has(rule.verbs, verb);

export const apiGroupMatches = (rule: PolicyRule, group: string): boolean => has(rule.apiGroups, All) || has(rule.apiGroups, group);

/** `resource/subresource` against the rule's resources: exact, `*`, or `*` then `/subresource` (any resource's subresource). */
export const resourceMatches = (rule: PolicyRule, combined: string, subresource: string): boolean => {
  for (const r of rule.resources ?? []) {
    if (r === All || r === combined) return true;
    if (subresource && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
};

/** No resourceNames: any name (an unnamed list or create too); otherwise only those names. */
export const resourceNameMatches = (rule: PolicyRule, name: string): boolean =>
  !rule.resourceNames || rule.resourceNames.length === 0 || rule.resourceNames.includes(name);

/** Exact, `*`, or a prefix ending in `*` (the `*` only as the last character counts). */
export const nonResourceURLMatches = (rule: PolicyRule, path: string): boolean => {
  for (const url of rule.nonResourceURLs ?? []) {
    if (url === All || url === path) return true;
    if (url.endsWith('*') && path.startsWith(url.replace(/\*+$/, ''))) return true;
  }
  return false;
};

/** plugin/pkg/auth/authorizer/rbac.RuleAllows. */
export const ruleAllows = (attrs: Attributes, rule: PolicyRule): boolean => {
  if (!verbMatches(rule, attrs.verb)) return false;
  if (!attrs.resourceRequest) return nonResourceURLMatches(rule, attrs.path);
  const combined = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  return apiGroupMatches(rule, attrs.apiGroup) && resourceMatches(rule, combined, attrs.subresource) && resourceNameMatches(rule, attrs.name);
};

/** Rules of at most one verb, one group, one resource and one name each (or one verb and one URL). */
export const breakdownRule = (rule: PolicyRule): PolicyRule[] => {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? [])
    for (const resource of rule.resources ?? [])
      for (const verb of rule.verbs ?? []) {
        if (rule.resourceNames?.length) for (const name of rule.resourceNames) out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] });
        else out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
      }
  for (const url of rule.nonResourceURLs ?? []) for (const verb of rule.verbs ?? []) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
};

const resourceCoversAll = (owner: readonly string[] | undefined, wanted: readonly string[] | undefined): boolean => {
  if (has(owner, All) || hasAll(owner, wanted)) return true;
  return (wanted ?? []).every((path) => {
    if (has(owner, path)) return true;
    const slash = path.indexOf('/');
    return slash >= 0 && has(owner, `*/${path.slice(slash + 1)}`);
  });
};

const urlCovers = (owner: string, path: string): boolean =>
  owner === path || (owner.endsWith('*') && path.startsWith(owner.replace(/\*+$/, '')));

const ruleCovers = (owner: PolicyRule, sub: PolicyRule): boolean => {
  const verbs = has(owner.verbs, All) || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, All) || hasAll(owner.apiGroups, sub.apiGroups);
  const urls = (sub.nonResourceURLs ?? []).every((u) => (owner.nonResourceURLs ?? []).some((o) => urlCovers(o, u)));
  const names = sub.resourceNames?.length ? !owner.resourceNames?.length || hasAll(owner.resourceNames, sub.resourceNames) : !owner.resourceNames?.length;
  return verbs && groups && resourceCoversAll(owner.resources, sub.resources) && names && urls;
};

/** The broken-down servant rules no owner rule covers; empty when the owner holds everything. */
export const uncovered = (owner: readonly PolicyRule[], servant: readonly PolicyRule[]): PolicyRule[] =>
  servant.flatMap(breakdownRule).filter((sub) => !owner.some((o) => ruleCovers(o, sub)));

/** Rules of one group and one resource that differ only by verb, merged (pkg/registry/rbac/validation.CompactRules). */
export const compactRules = (rules: readonly PolicyRule[]): PolicyRule[] => {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const rule of rules) {
    const isSimple = !rule.resourceNames?.length && !rule.nonResourceURLs?.length && rule.apiGroups?.length === 1 && rule.resources?.length === 1;
    if (!isSimple) {
      out.push(rule);
      continue;
    }
    const key = `${rule.apiGroups![0]}\u0000${rule.resources![0]}`;
    const seen = simple.get(key);
    if (seen) seen.verbs = [...(seen.verbs ?? []), ...(rule.verbs ?? [])];
    else simple.set(key, { apiGroups: [...rule.apiGroups!], resources: [...rule.resources!], verbs: [...(rule.verbs ?? [])] });
  }
  return [...out, ...simple.values()];
};

/** Go's %q of a []string: `["a" "b"]`. */
const quoted = (list: readonly string[]): string => `[${list.map((s) => JSON.stringify(s)).join(' ')}]`;

/** rbacv1helpers.CompactString: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`. */
export const compactString = (rule: PolicyRule): string => {
  const parts: string[] = [];
  if (rule.apiGroups?.length) parts.push(`APIGroups:${quoted(rule.apiGroups)}`);
  if (rule.resources?.length) parts.push(`Resources:${quoted(rule.resources)}`);
  if (rule.nonResourceURLs?.length) parts.push(`NonResourceURLs:${quoted(rule.nonResourceURLs)}`);
  if (rule.resourceNames?.length) parts.push(`ResourceNames:${quoted(rule.resourceNames)}`);
  if (rule.verbs?.length) parts.push(`Verbs:${quoted(rule.verbs)}`);
  return `{${parts.join(', ')}}`;
};
