/**
 * RoleBinding (grants a Role or ClusterRole in its namespace) and ClusterRoleBinding (grants a
 * ClusterRole everywhere): one shape, written only by who holds the bound role's permissions (or may
 * `bind` it); the roleRef never changes.
 */
import type { RoleBinding } from '../../api/rbac-v1.js';
import { bindingEscalationCheck } from '../rbac/escalation.js';
import { AllVerbs } from './common.js';
import { bindingColumns, defaultBinding, pathSegmentName, rbac, validateBinding, validateRoleRefUnchanged } from './rbac-common.js';

const binding = (kind: 'RoleBinding' | 'ClusterRoleBinding', roleKinds: readonly string[]) => {
  const namespaced = kind === 'RoleBinding';
  const plural = namespaced ? 'rolebindings' : 'clusterrolebindings';
  return rbac({
    kind,
    plural,
    singular: kind.toLowerCase(),
    namespaced,
    verbs: AllVerbs,
    fields: ['subjects', 'roleRef'],
    nameRule: pathSegmentName,
    strategy: {
      prepareForCreate: defaultBinding,
      prepareForUpdate: defaultBinding,
      validate: (o) => validateBinding(o as RoleBinding, roleKinds, namespaced),
      validateUpdate: (o, old) => validateRoleRefUnchanged(o as RoleBinding, old as RoleBinding),
    },
    hooks: { admit: bindingEscalationCheck(plural) },
    columns: bindingColumns,
  });
};

export const roleBinding = binding('RoleBinding', ['Role', 'ClusterRole']);
export const clusterRoleBinding = binding('ClusterRoleBinding', ['ClusterRole']);
