/** Which resources answer in protobuf: typed kinds with a message, never schemaless ones (as CRDs in Kubernetes). */
import { groupVersion, type ResourceDefinition } from '../registry/definition.js';
import { supportsProtobuf } from './codec.js';

export const servesProtobuf = (def: ResourceDefinition): boolean => !def.schemaless && supportsProtobuf(groupVersion(def), def.kind);
