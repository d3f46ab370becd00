/**
 * A CustomResourceDefinition checked as apiextensions-apiserver's ValidateCustomResourceDefinition
 * (and ...Update) checks it: name = plural.group, group, scope, names, versions (exactly one storage
 * version, unique DNS-1035 names), per-version schema (required, valid OpenAPI, structural),
 * subresources, printer columns, selectable fields, conversion, stored versions, API approval for
 * protected groups; on update, group and plural never change, scope and kind not once established.
 * What a v1 request must have (a schema per version, structural, preserveUnknownFields false) is
 * required on update only of a CRD that had it (kube-apiserver does not tighten persisted objects), and
 * not of a v1beta1 request, which may also give the schema, subresources and columns once at the top
 * level (`CrdRules.topLevel`; a v1beta1 object is checked in v1's field names, registry/crd/v1beta1.ts).
 */
import type { KubeObject } from '../../api/meta.js';
import { forbiddenField, immutable, invalidValue, isDNS1035Label, isDNS1123Subdomain, notSupported, required, type FieldError } from '../generic/validation.js';
import { isDeepStrictEqual } from 'node:util';
import { isObject } from '../generic/meta.js';
import { JsonPathError, parse } from './jsonpath.js';
import { hasDefaults } from './prune.js';
import type { JSONSchemaProps } from './schema.js';
import { validateSchemaRules } from './schema-rules.js';
import { validateStructural } from './structural.js';
import { isTrue, specOf, statusOf, type CrdNames, type CrdSpec, type CrdVersion, type PrinterColumn, type ScaleSubresource } from './types.js';

/** Which of the rules that depend on the request's version and the stored object apply. */
export interface CrdRules {
  /** Every version has a schema (v1; not v1beta1, not an update of a CRD stored without). */
  requireSchema: boolean;
  /** Schemas are structural (v1; not v1beta1 unless unknown fields are pruned). */
  requireStructural: boolean;
  /** preserveUnknownFields may not be true (v1 create, or an update of a CRD where it was false). */
  forbidPreserveUnknown: boolean;
  /** v1beta1's top-level version, validation, subresources and additionalPrinterColumns may be set. */
  topLevel?: boolean;
}

export const V1Create: CrdRules = { requireSchema: true, requireStructural: true, forbidPreserveUnknown: true };
export const V1beta1: CrdRules = { requireSchema: false, requireStructural: false, forbidPreserveUnknown: false, topLevel: true };

/** The top-level fields of a v1beta1 CustomResourceDefinition (in v1's names: columns' jsonPath). */
export type TopLevel = Pick<CrdVersion, 'schema' | 'subresources' | 'additionalPrinterColumns'> & { version?: string };


const ColumnTypes = ['boolean', 'date', 'integer', 'number', 'string'];
const ColumnFormats = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];
const ApprovalAnnotation = 'api-approved.kubernetes.io';

const dns1035 = (field: string, value: unknown, lower = false): FieldError[] => {
  if (typeof value !== 'string' || value === '') return [];
  const errs = isDNS1035Label(lower ? value.toLowerCase() : value);
  if (errs.length === 0) return [];
  return [invalidValue(field, value, `${lower ? 'may have mixed case, but should otherwise match: ' : ''}${errs.join(',')}`)];
};

const validateNames = (names: CrdNames, path: string): FieldError[] => {
  const errs: FieldError[] = [];
  for (const f of ['plural', 'singular', 'kind', 'listKind'] as const) if (!names[f]) errs.push(required(`${path}.${f}`));
  errs.push(...dns1035(`${path}.plural`, names.plural), ...dns1035(`${path}.singular`, names.singular));
  errs.push(...dns1035(`${path}.kind`, names.kind, true), ...dns1035(`${path}.listKind`, names.listKind, true));
  (names.shortNames ?? []).forEach((s, i) => errs.push(...dns1035(`${path}.shortNames[${i}]`, s)));
  if (names.kind && names.kind === names.listKind) errs.push(invalidValue(`${path}.listKind`, names.listKind, 'kind and listKind may not be the same'));
  (names.categories ?? []).forEach((c, i) => errs.push(...dns1035(`${path}.categories[${i}]`, c)));
  return errs;
};

