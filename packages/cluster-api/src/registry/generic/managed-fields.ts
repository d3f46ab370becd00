/**
 * Server-side apply and field ownership (Kubernetes' structured-merge-diff, as the API server uses it).
 *
 * `metadata.managedFields` lists, per manager, the fields it set, in the FieldsV1 form clients read:
 * a tree keyed by path elements (`f:name` a field, `k:{"name":"app"}` a list item by its merge key,
 * `v:"x"` a set member, `i:0` a list index) where `{}` or a `.` entry marks a member. Here a set of
 * fields is a Set of encoded paths (elements joined by NUL), converted at the edges.
 *
 * An apply merges the applied configuration into the live object: fields the manager applied before
 * and omits now are removed unless another manager owns them; changing a field another manager owns
 * is a 409 conflict unless forced, which takes the field over. Other writes to an object that has
 * managed fields move the fields they change to their own manager's entry, so that a later apply
 * sees who set what.
 *
 * Kubernetes records an Update entry on every write, creations included; here ownership starts with
 * the first apply (or managedFields a client sets), so writes to objects that never met an apply pay
 * nothing for it.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject, StatusCause } from '../../api/meta.js';
import type { ResourceDefinition } from '../definition.js';
import { fieldsOwnedBy, subresourceFields } from './fields.js';
import { ApiError, badRequest } from '../../api/errors.js';
import { clone, isObject, timestamp } from './meta.js';
import { listRule, type ListRule } from './strategic-merge.js';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: FieldsTree;
  subresource?: string;
}

export interface FieldsTree {
  [element: string]: FieldsTree;
}

type Path = readonly string[];
type Fields = Set<string>;

const SEP = '\u0000';
const join = (path: Path): string => path.join(SEP);
const split = (encoded: string): string[] => encoded.split(SEP);

/** Fields the server owns: never part of a manager's set (apimachinery's managedfields strips them). */
const SystemMeta = new Set([
  'name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'selfLink', 'managedFields',
  'deletionTimestamp', 'deletionGracePeriodSeconds',
]);

type Rules = (names: readonly string[]) => ListRule;

/** How the lists of `def`'s objects merge: a custom resource's schema says; otherwise strategic merge's table. */
const rulesOf = (def: ResourceDefinition): Rules => (names) => {
  const custom = def.custom?.listRule(names);
  return custom && custom.type !== 'default' ? custom : listRule(names, def.schemaless ? 'none' : 'kubernetes');
};

/** The top-level fields a write on `subresource` can set: a view that owns fields (status) those, the object the rest. */
const inScope = (def: ResourceDefinition, field: string, subresource?: string): boolean => {
  if (field === 'apiVersion' || field === 'kind') return false;
  const owned = fieldsOwnedBy(def, subresource);
  return owned ? owned.includes(field) : !subresourceFields(def).includes(field);
};

/** `k:{"name":"app"}`: a keyed list item by its key fields (sorted, as structured-merge-diff writes them). */
const itemKey = (keys: readonly string[], item: unknown): string | undefined => {
  if (!isObject(item) || keys.some((k) => item[k] === undefined || item[k] === null)) return undefined;
  return `k:${JSON.stringify(Object.fromEntries([...keys].sort().map((k) => [k, item[k]])))}`;
};

const sameKeys = (keys: readonly string[], a: unknown, b: unknown): boolean =>
  isObject(a) && isObject(b) && keys.every((k) => isDeepStrictEqual(a[k], b[k]));

/** The members of `value`: its leaves, the items of keyed lists, the members of sets. */
export function fieldsOf(def: ResourceDefinition, value: KubeObject, subresource?: string): Fields {
  const out: Fields = new Set();
  const rules = rulesOf(def);
  const walk = (v: unknown, path: string[], names: string[]): void => {
    if (v === null || v === undefined) return;
    if (isObject(v)) {
      const keys = Object.keys(v);
      if (keys.length === 0 && path.length > 0) out.add(join(path));
      for (const k of keys) {
        if (path.length === 0 && !inScope(def, k, subresource)) continue;
        if (path.length === 1 && names[0] === 'metadata' && SystemMeta.has(k)) continue;
        walk(v[k], [...path, `f:${k}`], [...names, k]);
      }
      return;
    }
    if (!Array.isArray(v)) return void out.add(join(path));
    const rule = rules(names);
    if (rule.type === 'set' && v.every((x) => !isObject(x) && !Array.isArray(x))) {
      for (const x of v) out.add(join([...path, `v:${JSON.stringify(x)}`]));
      return;
    }
    const keys = rule.type === 'map' ? v.map((item) => itemKey(rule.keys, item)) : [];
    if (rule.type !== 'map' || keys.some((k) => k === undefined)) return void out.add(join(path));
    v.forEach((item, i) => {
      const at = [...path, keys[i]!];
      out.add(join(at));
      walk(item, at, names);
    });
  };
  walk(value, [], []);
  return out;
}

