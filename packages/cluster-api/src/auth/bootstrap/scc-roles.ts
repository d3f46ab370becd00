/**
 * The ClusterRoles OpenShift grants its default SecurityContextConstraints with: `system:openshift:scc:<name>`
 * allows verb `use` on that one SCC; `restricted-v2` is bound to every authenticated user, as OpenShift
 * binds it. Granting another is one RoleBinding or ClusterRoleBinding to its role
 * (`oc adm policy add-scc-to-user privileged -z <sa>` makes the same binding).
 */
import type { KubeObject } from '../../api/meta.js';
import { DefaultSccNames } from '../../admission/security-context-constraints/defaults.js';
import { clusterRole, clusterRoleBinding, group, rule } from './policy-data.js';

export const sccRoleName = (scc: string): string => `system:openshift:scc:${scc}`;

export const sccClusterRoles: readonly KubeObject[] = DefaultSccNames.map((name) =>
  clusterRole(sccRoleName(name), [rule('use', 'security.openshift.io', 'securitycontextconstraints', name)]));

export const sccClusterRoleBindings: readonly KubeObject[] = [clusterRoleBinding(sccRoleName('restricted-v2'), [group('system:authenticated')])];
