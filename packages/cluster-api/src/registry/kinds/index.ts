/** The only list of kinds this server serves: the spec's 13 core kinds, then the extra groups. */
import type { ResourceDefinition } from '../definition.js';
import { certificateSigningRequest, certificateSigningRequestV1beta1 } from './certificate-signing-request.js';
import { clusterRole } from './cluster-role.js';
import { apiService } from './api-service.js';
import { appsServedVersions } from './apps-versions.js';
import { componentStatus } from './component-status.js';
import { configMap } from './config-map.js';
import { controllerRevision } from './controller-revision.js';
import { cronJob } from './cron-job.js';
import { daemonSet } from './daemon-set.js';
import { deployment } from './deployment.js';
import { endpointSlice } from './endpoint-slice.js';
import { endpoints } from './endpoints.js';
import { event, eventsV1 } from './event.js';
import { horizontalPodAutoscaler, horizontalPodAutoscalerV1 } from './horizontal-pod-autoscaler.js';
import { nodeMetrics, podMetrics } from './metrics.js';
import { ingress, ingressClass, ingressExtensions } from './ingress.js';
import { job } from './job.js';
import { lease } from './lease.js';
import { networkPolicy, networkPolicyExtensions } from './network-policy.js';
import { node } from './node.js';
import { podDisruptionBudget, podDisruptionBudgetV1beta1 } from './pod-disruption-budget.js';
import { priorityClass } from './priority-class.js';
import { replicaSet } from './replica-set.js';
import { statefulSet } from './stateful-set.js';
import { storageClass, storageClassV1beta1 } from './storage-class.js';
import { servedAt } from '../versions.js';
import { customResourceDefinition, customResourceDefinitionV1beta1 } from './custom-resource-definition.js';
import { groupKinds } from './groups.js';
import { limitRange } from './limit-range.js';
import { namespace } from './namespace.js';
import { persistentVolumeClaim } from './persistent-volume-claim.js';
import { persistentVolume } from './persistent-volume.js';
import { podTemplate } from './pod-template.js';
import { pod } from './pod.js';
import { replicationController } from './replication-controller.js';
import { resourceQuota } from './resource-quota.js';
import { clusterRoleBinding, roleBinding } from './role-bindings.js';
import { role } from './role.js';
import { secret } from './secret.js';
import { securityContextConstraints } from './security-context-constraints.js';
import { serviceAccount } from './service-account.js';
import { service } from './service.js';

/** In the spec's table order. */
export const coreKinds: readonly ResourceDefinition[] = [
  namespace, serviceAccount, limitRange, resourceQuota, secret, persistentVolumeClaim, persistentVolume, service,
  securityContextConstraints, podTemplate, replicationController, pod, componentStatus,
];

const rbacV1 = [role, clusterRole, roleBinding, clusterRoleBinding];

/** rbac.authorization.k8s.io/v1, what the authorizer decides from (src/auth/), and v1beta1: the same objects. */
export const rbacKinds: readonly ResourceDefinition[] = [...rbacV1, ...rbacV1.map((def) => servedAt(def, { group: def.group, version: 'v1beta1' }))];

/** Kinds real tools need beyond the spec's (issue 18): core/v1 first, then by group. */
export const moreCoreKinds: readonly ResourceDefinition[] = [configMap, endpoints, event, node];

/**
 * Typed kinds of the named groups; a storage version first, then the other group versions it is
 * served at (the same objects, registry/versions.ts).
 */
export const typedGroupKinds: readonly ResourceDefinition[] = [
  deployment, replicaSet, statefulSet, daemonSet, controllerRevision, ...appsServedVersions,
  horizontalPodAutoscaler, horizontalPodAutoscalerV1,
  nodeMetrics, podMetrics,
  job, cronJob, servedAt(cronJob, { group: 'batch', version: 'v2alpha1' }),
  lease,
  endpointSlice,
  eventsV1,
  ingress, ingressClass, networkPolicy, ingressExtensions, networkPolicyExtensions,
  podDisruptionBudget, podDisruptionBudgetV1beta1,
  priorityClass,
  storageClass, storageClassV1beta1,
  apiService,
  certificateSigningRequest, certificateSigningRequestV1beta1,
];

/** Every kind served: core first, then the typed groups, then the schemaless extra groups in the spec's table order, then CRDs. */
export const allKinds: readonly ResourceDefinition[] = [
  ...coreKinds,
  ...moreCoreKinds,
  ...typedGroupKinds,
  ...rbacKinds,
  ...groupKinds,
  customResourceDefinition, customResourceDefinitionV1beta1,
];

export { componentStatus, namespace };
export { ExtraGroups } from './groups.js';
