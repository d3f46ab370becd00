/**
 * How the bootstrap policy is written down: one rule per line, Kubernetes' bootstrappolicy style
 * (`rule('get list watch', '', 'pods services')`: space-separated verbs, API groups ('' is the core
 * group) and resources), and the labels and annotation every bootstrap object carries.
 */
import type { KubeObject } from '../../api/meta.js';
import { RbacGroup, type PolicyRule, type Subject } from '../../api/rbac-v1.js';

const words = (s: string): string[] => s.split(' ');

export const Read = 'get list watch';
export const ReadWrite = 'create delete deletecollection get list patch update watch';
/** What edit grants on most kinds beyond reading. */
export const Write = 'create delete deletecollection patch update';

export const rule = (verbs: string, groups: string, resources: string, names?: string): PolicyRule => ({
  apiGroups: words(groups),
  resources: words(resources),
  ...(names !== undefined && { resourceNames: words(names) }),
  verbs: words(verbs),
});

export const urls = (verbs: string, paths: string): PolicyRule => ({ nonResourceURLs: words(paths), verbs: words(verbs) });

/** Reconciliation updates objects carrying `"true"` and leaves those an operator set to `"false"`. */
export const AutoUpdate = 'rbac.authorization.kubernetes.io/autoupdate';

const metadata = (name: string, labels: Record<string, string> = {}, namespace?: string): KubeObject['metadata'] => ({
  name,
  ...(namespace && { namespace }),
  labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults', ...labels },
  annotations: { [AutoUpdate]: 'true' },
});

export const aggregateTo = (role: 'admin' | 'edit' | 'view'): Record<string, string> => ({ [`rbac.authorization.k8s.io/aggregate-to-${role}`]: 'true' });

export const clusterRole = (name: string, rules: PolicyRule[], labels?: Record<string, string>): KubeObject => ({
  apiVersion: `${RbacGroup}/v1`,
  kind: 'ClusterRole',
  metadata: metadata(name, labels),
  rules,
});

/** A ClusterRole whose rules the aggregation controller gathers from those labelled `aggregate-to-<into>`. */
export const aggregated = (name: string, into: 'admin' | 'edit' | 'view', labels?: Record<string, string>): KubeObject => ({
  ...clusterRole(name, [], labels),
  aggregationRule: { clusterRoleSelectors: [{ matchLabels: aggregateTo(into) }] },
});

export const role = (namespace: string, name: string, rules: PolicyRule[]): KubeObject => ({
  apiVersion: `${RbacGroup}/v1`,
  kind: 'Role',
  metadata: metadata(name, {}, namespace),
  rules,
});

export const user = (name: string): Subject => ({ apiGroup: RbacGroup, kind: 'User', name });
export const group = (name: string): Subject => ({ apiGroup: RbacGroup, kind: 'Group', name });
export const serviceAccount = (namespace: string, name: string): Subject => ({ kind: 'ServiceAccount', name, namespace });

/** A ClusterRoleBinding of the ClusterRole of the same name, or of `roleName`. */
export const clusterRoleBinding = (name: string, subjects: Subject[], roleName = name): KubeObject => ({
  apiVersion: `${RbacGroup}/v1`,
  kind: 'ClusterRoleBinding',
  metadata: metadata(name),
  roleRef: { apiGroup: RbacGroup, kind: 'ClusterRole', name: roleName },
  subjects,
});

export const roleBinding = (namespace: string, name: string, roleName: string, subjects: Subject[]): KubeObject => ({
  apiVersion: `${RbacGroup}/v1`,
  kind: 'RoleBinding',
  metadata: metadata(name, {}, namespace),
  roleRef: { apiGroup: RbacGroup, kind: 'Role', name: roleName },
  subjects,
});
