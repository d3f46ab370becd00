/**
 * Which top-level fields a write may touch: a view subresource that names fields (status) is the only
 * way to write them, and a write through it covers only them. Derived from the definition alone.
 */
import type { ResourceDefinition } from '../definition.js';
import { subresourceOf } from '../subresource.js';

const owned = new WeakMap<ResourceDefinition, readonly string[]>();

/** Top-level fields only a view subresource writes (status, when the kind has one): computed once per definition. */
export const subresourceFields = (def: ResourceDefinition): readonly string[] => {
  let fields = owned.get(def);
  if (!fields) {
    const views = Object.values(def.subresources ?? {}).map((s) => s.behaviour);
    fields = views.flatMap((b) => (b.type === 'view' ? (b.owns ?? []) : []));
    owned.set(def, fields);
  }
  return fields;
};

/** The fields a write through `subresource` covers, when its view names them (status); undefined: the object's. */
export const fieldsOwnedBy = (def: ResourceDefinition, subresource: string | undefined): readonly string[] | undefined => {
  const behaviour = subresource === undefined ? undefined : subresourceOf(def, subresource)?.behaviour;
  return behaviour?.type === 'view' ? behaviour.owns : undefined;
};

const cleared = new WeakMap<ResourceDefinition, readonly string[]>();

/** Fields a create may not set: those view subresources own, unless the view keeps them on create (a Node registers with its status). */
export const clearedOnCreate = (def: ResourceDefinition): readonly string[] => {
  let fields = cleared.get(def);
  if (!fields) {
    const views = Object.values(def.subresources ?? {}).map((s) => s.behaviour);
    fields = views.flatMap((b) => (b.type === 'view' && !b.keptOnCreate ? (b.owns ?? []) : []));
    cleared.set(def, fields);
  }
  return fields;
};