const simplePath = (path: string, value: string, field: string): FieldError[] => {
  try {
    const steps = parse(value);
    if (!value.startsWith('.') || steps.some((s) => s.type !== 'field')) return [invalidValue(field, value, 'must be a simple json path starting with .')];
    return [];
  } catch (err) {
    return [invalidValue(field, value, err instanceof JsonPathError ? `is an invalid path: ${err.message}` : 'is an invalid path')];
  }
};

const validateScale = (scale: ScaleSubresource, path: string): FieldError[] => {
  const errs: FieldError[] = [];
  const under = (field: string, value: string | undefined, prefixes: string[], why: string) => {
    if (!value) return void (field.endsWith('labelSelectorPath') || errs.push(required(field)));
    const bad = simplePath(field, value, field);
    if (bad.length) errs.push(...bad);
    else if (!prefixes.some((p) => value.startsWith(p))) errs.push(invalidValue(field, value, why));
  };
  under(`${path}.specReplicasPath`, scale.specReplicasPath, ['.spec.'], 'should be a json path under .spec');
  under(`${path}.statusReplicasPath`, scale.statusReplicasPath, ['.status.'], 'should be a json path under .status');
  under(`${path}.labelSelectorPath`, scale.labelSelectorPath, ['.spec.', '.status.'], 'should be a json path under either .spec or .status');
  return errs;
};

const validateColumn = (col: PrinterColumn, path: string): FieldError[] => {
  const errs: FieldError[] = [];
  if (!col.name) errs.push(required(`${path}.name`));
  const types = `must be one of ${ColumnTypes.join(',')}`;
  if (!col.type) errs.push(required(`${path}.type`, types));
  else if (!ColumnTypes.includes(col.type)) errs.push(invalidValue(`${path}.type`, col.type, types));
  if (col.format && !ColumnFormats.includes(col.format)) errs.push(invalidValue(`${path}.format`, col.format, `must be one of ${ColumnFormats.join(',')}`));
  if (!col.jsonPath) errs.push(required(`${path}.JSONPath`));
  else {
    try {
      parse(col.jsonPath);
    } catch (err) {
      errs.push(invalidValue(`${path}.JSONPath`, col.jsonPath, `is an invalid path: ${(err as Error).message}`));
    }
  }
  return errs;
};

/** A schema where one is given: valid OpenAPI, and structural when the rules require it. */
const validateSchema = (schema: JSONSchemaProps, path: string, structural: boolean): FieldError[] => {
  const rules = validateSchemaRules(schema, path);
  return rules.length || !structural ? rules : validateStructural(schema, path);
};

/** Schema, scale paths and printer columns, of one version or (v1beta1) of the top level. */
const validateParts = (v: TopLevel, path: string, schemaPath: string, structural: boolean): FieldError[] => {
  const errs: FieldError[] = [];
  const schema = v.schema?.openAPIV3Schema;
  if (isObject(schema)) errs.push(...validateSchema(schema, `${path}.${schemaPath}.openAPIV3Schema`, structural));
  if (v.subresources?.scale) errs.push(...validateScale(v.subresources.scale, `${path}.subresources.scale`));
  (v.additionalPrinterColumns ?? []).forEach((c, i) => errs.push(...validateColumn(c, `${path}.additionalPrinterColumns[${i}]`)));
  return errs;
};

const validateVersion = (v: CrdVersion, path: string, structural: boolean): FieldError[] => {
  const errs = dns1035(`${path}.name`, v.name);
  if (!v.deprecated && v.deprecationWarning !== undefined) errs.push(invalidValue(`${path}.deprecationWarning`, v.deprecationWarning, 'can only be set for deprecated versions'));
  errs.push(...validateParts(v, path, 'schema', structural));
  (v.selectableFields ?? []).forEach((f, i) => {
    const field = `${path}.selectableFields[${i}].jsonPath`;
    if (!f.jsonPath) errs.push(required(field));
    else errs.push(...simplePath(field, f.jsonPath, field));
  });
  if ((v.selectableFields ?? []).length > 8) errs.push(invalidValue(`${path}.selectableFields`, v.selectableFields!.length, 'must have at most 8 items'));
  return errs;
};

