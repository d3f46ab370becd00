/**
 * ClusterRole: cluster-wide rules, also over non-resource URLs. With an aggregationRule its rules are
 * the union of the ClusterRoles its selectors match, kept so by the aggregation controller
 * (src/controllers/clusterrole-aggregation/aggregation.ts); setting one needs full authority.
 */
import type { ClusterRole } from '../../api/rbac-v1.js';
import { validateLabelSelector } from '../generic/label-selector.js';
import { required, type FieldError } from '../generic/validation.js';
import { roleEscalationCheck } from '../rbac/escalation.js';
import { AllVerbs, arr, obj } from './common.js';
import { pathSegmentName, rbac, roleColumns, validateRules } from './rbac-common.js';

const validateAggregation = (o: ClusterRole): FieldError[] => {
  if (o.aggregationRule === undefined || o.aggregationRule === null) return [];
  const selectors = arr(obj(o.aggregationRule).clusterRoleSelectors);
  const at = 'aggregationRule.clusterRoleSelectors';
  if (selectors.length === 0) return [required(at, 'at least one clusterRoleSelector required if aggregationRule is non-nil')];
  return selectors.flatMap((s, i) => validateLabelSelector(obj(s), `${at}[${i}]`));
};

export const clusterRole = rbac({
  kind: 'ClusterRole',
  plural: 'clusterroles',
  singular: 'clusterrole',
  namespaced: false,
  verbs: AllVerbs,
  fields: ['rules', 'aggregationRule'],
  nameRule: pathSegmentName,
  strategy: { validate: (o) => [...validateRules(o, false), ...validateAggregation(o)] },
  hooks: { admit: roleEscalationCheck('clusterroles') },
  columns: roleColumns,
  // NAME, CREATED AT and no AGE: Kubernetes' role printer.
  columnLayout: 'declared',
});
