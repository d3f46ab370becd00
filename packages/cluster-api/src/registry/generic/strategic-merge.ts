/**
 * Kubernetes' strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch) for the lists that
 * kubectl apply / edit / set touch: lists with a merge key merge element by element, `finalizers`
 * merges as a set, every other list is replaced. Directives: `$patch: replace|delete|merge`,
 * `$retainKeys`, `$deleteFromPrimitiveList/<field>`; `$setElementOrder/<field>` is accepted and ignored
 * (order follows the original list, new elements appended).
 */
import { badRequest } from '../../api/errors.js';
import { clone, isObject } from './meta.js';

/** The patchMergeKey tags of k8s.io/api/core/v1, by field name. */
const MergeKeys: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  env: 'name',
  ports: 'containerPort',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  imagePullSecrets: 'name',
  secrets: 'name',
  ownerReferences: 'uid',
  conditions: 'type',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
};
/** Same field name, different key: Service ports merge by `port`. */
const PathMergeKeys: Readonly<Record<string, string>> = { 'spec.ports': 'port' };
const SetLists = new Set(['metadata.finalizers']);

export type MergeMode = 'kubernetes' | 'none';

/**
 * How a list at `path` (field names from the object's root, list items not counted) merges: by a key
 * field (`map`), as a set of scalars (`set`), or as one value (`atomic`). Server-side apply
 * (managed-fields.ts) reads the same table. `none`: a kind without a schema, whose lists are atomic.
 */
export type ListRule = { type: 'map'; keys: readonly string[] } | { type: 'set' } | { type: 'atomic' };

export const listRule = (path: readonly string[], mode: MergeMode): ListRule => {
  const joined = path.join('.');
  if (SetLists.has(joined)) return { type: 'set' };
  // ObjectMeta is typed even for schemaless kinds.
  if (mode === 'none' && path[0] !== 'metadata') return { type: 'atomic' };
  const key = PathMergeKeys[joined] ?? MergeKeys[path[path.length - 1]!];
  return key ? { type: 'map', keys: [key] } : { type: 'atomic' };
};

type Json = unknown;

const directive = (k: string): boolean => k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/');

const stripDirectives = (v: Json): Json => {
  if (Array.isArray(v)) return v.filter((e) => !(isObject(e) && e.$patch === 'replace' && Object.keys(e).length === 1)).map(stripDirectives);
  if (!isObject(v)) return v;
  const out: Record<string, Json> = {};
  for (const [k, x] of Object.entries(v)) if (!directive(k) && !k.startsWith('$deleteFromPrimitiveList/')) out[k] = stripDirectives(x);
  return out;
};

class Merger {
  constructor(private readonly mode: MergeMode) {}

  map(orig: Json, patch: Record<string, Json>, path: string[]): Json {
    const op = patch.$patch;
    if (op === 'replace') return stripDirectives(patch);
    if (op === 'delete') return undefined;
    if (op !== undefined && op !== 'merge') throw badRequest(`Unknown patch type: ${String(op)}`);
    const out: Record<string, Json> = isObject(orig) ? { ...orig } : {};
    for (const [k, v] of Object.entries(patch)) {
      if (k.startsWith('$deleteFromPrimitiveList/')) {
        const field = k.slice('$deleteFromPrimitiveList/'.length);
        if (Array.isArray(out[field]) && Array.isArray(v)) out[field] = (out[field] as Json[]).filter((x) => !v.includes(x));
        continue;
      }
      if (directive(k)) continue;
      const at = [...path, k];
      if (v === null) delete out[k];
      else if (isObject(v)) {
        const r = this.map(out[k], v, at);
        if (r === undefined) delete out[k];
        else out[k] = r;
      } else if (Array.isArray(v)) out[k] = this.list(out[k], v, at);
      else out[k] = v;
    }
    const retain = patch.$retainKeys;
    if (Array.isArray(retain)) for (const k of Object.keys(out)) if (!retain.includes(k)) delete out[k];
    return out;
  }

  list(orig: Json, patch: Json[], path: string[]): Json {
    if (patch.some((e) => isObject(e) && e.$patch === 'replace')) return stripDirectives(patch);
    const rule = this.mode === 'none' ? ({ type: 'atomic' } as const) : listRule(path, this.mode);
    const base = Array.isArray(orig) ? orig : [];
    if (rule.type === 'set') return [...base, ...patch.filter((x) => !base.includes(x))];
    if (rule.type === 'atomic') return stripDirectives(patch);
    const key = rule.keys[0]!;
    const out = base.map((e) => clone(e));
    for (const el of patch) {
      if (!isObject(el)) throw badRequest(`the list ${path.join('.')} holds objects merged by "${key}"`);
      const at = out.findIndex((o) => isObject(o) && o[key] === el[key]);
      if (el.$patch === 'delete') {
        if (at >= 0) out.splice(at, 1);
      } else if (at >= 0) out[at] = this.map(out[at], el, path);
      else out.push(stripDirectives(el));
    }
    return out;
  }
}

export const strategicMerge = (original: Json, patch: Json, mode: MergeMode): Json => {
  if (!isObject(patch)) throw badRequest('the patch must be a JSON object');
  return new Merger(mode).map(original, patch, []);
};