const hasSchema = (v: { schema?: CrdVersion['schema'] } | undefined): boolean => isObject(v?.schema?.openAPIV3Schema);

/** Schemas required where a v1 request needs them, and where pruning would otherwise drop every field. */
const validateSchemasGiven = (spec: CrdSpec, top: TopLevel | undefined, rules: CrdRules): FieldError[] => {
  if (hasSchema(top)) return [];
  const path = (i: number) => `spec.versions[${i}].schema.openAPIV3Schema`;
  if (rules.requireSchema) return spec.versions.flatMap((v, i) => (hasSchema(v) ? [] : [required(path(i), 'schemas are required')]));
  if (spec.preserveUnknownFields === true) return [];
  return spec.versions.flatMap((v, i) => (v.served && !hasSchema(v) ? [required(path(i), 'because otherwise all fields are pruned')] : []));
};

/** Each per-version field: its top-level field in v1beta1, and how the messages name it. */
const Parts = [['schema', 'validation', 'schemas'], ['subresources', 'subresources', 'subresources'],
  ['additionalPrinterColumns', 'additionalPrinterColumns', 'additionalPrinterColumns']] as const;

/** v1beta1: top-level and per-version fields are exclusive, and per-version ones may not all be the same. */
const validateTopLevel = (spec: CrdSpec, top: TopLevel): FieldError[] => {
  const errs: FieldError[] = [];
  const given = (value: unknown): boolean => (Array.isArray(value) ? value.length > 0 : value !== undefined && value !== null);
  for (const [part, field, plural] of Parts) {
    if (given(top[part]) && spec.versions.some((v) => given(v[part]))) errs.push(forbiddenField(`spec.${field}`, `top-level and per-version ${plural} are mutually exclusive`));
    const values = spec.versions.map((v) => v[part]);
    if (values.length > 0 && values.every(given) && values.every((v) => isDeepStrictEqual(v, values[0]))) {
      errs.push(invalidValue('spec.versions', spec.versions, `per-version ${plural} may not all be set to identical values (top-level ${field} should be used instead)`));
    }
  }
  if (top.version) {
    errs.push(...dns1035('spec.version', top.version));
    if (spec.versions.length > 0 && spec.versions[0]!.name !== top.version) errs.push(invalidValue('spec.version', top.version, 'must match the first version in spec.versions'));
  }
  return errs;
};

