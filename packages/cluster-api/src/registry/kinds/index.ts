/** The only list of kinds this server serves. */
import type { ResourceDefinition } from '../definition.js';
import { namespace } from './namespace.js';
import { pod } from './pod.js';
import { service } from './service.js';

export const coreKinds: readonly ResourceDefinition[] = [namespace, pod, service];
