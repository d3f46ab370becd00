/**
 * What the four RBAC kinds share (pkg/apis/rbac/validation and the v1 defaults): the name rule, rule
 * and binding validation with Kubernetes' messages, defaulting of API groups, and `rbac()`.
 */
import type { KubeObject } from '../../api/meta.js';
import { RbacGroup, type PolicyRule, type RoleBinding, type RoleRef, type Subject } from '../../api/rbac-v1.js';
import type { ResourceDefinition } from '../definition.js';
import { check, isDNS1123Subdomain, isValidPathSegmentName, notSupported, required, invalidValue, type FieldError } from '../generic/validation.js';
import { arr, column, obj, str } from './common.js';

type RbacInput = Omit<ResourceDefinition, 'group' | 'version' | 'listKind'>;

/** An rbac.authorization.k8s.io/v1 definition. */
export const rbac = (def: RbacInput): ResourceDefinition => ({ group: RbacGroup, version: 'v1', listKind: `${def.kind}List`, ...def });

/** RBAC names may hold `:` (`system:basic-user`): any valid path segment. */
export const pathSegmentName = isValidPathSegmentName;

/** field.Invalid of a []string, which Go prints with %#v. */
const invalidList = (field: string, list: readonly string[], detail: string): FieldError => ({
  type: 'FieldValueInvalid',
  field,
  message: `Invalid value: []string{${list.map((s) => JSON.stringify(s)).join(', ')}}: ${detail}`,
});

const len = (v: unknown): number => arr(v).length;

/** ValidatePolicyRule: a rule is about resources or about non-resource URLs, never both. */
export const validateRule = (rule: PolicyRule, namespaced: boolean, at: string): FieldError[] => {
  const errs: FieldError[] = [];
  if (len(rule.verbs) === 0) errs.push(required(`${at}.verbs`, 'verbs must contain at least one value'));
  if (len(rule.nonResourceURLs) > 0) {
    const urls = arr(rule.nonResourceURLs).map(String);
    if (namespaced) errs.push(invalidList(`${at}.nonResourceURLs`, urls, 'namespaced rules cannot apply to non-resource URLs'));
    if (len(rule.apiGroups) > 0 || len(rule.resources) > 0 || len(rule.resourceNames) > 0)
      errs.push(invalidList(`${at}.nonResourceURLs`, urls, 'rules cannot apply to both regular resources and non-resource URLs'));
    return errs;
  }
  if (len(rule.apiGroups) === 0) errs.push(required(`${at}.apiGroups`, 'resource rules must supply at least one api group'));
  if (len(rule.resources) === 0) errs.push(required(`${at}.resources`, 'resource rules must supply at least one resource'));
  return errs;
};

export const validateRules = (o: KubeObject, namespaced: boolean): FieldError[] =>
  arr(o.rules).flatMap((r, i) => validateRule(obj(r) as PolicyRule, namespaced, `rules[${i}]`));

const validateSubject = (s: Subject, namespaced: boolean, at: string): FieldError[] => {
  const errs: FieldError[] = [];
  if (!s.name) errs.push(required(`${at}.name`));
  switch (s.kind) {
    case 'ServiceAccount':
      if (s.name) errs.push(...check(`${at}.name`, s.name, isDNS1123Subdomain));
      if (s.apiGroup) errs.push(notSupported(`${at}.apiGroup`, s.apiGroup, ['']));
      if (!namespaced && !s.namespace) errs.push(required(`${at}.namespace`));
      break;
    case 'User':
    case 'Group':
      if (!s.name) errs.push(invalidValue(`${at}.name`, '', `${s.kind.toLowerCase()} name cannot be empty`));
      if (s.apiGroup !== RbacGroup) errs.push(notSupported(`${at}.apiGroup`, s.apiGroup ?? '', [RbacGroup]));
      break;
    default:
      errs.push(notSupported(`${at}.kind`, s.kind ?? '', ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
};

/** ValidateRoleBinding / ValidateClusterRoleBinding: `kinds` are the role kinds the binding may name. */
export const validateBinding = (o: RoleBinding, kinds: readonly string[], namespaced: boolean): FieldError[] => {
  const ref = obj(o.roleRef) as RoleRef;
  const errs: FieldError[] = [];
  if (ref.apiGroup !== RbacGroup) errs.push(notSupported('roleRef.apiGroup', ref.apiGroup ?? '', [RbacGroup]));
  if (!kinds.includes(str(ref.kind))) errs.push(notSupported('roleRef.kind', ref.kind ?? '', kinds));
  if (!ref.name) errs.push(required('roleRef.name'));
  else errs.push(...check('roleRef.name', ref.name, pathSegmentName));
  arr(o.subjects).forEach((s, i) => errs.push(...validateSubject(obj(s) as Subject, namespaced, `subjects[${i}]`)));
  return errs;
};

/** roleRef never changes: a binding to another role is a new binding (Go prints the struct with %#v). */
export const validateRoleRefUnchanged = (o: RoleBinding, old: RoleBinding): FieldError[] => {
  const [a, b] = [obj(o.roleRef), obj(old.roleRef)];
  if (a.apiGroup === b.apiGroup && a.kind === b.kind && a.name === b.name) return [];
  const shown = `rbac.RoleRef{APIGroup:${JSON.stringify(str(a.apiGroup))}, Kind:${JSON.stringify(str(a.kind))}, Name:${JSON.stringify(str(a.name))}}`;
  return [{ type: 'FieldValueInvalid', field: 'roleRef', message: `Invalid value: ${shown}: cannot change roleRef` }];
};

/** SetDefaults_Subject and the bindings' roleRef default. */
export const defaultBinding = (o: KubeObject): void => {
  const ref = obj(o.roleRef);
  if (o.roleRef && !ref.apiGroup) ref.apiGroup = RbacGroup;
  for (const s of arr(o.subjects).map(obj)) if (!s.apiGroup && (s.kind === 'User' || s.kind === 'Group')) s.apiGroup = RbacGroup;
};

/** rbac.SubjectsStrings, for the wide columns: users, groups, and service accounts as `ns/name`. */
const subjects = (o: KubeObject, kind: string): string =>
  arr(o.subjects).map(obj).filter((s) => s.kind === kind)
    .map((s) => (kind === 'ServiceAccount' && s.namespace ? `${str(s.namespace)}/${str(s.name)}` : str(s.name))).join(', ');

/** `kubectl get rolebindings`: ROLE, AGE, and -o wide USERS, GROUPS, SERVICEACCOUNTS. */
export const bindingColumns = [
  column('Role', (o) => `${str(obj(o.roleRef).kind)}/${str(obj(o.roleRef).name)}`, { description: 'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.' }),
  column('Users', (o) => subjects(o, 'User'), { priority: 1, description: 'Users in the roleBinding' }),
  column('Groups', (o) => subjects(o, 'Group'), { priority: 1, description: 'Groups in the roleBinding' }),
  column('ServiceAccounts', (o) => subjects(o, 'ServiceAccount'), { priority: 1, description: 'ServiceAccounts in the roleBinding' }),
];

/** `kubectl get roles`: CREATED AT after NAME, with no AGE (the kinds declare `columnLayout: 'declared'`). */
export const roleColumns = [
  column('Created At', (o) => (o.metadata.creationTimestamp ? new Date(o.metadata.creationTimestamp).toISOString().replace(/\.\d{3}Z$/, 'Z') : ''), {
    type: 'date',
    description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  }),
];