const validateConversion = (crd: KubeObject): FieldError[] => {
  const conversion = specOf(crd).conversion;
  if (!conversion) return [];
  const strategy = conversion.strategy ?? '';
  if (!strategy) return [required('spec.conversion.strategy')];
  if (strategy !== 'None' && strategy !== 'Webhook') return [notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook'])];
  if (strategy === 'None' && conversion.webhook) return [forbiddenField('spec.conversion.webhook', 'should not be set when strategy is not set to Webhook')];
  if (strategy === 'Webhook' && !conversion.webhook?.clientConfig) return [required('spec.conversion.webhookClientConfig', 'required when strategy is set to Webhook')];
  return [];
};

const validateStoredVersions = (crd: KubeObject): FieldError[] => {
  const stored = statusOf(crd).storedVersions ?? [];
  const served = specOf(crd).versions.map((v) => v.name);
  return stored.flatMap((v, i) => (served.includes(v) ? [] : [invalidValue(`status.storedVersions[${i}]`, v, 'must appear in spec.versions')]));
};

const isProtected = (group: string): boolean =>
  group === 'k8s.io' || group === 'kubernetes.io' || group.endsWith('.k8s.io') || group.endsWith('.kubernetes.io');

const anyDefaults = (spec: CrdSpec, top: TopLevel | undefined): boolean =>
  [top, ...spec.versions].some((v) => hasDefaults(v?.schema?.openAPIV3Schema));

/**
 * ValidateCustomResourceDefinition under `rules` (metadata.name's DNS rule is the generic ObjectMeta
 * check); `top`: a v1beta1 object's top-level fields, the rest of it given in v1's shape.
 */
export const validateCrd = (crd: KubeObject, rules: CrdRules = V1Create, top?: TopLevel): FieldError[] => {
  const spec = specOf(crd);
  const errs: FieldError[] = [];
  if (crd.metadata.name && crd.metadata.name !== `${spec.names.plural}.${spec.group}`) {
    errs.push(invalidValue('metadata.name', crd.metadata.name, 'must be spec.names.plural+"."+spec.group'));
  }
  if (!spec.group) errs.push(required('spec.group'));
  else if (isDNS1123Subdomain(spec.group).length) errs.push(invalidValue('spec.group', spec.group, isDNS1123Subdomain(spec.group).join(',')));
  else if (!spec.group.includes('.')) errs.push(invalidValue('spec.group', spec.group, 'should be a domain with at least one dot'));
  if (!spec.scope) errs.push(required('spec.scope'));
  else if (spec.scope !== 'Cluster' && spec.scope !== 'Namespaced') errs.push(notSupported('spec.scope', spec.scope, ['Cluster', 'Namespaced']));
  const preserveUnknown = spec.preserveUnknownFields === true;
  // Pruning, defaults and x-kubernetes extensions need structural schemas whatever the request's version.
  const structural = rules.requireStructural || !preserveUnknown;
  if (preserveUnknown && rules.forbidPreserveUnknown) {
    errs.push(invalidValue('spec.preserveUnknownFields', true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  } else if (preserveUnknown && anyDefaults(spec, top)) {
    errs.push(invalidValue('spec.preserveUnknownFields', true, 'must be false in order to use defaults in the schema'));
  }
  errs.push(...validateSchemasGiven(spec, top, rules));
  spec.versions.forEach((v, i) => errs.push(...validateVersion(v, `spec.versions[${i}]`, structural)));
  if (top) errs.push(...validateTopLevel(spec, top), ...validateParts(top, 'spec', 'validation', structural));
  const names = spec.versions.map((v) => v.name);
  if (names.length === 0) errs.push(required('spec.versions', 'must have exactly one version marked as storage version'));
  else {
    if (new Set(names).size !== names.length) errs.push(invalidValue('spec.versions', names, 'must contain unique version names'));
    if (spec.versions.filter((v) => v.storage === true).length !== 1) errs.push(invalidValue('spec.versions', names, 'must have exactly one version marked as storage version'));
  }
  errs.push(...validateNames(spec.names, 'spec.names'), ...validateConversion(crd), ...validateStoredVersions(crd));
  if (preserveUnknown && spec.conversion?.strategy && spec.conversion.strategy !== 'None') {
    errs.push(invalidValue('spec.conversion.strategy', spec.conversion.strategy, 'must be None if spec.preserveUnknownFields is true'));
  }
  if (isProtected(spec.group) && !crd.metadata.annotations?.[ApprovalAnnotation]) {
    errs.push(required(`metadata.annotations[${ApprovalAnnotation}]`, `protected groups must have approval annotation "${ApprovalAnnotation}", see https://github.com/kubernetes/enhancements/pull/1111`));
  }
  return errs;
};

/** The rules an update through v1 is held to: no stricter than the stored object met. */
export const v1UpdateRules = (old: KubeObject): CrdRules => {
  const spec = specOf(old);
  const schemas = spec.versions.map((v) => v.schema?.openAPIV3Schema);
  return {
    requireSchema: schemas.every(isObject),
    requireStructural: schemas.every((s) => !isObject(s) || validateStructural(s, '').length === 0),
    forbidPreserveUnknown: spec.preserveUnknownFields !== true,
  };
};

/** ValidateCustomResourceDefinitionUpdate's immutability rules. */
export const validateCrdUpdate = (crd: KubeObject, old: KubeObject): FieldError[] => {
  const [spec, was] = [specOf(crd), specOf(old)];
  const errs: FieldError[] = [];
  if (isTrue(old, 'Established')) {
    if (spec.scope !== was.scope) errs.push(immutable('spec.scope', spec.scope));
    if (spec.names.kind !== was.names.kind) errs.push(immutable('spec.names.kind', spec.names.kind));
  }
  if (spec.group !== was.group) errs.push(immutable('spec.group', spec.group));
  if (spec.names.plural !== was.names.plural) errs.push(immutable('spec.names.plural', spec.names.plural));
  return errs;
};
