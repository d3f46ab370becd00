/**
 * apiextensions.k8s.io/v1beta1 CustomResourceDefinition against v1, the storage version (as
 * Kubernetes 1.16-1.21 served both): v1beta1 may give the schema (`validation`), subresources and
 * printer columns once at the top level for every version, names one version in `version`, spells a
 * column's path `JSONPath`, puts the conversion webhook's fields beside the strategy, and keeps unknown
 * fields by default (`preserveUnknownFields: true`). Read back, fields every version has alike are
 * hoisted to the top level again, and `version` is the first version's name. All in place on a
 * decoded object, as `Conversion` wants.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../api/meta.js';
import type { Conversion } from '../definition.js';
import { isObject } from '../generic/meta.js';
import type { TopLevel } from './crd-validation.js';

type Fields = Record<string, unknown>;

const objectAt = (o: Fields, key: string): Fields => (isObject(o[key]) ? (o[key] as Fields) : {});
const listAt = (o: Fields, key: string): Fields[] => (Array.isArray(o[key]) ? (o[key] as unknown[]).filter(isObject) as Fields[] : []);

/** Each column's path under another name (v1 `jsonPath`, v1beta1 `JSONPath`). */
const renameColumns = (holder: Fields, from: string, to: string): void => {
  for (const column of listAt(holder, 'additionalPrinterColumns')) {
    if (!(from in column)) continue;
    column[to] = column[from];
    delete column[from];
  }
};

/** The per-version field and the top-level field it is given as in v1beta1. */
const Parts = [['schema', 'validation'], ['subresources', 'subresources'], ['additionalPrinterColumns', 'additionalPrinterColumns']] as const;

const given = (value: unknown): boolean => (Array.isArray(value) ? value.length > 0 : value !== undefined && value !== null);

/**
 * v1beta1 → its internal form (kube-apiserver's): the versions and conversion in v1's shape, columns
 * named `jsonPath`, and the top-level fields taken out (returned, for validation).
 */
export const internalOf = (crd: KubeObject): TopLevel => {
  const spec = isObject(crd.spec) ? (crd.spec as Fields) : {};
  renameColumns(spec, 'JSONPath', 'jsonPath');
  const top: Fields = {};
  for (const [part, field] of Parts) {
    if (given(spec[field])) top[part] = spec[field];
    delete spec[field];
  }
  if (typeof spec.version === 'string' && spec.version) top.version = spec.version;
  delete spec.version;
  const versions = listAt(spec, 'versions');
  if (versions.length === 0 && top.version) versions.push({ name: top.version, served: true, storage: true });
  if (versions.length > 0) spec.versions = versions;
  for (const v of versions) renameColumns(v, 'JSONPath', 'jsonPath');
  const conversion = spec.conversion;
  if (isObject(conversion)) {
    const { webhookClientConfig, conversionReviewVersions, ...rest } = conversion as Fields;
    const webhook = { ...(webhookClientConfig !== undefined && { clientConfig: webhookClientConfig }), ...(conversionReviewVersions !== undefined && { conversionReviewVersions }) };
    spec.conversion = { ...rest, ...(Object.keys(webhook).length > 0 && { webhook }) };
  }
  return top as TopLevel;
};

/** v1beta1 → v1: the top-level fields copied into each version that has none of its own. */
const toStorage = (crd: KubeObject): void => {
  const top = internalOf(crd) as Fields;
  const spec = isObject(crd.spec) ? (crd.spec as Fields) : {};
  for (const v of listAt(spec, 'versions')) {
    for (const [part] of Parts) if (given(top[part]) && !given(v[part])) v[part] = structuredClone(top[part]);
  }
  if (spec.preserveUnknownFields !== true) delete spec.preserveUnknownFields;
};

/** v1 → v1beta1: what every version has alike hoisted to the top level; `preserveUnknownFields` said either way. */
const fromStorage = (crd: KubeObject): void => {
  if (!isObject(crd.spec)) return;
  const spec = crd.spec as Fields;
  const versions = listAt(spec, 'versions');
  for (const v of versions) renameColumns(v, 'jsonPath', 'JSONPath');
  if (versions.length > 0) spec.version = versions[0]!.name;
  for (const [part, field] of Parts) {
    const first = versions[0]?.[part];
    if (!given(first) || !versions.every((v) => isDeepStrictEqual(v[part], first))) continue;
    spec[field] = first;
    for (const v of versions) delete v[part];
  }
  const conversion = spec.conversion;
  if (isObject(conversion)) {
    const { webhook, ...rest } = conversion as Fields;
    const { clientConfig, conversionReviewVersions } = isObject(webhook) ? (webhook as Fields) : {};
    spec.conversion = { ...rest, ...(clientConfig !== undefined && { webhookClientConfig: clientConfig }), ...(conversionReviewVersions !== undefined && { conversionReviewVersions }) };
  }
  spec.preserveUnknownFields = spec.preserveUnknownFields === true;
};

export const v1beta1Conversion: Conversion = { toStorage, fromStorage };

/**
 * v1beta1's SetDefaults_CustomResourceDefinitionSpec beyond v1's (names, conversion strategy, webhook
 * port): scope Namespaced, `version` and `versions` from each other, unknown fields kept, a webhook's
 * review versions `[v1beta1]`.
 */
export const v1beta1Defaults = (crd: KubeObject): void => {
  if (!isObject(crd.spec)) crd.spec = {};
  const spec = crd.spec as Fields;
  spec.scope ||= 'Namespaced';
  const versions = listAt(spec, 'versions');
  if (!spec.version && versions.length > 0) spec.version = versions[0]!.name;
  if (versions.length === 0 && typeof spec.version === 'string' && spec.version) spec.versions = [{ name: spec.version, served: true, storage: true }];
  spec.preserveUnknownFields ??= true;
  const conversion = objectAt(spec, 'conversion');
  if (conversion.strategy === 'Webhook' && !given(conversion.conversionReviewVersions)) conversion.conversionReviewVersions = ['v1beta1'];
  const service = objectAt(conversion, 'webhookClientConfig').service;
  if (isObject(service)) (service as Fields).port ??= 443;
};
