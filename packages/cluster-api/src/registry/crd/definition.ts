/**
 * A CustomResourceDefinition's served versions as ResourceDefinitions (apiextensions-apiserver's
 * crdHandler serving info): names as accepted, scope, shortNames, categories, the version's schema
 * (pruning, defaulting on write and read, validation), its status and scale subresources, printer
 * columns, selectable fields, and the list types server-side apply merges by. Custom resources are
 * JSON only (no protobuf) and take json, merge and apply patches, never strategic merge.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../api/meta.js';
import { ApiError } from '../../api/errors.js';
import type { Conversion, ResourceDefinition, Strategy, TableColumn } from '../definition.js';
import { servedAt } from '../versions.js';
import type { ListRule } from '../generic/strategic-merge.js';
import { AllVerbs } from '../kinds/common.js';
import { scale } from '../subresources/scale.js';
import { statusSubresource } from '../subresources/status.js';
import { printerColumn, selectableValue } from './columns.js';
import { blocksRules, celErrors, hasRules } from './cel.js';
import { parse } from './jsonpath.js';
import { applyDefaults, hasDefaults, prune } from './prune.js';
import { itemSchema, propertySchema, type JSONSchemaProps } from './schema.js';
import { specOf, statusOf, type CrdVersion } from './types.js';
import { validateValue } from './validate.js';

/** x-kubernetes-list-type / -list-map-keys of the list at `path` (field names from the root, items not counted). */
const listRuleOf = (schema: JSONSchemaProps | undefined) => (path: readonly string[]): ListRule | { type: 'default' } => {
  let s = schema;
  for (const name of path) {
    s = propertySchema(s?.type === 'array' ? itemSchema(s) : s, name);
    if (!s) return { type: 'atomic' };
  }
  const type = s?.['x-kubernetes-list-type'];
  const keys = s?.['x-kubernetes-list-map-keys'] ?? [];
  if (type === 'map' && keys.length > 0) return { type: 'map', keys };
  if (type === 'set') return { type: 'set' };
  // metadata is ObjectMeta's: its lists (finalizers, ownerReferences) keep their own rules.
  return path[0] === 'metadata' ? { type: 'default' } : { type: 'atomic' };
};

/** What changes bump metadata.generation: everything but metadata, and status when it has its own subresource. */
const generationChanged = (withStatus: boolean) => (obj: KubeObject, old: KubeObject): boolean => {
  const strip = ({ metadata: _m, status, ...rest }: KubeObject) => (withStatus ? rest : { ...rest, status });
  return !isDeepStrictEqual(strip(obj), strip(old));
};

/** `keepUnknown`: spec.preserveUnknownFields (a v1beta1 CRD's default), fields the schema does not name are kept. */
const strategyOf = (version: CrdVersion, withStatus: boolean, keepUnknown: boolean): Strategy => {
  const schema = version.schema?.openAPIV3Schema;
  const normalise = (o: KubeObject): void => {
    if (!keepUnknown) prune(o, schema, true);
    applyDefaults(o, schema);
  };
  const rules = hasRules(schema);
  const selectable = (version.selectableFields ?? []).map((f) => ({ key: f.jsonPath.replace(/^\./, ''), steps: parse(f.jsonPath) }));
  return {
    prepareForCreate: normalise,
    prepareForUpdate: normalise,
    validate: (o) => {
      if (!schema) return [];
      const errs = validateValue(schema, o, '');
      if (!rules) return errs;
      const blocked = blocksRules(errs);
      return [...errs, ...(blocked.length ? blocked : celErrors(schema, o, 'plain'))];
    },
    ...(rules && { validateUpdate: (o, old) => celErrors(schema!, o, 'transition', old) }),
    generationChanged: generationChanged(withStatus),
    ...(selectable.length > 0 && { fieldsOf: (o) => Object.fromEntries(selectable.map(({ key, steps }) => [key, selectableValue(steps, o)])) }),
  };
};

