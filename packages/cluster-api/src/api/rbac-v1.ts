/**
 * rbac.authorization.k8s.io/v1 wire types (k8s.io/api/rbac/v1), as clients send and receive them.
 * Every field is optional on the wire; the kinds' strategies validate what is required.
 */
import type { LabelSelector } from '@func/kube-client';
import type { KubeObject } from './meta.js';

export const RbacGroup = 'rbac.authorization.k8s.io';

/** Who a rule lets do what: on resources (apiGroups, resources, resourceNames) or on non-resource URLs. */
export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind?: string;
  apiGroup?: string;
  name?: string;
  namespace?: string;
}

export interface RoleRef {
  apiGroup?: string;
  kind?: string;
  name?: string;
}

export interface AggregationRule {
  clusterRoleSelectors?: LabelSelector[];
}

export interface Role extends KubeObject {
  rules?: PolicyRule[] | null;
}

export interface ClusterRole extends Role {
  aggregationRule?: AggregationRule;
}

export interface RoleBinding extends KubeObject {
  subjects?: Subject[];
  roleRef?: RoleRef;
}

export type ClusterRoleBinding = RoleBinding;
