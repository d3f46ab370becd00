/** The only list of kinds this server serves: the spec's 13 core kinds, then the extra groups. */
import type { ResourceDefinition } from '../definition.js';
import { componentStatus } from './component-status.js';
import { customResourceDefinition } from './custom-resource-definition.js';
import { endpoints } from './endpoints.js';
import { groupKinds } from './groups.js';
import { limitRange } from './limit-range.js';
import { namespace } from './namespace.js';
import { persistentVolumeClaim } from './persistent-volume-claim.js';
import { persistentVolume } from './persistent-volume.js';
import { podTemplate } from './pod-template.js';
import { pod } from './pod.js';
import { replicationController } from './replication-controller.js';
import { resourceQuota } from './resource-quota.js';
import { secret } from './secret.js';
import { securityContextConstraints } from './security-context-constraints.js';
import { serviceAccount } from './service-account.js';
import { service } from './service.js';

/** In the spec's table order. */
export const coreKinds: readonly ResourceDefinition[] = [
  namespace, serviceAccount, limitRange, resourceQuota, secret, persistentVolumeClaim, persistentVolume, service,
  securityContextConstraints, podTemplate, replicationController, pod, componentStatus,
];

/** Every kind served: core first, then the extra groups in the spec's table order. */
export const allKinds: readonly ResourceDefinition[] = [
  ...coreKinds,
  ...groupKinds,
  customResourceDefinition,
  endpoints,
];

export { componentStatus, namespace };
export { ExtraGroups } from './groups.js';
