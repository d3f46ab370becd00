/**
 * A CustomResourceDefinition checked as apiextensions-apiserver's ValidateCustomResourceDefinition
 * (and ...Update) checks it: name = plural.group, group, scope, names, versions (exactly one storage
 * version, unique DNS-1035 names), per-version schema (required, valid OpenAPI, structural),
 * subresources, printer columns, selectable fields, conversion, stored versions, API approval for
 * protected groups; on update, group and plural never change, scope and kind not once established.
 */
import type { KubeObject } from '../../api/meta.js';
import { forbiddenField, immutable, invalidValue, isDNS1035Label, isDNS1123Subdomain, notSupported, required, type FieldError } from '../generic/validation.js';
import { isObject } from '../generic/meta.js';
import { JsonPathError, parse } from './jsonpath.js';
import { validateSchemaRules } from './schema-rules.js';
import { validateStructural } from './structural.js';
import { isTrue, specOf, statusOf, type CrdNames, type CrdVersion, type PrinterColumn, type ScaleSubresource } from './types.js';

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

const validateVersion = (v: CrdVersion, path: string): FieldError[] => {
  const errs = dns1035(`${path}.name`, v.name);
  if (!v.deprecated && v.deprecationWarning !== undefined) errs.push(invalidValue(`${path}.deprecationWarning`, v.deprecationWarning, 'can only be set for deprecated versions'));
  const schema = v.schema?.openAPIV3Schema;
  if (!isObject(schema)) errs.push(required(`${path}.schema.openAPIV3Schema`, 'schemas are required'));
  else {
    const rules = validateSchemaRules(schema, `${path}.schema.openAPIV3Schema`);
    errs.push(...rules);
    if (rules.length === 0) errs.push(...validateStructural(schema, `${path}.schema.openAPIV3Schema`));
  }
  if (v.subresources?.scale) errs.push(...validateScale(v.subresources.scale, `${path}.subresources.scale`));
  (v.additionalPrinterColumns ?? []).forEach((c, i) => errs.push(...validateColumn(c, `${path}.additionalPrinterColumns[${i}]`)));
  (v.selectableFields ?? []).forEach((f, i) => {
    const field = `${path}.selectableFields[${i}].jsonPath`;
    if (!f.jsonPath) errs.push(required(field));
    else errs.push(...simplePath(field, f.jsonPath, field));
  });
  if ((v.selectableFields ?? []).length > 8) errs.push(invalidValue(`${path}.selectableFields`, v.selectableFields!.length, 'must have at most 8 items'));
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

/** ValidateCustomResourceDefinition (metadata.name's DNS rule is the generic ObjectMeta check). */
export const validateCrd = (crd: KubeObject): FieldError[] => {
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
  spec.versions.forEach((v, i) => errs.push(...validateVersion(v, `spec.versions[${i}]`)));
  const names = spec.versions.map((v) => v.name);
  if (names.length === 0) errs.push(required('spec.versions', 'must have exactly one version marked as storage version'));
  else {
    if (new Set(names).size !== names.length) errs.push(invalidValue('spec.versions', names, 'must contain unique version names'));
    if (spec.versions.filter((v) => v.storage === true).length !== 1) errs.push(invalidValue('spec.versions', names, 'must have exactly one version marked as storage version'));
  }
  errs.push(...validateNames(spec.names, 'spec.names'), ...validateConversion(crd), ...validateStoredVersions(crd));
  if (isProtected(spec.group) && !crd.metadata.annotations?.[ApprovalAnnotation]) {
    errs.push(required(`metadata.annotations[${ApprovalAnnotation}]`, `protected groups must have approval annotation "${ApprovalAnnotation}", see https://github.com/kubernetes/enhancements/pull/1111`));
  }
  return errs;
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