/* ---- FieldsV1 ⇄ sets ---- */

export function toTree(fields: Fields): FieldsTree {
  const root: FieldsTree = {};
  const sorted = [...fields].sort();
  for (const encoded of sorted) {
    let node = root;
    for (const el of split(encoded)) node = node[el] ??= {};
  }
  // A member that later gained children is marked with `.`; a bare `{}` is a member leaf.
  const mark = (node: FieldsTree, path: string[]): void => {
    for (const [el, child] of Object.entries(node)) {
      if (el === '.') continue;
      const at = [...path, el];
      if (Object.keys(child).length > 0 && fields.has(join(at)) && !child['.']) child['.'] = {};
      mark(child, at);
    }
  };
  mark(root, []);
  return root;
}

export function fromTree(tree: unknown): Fields {
  const out: Fields = new Set();
  const walk = (node: unknown, path: string[]): void => {
    if (!isObject(node)) return;
    const entries = Object.entries(node);
    if (path.length > 0 && (entries.length === 0 || '.' in node)) out.add(join(path));
    for (const [el, child] of entries) if (el !== '.') walk(child, [...path, el]);
  };
  walk(tree, []);
  return out;
}

/** The object's entries that are well formed; anything else is dropped, as Kubernetes resets managed fields it cannot decode. */
export function entriesOf(obj: KubeObject | undefined): ManagedFieldsEntry[] {
  const raw = obj?.metadata.managedFields;
  if (!Array.isArray(raw)) return [];
  return raw.filter(
    (e): e is ManagedFieldsEntry =>
      isObject(e) && typeof e.manager === 'string' && (e.operation === 'Apply' || e.operation === 'Update') && isObject(e.fieldsV1 ?? {}),
  );
}

const sameOwner = (e: ManagedFieldsEntry, manager: string, operation: string, subresource?: string): boolean =>
  e.manager === manager && e.operation === operation && (e.subresource ?? '') === (subresource ?? '');

/* ---- navigating values by path ---- */

const parseItemKey = (el: string): [string, unknown][] | undefined => {
  try {
    const parsed = JSON.parse(el.slice(2)) as unknown;
    return isObject(parsed) ? Object.entries(parsed) : undefined;
  } catch {
    return undefined;
  }
};

const matches = (el: string, item: unknown): boolean => {
  if (el.startsWith('k:')) {
    const key = parseItemKey(el);
    return !!key && isObject(item) && key.every(([k, v]) => isDeepStrictEqual(item[k], v));
  }
  return el.startsWith('v:') && JSON.stringify(item) === el.slice(2);
};

const step = (v: unknown, el: string): unknown => {
  if (el.startsWith('f:')) return isObject(v) ? v[el.slice(2)] : undefined;
  if (!Array.isArray(v)) return undefined;
  if (el.startsWith('i:')) return v[Number(el.slice(2))];
  return v.find((item) => matches(el, item));
};

const valueAt = (v: unknown, path: Path): unknown => path.reduce(step, v);

/**
 * Removes the field, item or set member at `path` (missing parents: nothing to do), and the maps
 * that removal leaves empty: an apply that stops setting the last label leaves no `labels: {}`.
 */
const removeAt = (root: unknown, path: Path): void => {
  const parent = valueAt(root, path.slice(0, -1));
  const el = path[path.length - 1]!;
  if (el.startsWith('f:')) {
    if (!isObject(parent)) return;
    delete parent[el.slice(2)];
    if (Object.keys(parent).length === 0 && path.length > 2 && path[path.length - 2]!.startsWith('f:')) removeAt(root, path.slice(0, -1));
    return;
  }
  if (!Array.isArray(parent)) return;
  const i = el.startsWith('i:') ? Number(el.slice(2)) : parent.findIndex((item) => matches(el, item));
  if (i >= 0 && i < parent.length) parent.splice(i, 1);
};

