/** The only list of kinds this server serves: the spec's 13 core kinds, then the extra groups. */
import type { ResourceDefinition } from '../definition.js';
import { servedAt } from '../versions.js';
import { clusterRole } from './cluster-role.js';
import { componentStatus } from './component-status.js';
import { customResourceDefinition } from './custom-resource-definition.js';
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

/** Every kind served: core first, then the extra groups in the spec's table order. */
export const allKinds: readonly ResourceDefinition[] = [
  ...coreKinds,
  ...rbacKinds,
  ...groupKinds,
  customResourceDefinition,
];

export { componentStatus, namespace };
export { ExtraGroups } from './groups.js';
