/**
 * The registry: one generic store per registered definition, found the way the router finds them.
 * Public surface for http/ and server wiring.
 */
import type { Storage } from '../storage/interface.js';
import type { Registry, ResourceDefinition, ResourceStore } from './definition.js';
import { coreKinds } from './kinds/index.js';
import { objectKey } from './meta.js';
import { GenericStore } from './store.js';

export interface RegistryOptions {
  /** Extra definitions served by the generic store (tests, future groups). */
  extraDefinitions?: readonly ResourceDefinition[];
}

const lookupKey = (group: string, version: string, plural: string): string => `${group}/${version}/${plural}`;

export const createRegistry = (storage: Storage, options: RegistryOptions = {}): Registry => {
  const defs = [...coreKinds, ...(options.extraDefinitions ?? [])];
  const namespaceDef = coreKinds.find((d) => d.kind === 'Namespace')!;
  const deps = {
    namespaceExists: async (ns: string) => (await storage.get(objectKey(namespaceDef, undefined, ns)).catch(() => undefined)) !== undefined,
  };
  const stores = new Map<string, ResourceStore>();
  for (const def of defs) stores.set(lookupKey(def.group, def.version, def.plural), new GenericStore(def, storage, deps));
  return {
    definitions: () => defs,
    find: (group, version, plural) => stores.get(lookupKey(group, version, plural)),
  };
};

export type { Registry, ResourceDefinition, ResourceStore } from './definition.js';
export { ApiError, isApiError } from './errors.js';