/* ---- merging an applied configuration ---- */

function mergeValue(live: unknown, applied: unknown, names: string[], rules: Rules): unknown {
  if (isObject(applied)) {
    const out: Record<string, unknown> = isObject(live) ? live : {};
    for (const [k, v] of Object.entries(applied)) {
      if (v === null) delete out[k];
      else out[k] = mergeValue(out[k], v, [...names, k], rules);
    }
    return out;
  }
  if (!Array.isArray(applied)) return applied;
  const rule = rules(names);
  const base = Array.isArray(live) ? live : [];
  if (rule.type === 'set') return [...base, ...applied.filter((x) => !base.some((b) => isDeepStrictEqual(b, x)))];
  if (rule.type !== 'map' || applied.some((x) => itemKey(rule.keys, x) === undefined)) return clone(applied);
  const out = [...base];
  for (const item of applied) {
    const at = out.findIndex((o) => sameKeys(rule.keys, o, item));
    if (at >= 0) out[at] = mergeValue(out[at], item, names, rules);
    else out.push(clone(item));
  }
  return out;
}

/** `.spec.containers[name="app"].image`, as structured-merge-diff prints a path. */
export function pathString(encoded: string): string {
  return split(encoded)
    .map((el) => {
      const body = el.slice(2);
      if (el.startsWith('f:')) return `.${body}`;
      if (el.startsWith('i:')) return `[${body}]`;
      if (el.startsWith('v:')) return `[=${body}]`;
      const key = parseItemKey(el);
      return key ? `[${key.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]` : `[${body}]`;
    })
    .join('');
}

const describeOwner = (e: ManagedFieldsEntry): string => {
  const who = `${JSON.stringify(e.manager)}${e.subresource ? ` with subresource ${JSON.stringify(e.subresource)}` : ''}`;
  if (e.operation !== 'Update') return who;
  return e.time ? `${who} using ${e.apiVersion} at ${e.time}` : `${who} using ${e.apiVersion}`;
};

interface Conflict {
  owner: ManagedFieldsEntry;
  path: string;
}

/** apimachinery's NewConflictError: one cause per field, the message grouped by manager. */
function conflictError(conflicts: Conflict[]): ApiError {
  const causes: StatusCause[] = conflicts.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${describeOwner(c.owner)}`,
    field: pathString(c.path),
  }));
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${describeOwner(conflicts[0]!.owner)}: ${pathString(conflicts[0]!.path)}`;
  } else {
    const byOwner = new Map<string, string[]>();
    for (const c of conflicts) {
      const who = describeOwner(c.owner);
      byOwner.set(who, [...(byOwner.get(who) ?? []), `- ${pathString(c.path)}`]);
    }
    const lines = [...byOwner.keys()].sort().flatMap((who) => [`conflicts with ${who}:`, ...byOwner.get(who)!]);
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError(409, 'Conflict', message, { causes });
}

export interface ApplyRequest {
  manager: string;
  force: boolean;
  subresource?: string;
}

/** A field is kept for another manager when it, or anything beneath it, is theirs. */
const ownedBy = (owned: Fields, encoded: string): boolean => {
  if (owned.has(encoded)) return true;
  const prefix = encoded + SEP;
  for (const p of owned) if (p.startsWith(prefix)) return true;
  return false;
};

/**
 * The object an apply of `config` makes of `live` (undefined: the apply creates it), with its
 * managedFields; a 409 when it would change fields other managers own and `force` is off.
 */
