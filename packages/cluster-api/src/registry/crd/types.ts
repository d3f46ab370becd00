/** apiextensions.k8s.io/v1 CustomResourceDefinition, as far as serving its resource needs (reads are defensive: the body was checked first). */
import type { KubeObject } from '../../api/meta.js';
import { isObject } from '../generic/meta.js';
import type { JSONSchemaProps } from './schema.js';

export const CleanupFinalizer = 'customresourcecleanup.apiextensions.k8s.io';

export interface CrdNames {
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: { status?: object; scale?: ScaleSubresource };
  additionalPrinterColumns?: PrinterColumn[];
  selectableFields?: { jsonPath: string }[];
}

export interface CrdSpec {
  group: string;
  names: CrdNames;
  scope: string;
  versions: CrdVersion[];
  conversion?: { strategy?: string; webhook?: { clientConfig?: Record<string, unknown>; conversionReviewVersions?: string[] } };
  preserveUnknownFields?: boolean;
}

export interface CrdCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface CrdStatus {
  conditions?: CrdCondition[];
  acceptedNames?: Partial<CrdNames>;
  storedVersions?: string[];
}

export const specOf = (crd: KubeObject): CrdSpec => {
  const spec = (isObject(crd.spec) ? crd.spec : {}) as Partial<CrdSpec>;
  return {
    ...spec,
    group: String(spec.group ?? ''),
    names: (isObject(spec.names) ? spec.names : {}) as CrdNames,
    scope: String(spec.scope ?? ''),
    versions: Array.isArray(spec.versions) ? spec.versions.filter(isObject) as unknown as CrdVersion[] : [],
  };
};

export const statusOf = (crd: KubeObject): CrdStatus => (isObject(crd.status) ? (crd.status as CrdStatus) : {});

export const conditionOf = (crd: KubeObject, type: string): CrdCondition | undefined => statusOf(crd).conditions?.find((c) => c.type === type);

export const isTrue = (crd: KubeObject, type: string): boolean => conditionOf(crd, type)?.status === 'True';

/** SetCRDCondition: replaces the condition of that type; lastTransitionTime moves only when the status does. */
export const setCondition = (status: CrdStatus, next: CrdCondition, now: string): void => {
  const conditions = status.conditions ?? [];
  const old = conditions.find((c) => c.type === next.type);
  const merged = { ...next, lastTransitionTime: old && old.status === next.status ? old.lastTransitionTime : now };
  status.conditions = old ? conditions.map((c) => (c === old ? merged : c)) : [...conditions, merged];
};
