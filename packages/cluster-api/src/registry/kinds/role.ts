/** Role: namespaced rules, written only by who holds them (or may `escalate`). */
import { roleEscalationCheck } from '../rbac/escalation.js';
import { AllVerbs } from './common.js';
import { pathSegmentName, rbac, roleColumns, validateRules } from './rbac-common.js';

export const role = rbac({
  kind: 'Role',
  plural: 'roles',
  singular: 'role',
  namespaced: true,
  verbs: AllVerbs,
  fields: ['rules'],
  nameRule: pathSegmentName,
  strategy: { validate: (o) => validateRules(o, true) },
  hooks: { admit: roleEscalationCheck('roles') },
  columns: roleColumns,
  // NAME, CREATED AT and no AGE: Kubernetes' role printer.
  columnLayout: 'declared',
});