export function applyConfiguration(def: ResourceDefinition, live: KubeObject | undefined, config: KubeObject, req: ApplyRequest): KubeObject {
  if (config.metadata.managedFields !== undefined && config.metadata.managedFields !== null) {
    throw badRequest('metadata.managedFields must be nil');
  }
  const rules = rulesOf(def);
  const applied = fieldsOf(def, config, req.subresource);
  const entries = entriesOf(live).map((e) => ({ entry: e, fields: fromTree(e.fieldsV1) }));
  const mine = entries.find((x) => sameOwner(x.entry, req.manager, 'Apply', req.subresource));
  const others = entries.filter((x) => x !== mine);

  const conflicts: Conflict[] = [];
  for (const other of others) {
    for (const p of other.fields) {
      if (!applied.has(p) || split(p).at(-1)!.startsWith('k:')) continue;
      const path = split(p);
      if (!isDeepStrictEqual(valueAt(live, path), valueAt(config, path))) conflicts.push({ owner: other.entry, path: p });
    }
  }
  if (conflicts.length > 0 && !req.force) throw conflictError(conflicts);
  for (const c of conflicts) others.find((o) => o.entry === c.owner)!.fields.delete(c.path);

  const next = clone(live ?? { apiVersion: config.apiVersion, kind: config.kind, metadata: {} }) as KubeObject;
  const ownedByOthers: Fields = new Set(others.flatMap((o) => [...o.fields]));
  const dropped = [...(mine?.fields ?? [])].filter((p) => !applied.has(p) && !ownedBy(ownedByOthers, p));
  // Shallowest first: an item goes while its key still finds it (its own fields go with it).
  for (const p of dropped.sort((a, b) => split(a).length - split(b).length)) removeAt(next, split(p));
  for (const [k, v] of Object.entries(config)) {
    if (k === 'apiVersion' || k === 'kind' || v === null || v === undefined) continue;
    if (k === 'metadata') {
      const { managedFields: _m, ...meta } = v as Record<string, unknown>;
      next.metadata = mergeValue(next.metadata, meta, ['metadata'], rules) as KubeObject['metadata'];
    } else next[k] = mergeValue(next[k], v, [k], rules);
  }

  const record: ManagedFieldsEntry = {
    manager: req.manager,
    operation: 'Apply',
    apiVersion: String(config.apiVersion),
    time: timestamp(),
    fieldsType: 'FieldsV1',
    fieldsV1: toTree(applied),
    ...(req.subresource && { subresource: req.subresource }),
  };
  const kept = entries
    .filter((x) => x === mine || x.fields.size > 0)
    .map((x) => (x === mine ? record : { ...x.entry, fieldsV1: toTree(x.fields) }));
  if (!mine) kept.push(record);
  next.metadata.managedFields = kept.filter((e) => e !== record || applied.size > 0);
  if (next.metadata.managedFields.length === 0) delete next.metadata.managedFields;
  return next;
}

/**
 * After a write that is not an apply: the fields it changed or removed move to `manager`'s Update
 * entry. Only for objects that have managed fields; a request that sets managedFields itself gets
 * exactly what it set, and an empty list clears them, as in Kubernetes.
 */
export function recordUpdate(def: ResourceDefinition, old: KubeObject, next: KubeObject, manager: string, subresource?: string): void {
  const given = next.metadata.managedFields;
  if (Array.isArray(given) && given.length === 0) return void delete next.metadata.managedFields;
  if (given !== undefined && given !== null && !isDeepStrictEqual(given, old.metadata.managedFields)) return;
  const entries = entriesOf(old);
  if (entries.length === 0) return void delete next.metadata.managedFields;
  const before = fieldsOf(def, old, subresource);
  const after = fieldsOf(def, next, subresource);
  const changed = [...after].filter((p) => {
    const path = split(p);
    const was = valueAt(old, path);
    return was === undefined || (!path.at(-1)!.startsWith('k:') && !isDeepStrictEqual(was, valueAt(next, path)));
  });
  const removed = [...before].filter((p) => !after.has(p));
  if (changed.length === 0 && removed.length === 0) return void (next.metadata.managedFields = old.metadata.managedFields);
  const touched = new Set([...changed, ...removed]);
  const out: ManagedFieldsEntry[] = [];
  let mine: Fields | undefined;
  for (const e of entries) {
    const fields = fromTree(e.fieldsV1);
    if (sameOwner(e, manager, 'Update', subresource)) {
      mine = fields;
      continue;
    }
    for (const p of touched) fields.delete(p);
    if (fields.size > 0) out.push({ ...e, fieldsV1: toTree(fields) });
  }
  const own = new Set([...(mine ?? []), ...changed]);
  for (const p of removed) own.delete(p);
  if (own.size > 0) {
    out.push({
      manager,
      operation: 'Update',
      apiVersion: String(next.apiVersion),
      time: timestamp(),
      fieldsType: 'FieldsV1',
      fieldsV1: toTree(own),
      ...(subresource && { subresource }),
    });
  }
  if (out.length > 0) next.metadata.managedFields = out;
  else delete next.metadata.managedFields;
}

/** k8s.io/apiserver's prefixFromUserAgent: who a write is recorded for when it names no fieldManager. */
export const managerFromUserAgent = (userAgent: string | undefined): string => (userAgent ?? '').split('/', 1)[0]!.slice(0, 128);
