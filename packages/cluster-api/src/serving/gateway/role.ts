/**
 * The gateway's identity inside `serve` (`system:serving-gateway`, a token known to the process
 * only, as the embedded scheduler's) and what it may do, as RBAC data the API server creates at
 * start: read Routes, Revisions and DomainMappings, and the Endpoints that list a revision's pods.
 * Nothing more: it writes nothing.
 */
import type { KubeObject } from '../../api/meta.js';

export const GatewayUser = 'system:serving-gateway';
export const GatewayClusterRole = 'cluster-api:serving-gateway';

const read = ['get', 'list', 'watch'];
const rbac = 'rbac.authorization.k8s.io';
const labels = { 'app.kubernetes.io/component': 'gateway', 'app.kubernetes.io/managed-by': 'cluster-api' };

export const GatewayPolicy: { clusterRoles: KubeObject[]; clusterRoleBindings: KubeObject[] } = {
  clusterRoles: [{
    apiVersion: `${rbac}/v1`, kind: 'ClusterRole', metadata: { name: GatewayClusterRole, labels },
    rules: [
      { apiGroups: ['serving.knative.dev'], resources: ['routes', 'revisions', 'domainmappings'], verbs: read },
      { apiGroups: [''], resources: ['endpoints'], verbs: read },
    ],
  } as KubeObject],
  clusterRoleBindings: [{
    apiVersion: `${rbac}/v1`, kind: 'ClusterRoleBinding', metadata: { name: GatewayClusterRole, labels },
    roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: GatewayClusterRole },
    subjects: [{ apiGroup: rbac, kind: 'User', name: GatewayUser }],
  } as KubeObject],
};