/** The Scale's status.selector: the string at labelSelectorPath ('' when there is none). */
const labelSelector = (path: string | undefined) => {
  const steps = path ? parse(path) : [];
  return (o: KubeObject): string => (path ? selectableValue(steps, o) : '');
};

const subresourcesOf = (version: CrdVersion, strategy: Strategy): ResourceDefinition['subresources'] => {
  const { status, scale: paths } = version.subresources ?? {};
  return {
    ...(status && { status: statusSubresource(strategy) }),
    ...(paths && { scale: scale(labelSelector(paths.labelSelectorPath), { spec: paths.specReplicasPath, status: paths.statusReplicasPath }) }),
  };
};

/** The definition serving one version of `crd`. */
export const definitionOf = (crd: KubeObject, version: CrdVersion): ResourceDefinition => {
  const spec = specOf(crd);
  const names = { ...spec.names, ...statusOf(crd).acceptedNames };
  const schema = version.schema?.openAPIV3Schema;
  const strategy = strategyOf(version, Boolean(version.subresources?.status), spec.preserveUnknownFields === true);
  const columns: TableColumn[] | undefined = version.additionalPrinterColumns?.map(printerColumn);
  return {
    group: spec.group,
    version: version.name,
    kind: names.kind ?? spec.names.kind,
    listKind: names.listKind ?? `${names.kind}List`,
    plural: names.plural ?? spec.names.plural,
    singular: names.singular ?? names.kind?.toLowerCase() ?? '',
    namespaced: spec.scope === 'Namespaced',
    verbs: AllVerbs,
    ...(names.shortNames?.length && { shortNames: names.shortNames }),
    ...(names.categories?.length && { categories: names.categories }),
    subresources: subresourcesOf(version, strategy),
    strategy,
    schemaless: true,
    custom: { schema, listRule: listRuleOf(schema), ...(hasDefaults(schema) && { onRead: (o: KubeObject) => applyDefaults(o, schema) }) },
    ...(columns && columns.length > 0 && { columns, columnLayout: 'declared' as const }),
  };
};

/**
 * `conversion: Webhook` with no webhook this server can call: what kube-apiserver answers when the
 * webhook's service is not there, for any object that needs converting (objects already in the
 * version asked need none).
 */
const unreachableWebhook = (crd: KubeObject, storage: string): Conversion => {
  const spec = specOf(crd);
  const config = spec.conversion?.webhook?.clientConfig as { url?: string; service?: { name?: string; namespace?: string; port?: number; path?: string } } | undefined;
  const service = config?.service;
  const where = service
    ? `Post "https://${service.name}.${service.namespace}.svc:${service.port ?? 443}${service.path ?? '/'}?timeout=30s": service "${service.name}" not found`
    : `Post "${config?.url ?? ''}?timeout=30s": this server calls no conversion webhooks`;
  const fail = (): never => {
    throw new ApiError(500, 'InternalError', `conversion webhook for ${spec.group}/${storage}, Kind=${spec.names.kind} failed: ${where}`);
  };
  return { toStorage: fail, fromStorage: fail };
};

/**
 * Every served version's definition: the storage version's, and the others served at their own
 * version as the same objects (`servedAt`), converted as `spec.conversion` says: `None` rewrites
 * apiVersion only.
 */
export const definitionsOf = (crd: KubeObject): ResourceDefinition[] => {
  const spec = specOf(crd);
  const storage = spec.versions.find((v) => v.storage);
  if (!storage) return [];
  const storageDef = definitionOf(crd, storage);
  const conversion = spec.conversion?.strategy === 'Webhook' ? unreachableWebhook(crd, storage.name) : undefined;
  return spec.versions.filter((v) => v.served).map((v) => {
    if (v === storage) return storageDef;
    const { group: _g, version, ...specifics } = definitionOf(crd, v);
    return servedAt(storageDef, { group: spec.group, version }, { ...specifics, ...(conversion && { conversion }) });
  });
};
