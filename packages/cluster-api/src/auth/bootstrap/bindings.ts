/**
 * Kubernetes' bootstrap ClusterRoleBindings, and the Roles and RoleBindings it keeps in kube-system
 * and kube-public (bootstrappolicy's testdata/cluster-role-bindings.yaml, namespace-roles.yaml and
 * namespace-role-bindings.yaml). Discovery and basic self-review for every authenticated user,
 * `/healthz`, `/livez`, `/readyz` and `/version` for everyone, issuer discovery for service
 * accounts, cluster-admin for system:masters, and kubeadm's TLS bootstrap bindings (bootstrap tokens post
 * node client CSRs that are auto-approved); nothing more for anyone until an administrator binds it.
 */
import type { KubeObject } from '../../api/meta.js';
import { clusterRoleBinding, group, rule, role, roleBinding, serviceAccount, user } from './policy-data.js';

export const bootstrapClusterRoleBindings: readonly KubeObject[] = [
  clusterRoleBinding('cluster-admin', [group('system:masters')]),
  clusterRoleBinding('system:basic-user', [group('system:authenticated')]),
  clusterRoleBinding('system:discovery', [group('system:authenticated')]),
  clusterRoleBinding('system:kube-controller-manager', [user('system:kube-controller-manager')]),
  clusterRoleBinding('system:kube-dns', [serviceAccount('kube-system', 'kube-dns')]),
  clusterRoleBinding('system:kube-scheduler', [user('system:kube-scheduler')]),
  clusterRoleBinding('system:monitoring', [group('system:monitoring')]),
  // Left without subjects since the Node authorizer took nodes over (Kubernetes 1.8).
  clusterRoleBinding('system:node', []),
  clusterRoleBinding('system:node-proxier', [user('system:kube-proxy')]),
  clusterRoleBinding('system:public-info-viewer', [group('system:authenticated'), group('system:unauthenticated')]),
  clusterRoleBinding('system:service-account-issuer-discovery', [group('system:serviceaccounts')]),
  clusterRoleBinding('system:volume-scheduler', [user('system:kube-scheduler')]),
  // TLS bootstrap, as kubeadm binds it: a bootstrap token may post a CSR, and have a node client
  // certificate auto-approved; a node may have its own renewed.
  clusterRoleBinding('kubeadm:kubelet-bootstrap', [group('system:bootstrappers')], 'system:node-bootstrapper'),
  clusterRoleBinding('kubeadm:node-autoapprove-bootstrap', [group('system:bootstrappers')], 'system:certificates.k8s.io:certificatesigningrequests:nodeclient'),
  clusterRoleBinding('kubeadm:node-autoapprove-certificate-rotation', [group('system:nodes')], 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient'),
];

const leaderLocking = [rule('create get list update watch', 'coordination.k8s.io', 'leases'), rule('create get list update watch', 'coordination.k8s.io', 'leasecandidates')];
const events = rule('create patch update', ' events.k8s.io', 'events');

export const bootstrapRoles: readonly KubeObject[] = [
  role('kube-public', 'system:controller:bootstrap-signer', [rule('get list watch', '', 'configmaps'), rule('update', '', 'configmaps', 'cluster-info'), events]),
  role('kube-system', 'extension-apiserver-authentication-reader', [rule('get list watch', '', 'configmaps', 'extension-apiserver-authentication')]),
  role('kube-system', 'system::leader-locking-kube-controller-manager', leaderLocking),
  role('kube-system', 'system::leader-locking-kube-scheduler', leaderLocking),
  role('kube-system', 'system:controller:bootstrap-signer', [rule('get list watch', '', 'secrets')]),
  role('kube-system', 'system:controller:cloud-provider', [rule('create get list watch', '', 'configmaps')]),
  role('kube-system', 'system:controller:token-cleaner', [rule('delete get list watch', '', 'secrets'), events]),
];

export const bootstrapRoleBindings: readonly KubeObject[] = [
  roleBinding('kube-public', 'system:controller:bootstrap-signer', 'system:controller:bootstrap-signer', [serviceAccount('kube-system', 'bootstrap-signer')]),
  roleBinding('kube-system', 'system::extension-apiserver-authentication-reader', 'extension-apiserver-authentication-reader', [
    user('system:kube-controller-manager'), user('system:kube-scheduler'),
  ]),
  roleBinding('kube-system', 'system::leader-locking-kube-controller-manager', 'system::leader-locking-kube-controller-manager', [
    user('system:kube-controller-manager'), serviceAccount('kube-system', 'kube-controller-manager'), serviceAccount('kube-system', 'leader-election-controller'),
  ]),
  roleBinding('kube-system', 'system::leader-locking-kube-scheduler', 'system::leader-locking-kube-scheduler', [
    user('system:kube-scheduler'), serviceAccount('kube-system', 'kube-scheduler'),
  ]),
  roleBinding('kube-system', 'system:controller:bootstrap-signer', 'system:controller:bootstrap-signer', [serviceAccount('kube-system', 'bootstrap-signer')]),
  roleBinding('kube-system', 'system:controller:cloud-provider', 'system:controller:cloud-provider', [serviceAccount('kube-system', 'cloud-provider')]),
  roleBinding('kube-system', 'system:controller:token-cleaner', 'system:controller:token-cleaner', [serviceAccount('kube-system', 'token-cleaner')]),
];
