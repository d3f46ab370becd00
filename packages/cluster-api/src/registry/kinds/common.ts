/** Shared pieces of the core-group kind files: verb sets as discovery lists them, and field access. */
import type { KubeObject } from '../../api/meta.js';
import type { ResourceDefinition, Strategy, TableColumn, Verb } from '../definition.js';
import { isObject } from '../generic/meta.js';

/** Kubernetes' discovery order. */
export const AllVerbs: readonly Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
export const AllButDeleteCollection: readonly Verb[] = AllVerbs.filter((v) => v !== 'deletecollection');

type CoreInput = Omit<ResourceDefinition, 'group' | 'version' | 'listKind'> & Partial<Pick<ResourceDefinition, 'listKind'>>;

/** A core-group (`v1`) definition. */
export const core = (def: CoreInput): ResourceDefinition => ({ group: '', version: 'v1', listKind: `${def.kind}List`, ...def });

/** A definition in a named group version (`apps/v1`). */
export const inGroup = (group: string, version: string) => (def: CoreInput): ResourceDefinition => ({ group, version, listKind: `${def.kind}List`, ...def });

/** A non-negative integer field, or absent (ValidateNonnegativeField). */
export const nonNegative = (v: unknown): boolean => v === undefined || v === null || (Number.isInteger(v) && (v as number) >= 0);

/** A status-subresource kind's preparation: `defaults` on create and update, and a create's status emptied (only the status subresource writes it). */
export const defaultedWithStatus = (defaults: (o: KubeObject) => void): Pick<Strategy, 'prepareForCreate' | 'prepareForUpdate'> => ({
  prepareForCreate(o) {
    defaults(o);
    o.status = {};
  },
  prepareForUpdate: (o) => defaults(o),
});

/** Standard base64 with its padding, as Go's encoding/json decodes a []byte field. */
export const Base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

export type Obj = Record<string, unknown>;

/** The object at `field`, created when absent (for defaulting). */
export const child = (parent: Obj, field: string): Obj => {
  if (!isObject(parent[field])) parent[field] = {};
  return parent[field] as Obj;
};

/** Read-only access: `{}` / `[]` / `''` when absent or of another type. */
export const obj = (v: unknown): Obj => (isObject(v) ? v : {});
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export const spec = (o: KubeObject): Obj => obj(o.spec);
export const status = (o: KubeObject): Obj => obj(o.status);

export const column = (name: string, cell: TableColumn['cell'], extra: Partial<TableColumn> = {}): TableColumn =>
  ({ name, type: 'string', cell, ...extra });

export const setDefault = (o: Obj, field: string, value: unknown): void => {
  if (o[field] === undefined || o[field] === null || o[field] === '') o[field] = value;
};

/** resource.Quantity's grammar (k8s.io/apimachinery/pkg/api/resource). */
const QuantityPattern = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;
export const QuantityMessage = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
export const isQuantity = (v: unknown): boolean => (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && QuantityPattern.test(v));

/** Short access modes as kubectl prints them. */
export const accessModes = (modes: unknown): string =>
  arr(modes).map((m) => ({ ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' })[str(m)] ?? str(m)).join(',');

export const AccessModes = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'] as const;

const TimeWithZone = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/;

/**
 * metav1.MicroTime as Kubernetes writes it (RFC 3339 in UTC with six fractional digits), from any
 * RFC 3339 time a client sends; anything else is returned as it is, for validation to refuse.
 */
export const microTime = (v: unknown): unknown => {
  if (typeof v !== 'string') return v;
  const m = TimeWithZone.exec(v);
  if (!m) return v;
  const seconds = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(seconds)) return v;
  return `${new Date(seconds).toISOString().slice(0, 19)}.${(m[2] ?? '').padEnd(6, '0').slice(0, 6)}Z`;
};

/** The MicroTime fields of `o` named by `fields`, in Kubernetes' form. */
export const normalizeMicroTimes = (o: Obj, fields: readonly string[]): void => {
  for (const f of fields) if (o[f] !== undefined && o[f] !== null) o[f] = microTime(o[f]);
};
