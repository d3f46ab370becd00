/**
 * meta.k8s.io Table rendering, what `kubectl get` asks for (`Accept: application/json;as=Table;…`).
 * Columns: Name first, the definition's columns, Age, then the wide (priority > 0) columns. Cells are computed server-side as
 * kube-apiserver does (Age is already a human duration): kubectl prints them without knowing the kind.
 * Each row carries the object as PartialObjectMetadata by default (`includeObject=Metadata`) because
 * kubectl reads labels and namespaces from it (`--show-labels`, `-A`).
 */
import type { KubeList, KubeObject, ListMeta } from '../api/meta.js';
import type { ResourceDefinition, TableColumn } from '../registry/definition.js';
import { badRequest } from '../api/errors.js';
import { ageColumn, nameColumn } from '../registry/kinds/columns.js';

export { humanDuration } from '../registry/generic/meta.js';

export const IncludeObjectPolicies = ['None', 'Metadata', 'Object'] as const;
export type IncludeObjectPolicy = (typeof IncludeObjectPolicies)[number];

export interface Table {
  kind: 'Table';
  apiVersion: string;
  metadata: ListMeta;
  columnDefinitions: Array<Omit<TableColumn, 'cell'> & { format: string; description: string; priority: number }>;
  rows: Array<{ cells: unknown[]; object?: unknown }>;
}

export function includeObjectOf(value: string | null): IncludeObjectPolicy {
  if (value === null || value === '') return 'Metadata';
  if ((IncludeObjectPolicies as readonly string[]).includes(value)) return value as IncludeObjectPolicy;
  throw badRequest(`includeObject: Unsupported value: "${value.slice(0, 50)}": supported values: "Metadata", "None", "Object"`);
}

/** Name, the standard columns, Age, then the `-o wide` ones (priority > 0), as kube-apiserver's printers order them. */
const columnsOf = (def: ResourceDefinition): readonly TableColumn[] => {
  const columns = def.columns ?? [];
  if (def.columnLayout === 'own') return columns;
  if (def.columnLayout === 'declared') return [nameColumn, ...columns];
  return [nameColumn, ...columns.filter((c) => !c.priority), ageColumn, ...columns.filter((c) => c.priority)];
};

/** A list or a single object as a Table; `version` is the meta.k8s.io version the client asked for. */
export function toTable(
  def: ResourceDefinition,
  value: KubeObject | KubeList,
  include: IncludeObjectPolicy,
  version = 'v1',
): Table {
  const columns = columnsOf(def);
  const isList = Array.isArray((value as KubeList).items);
  const objects = isList ? (value as KubeList).items : [value as KubeObject];
  const metadata: ListMeta = isList
    ? { ...(value as KubeList).metadata }
    : { resourceVersion: (value as KubeObject).metadata.resourceVersion };
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${version}`,
    metadata,
    columnDefinitions: columns.map(({ cell: _cell, ...c }) => ({
      format: '',
      description: '',
      priority: 0,
      ...c,
    })),
    rows: objects.map((o) => row(columns, o, include, version)),
  };
}

function row(columns: readonly TableColumn[], obj: KubeObject, include: IncludeObjectPolicy, version: string): Table['rows'][number] {
  const cells = columns.map((c) => safeCell(c, obj));
  if (include === 'None') return { cells };
  if (include === 'Object') return { cells, object: obj };
  return {
    cells,
    object: { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: obj.metadata },
  };
}

/** A column function that throws on an odd object must not fail the whole listing. */
function safeCell(column: TableColumn, obj: KubeObject): unknown {
  try {
    const v = column.cell(obj);
    // null is a cell with no value (kubectl prints <none>), as kube-apiserver sends for custom resources.
    return v === undefined ? '' : v;
  } catch {
    return '<unknown>';
  }
}

