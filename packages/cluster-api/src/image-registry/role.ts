/**
 * The registry's identity inside `serve` (`system:image-registry`, a token known to the process
 * only, as the gateway's) and what it may do, as RBAC data the API server creates at start: ask the
 * API server about tokens and access (TokenReview, SubjectAccessReview: the bootstrap
 * `system:auth-delegator` role, as an aggregated API server is bound). Nothing more.
 */
import type { KubeObject } from '../api/meta.js';

export const RegistryUser = 'system:image-registry';
const BindingName = 'cluster-api:image-registry';
const rbac = 'rbac.authorization.k8s.io';
const labels = { 'app.kubernetes.io/component': 'registry', 'app.kubernetes.io/managed-by': 'cluster-api' };

export const RegistryPolicy: { clusterRoleBindings: KubeObject[] } = {
  clusterRoleBindings: [{
    apiVersion: `${rbac}/v1`, kind: 'ClusterRoleBinding', metadata: { name: BindingName, labels },
    roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'system:auth-delegator' },
    subjects: [{ apiGroup: rbac, kind: 'User', name: RegistryUser }],
  } as KubeObject],
};
