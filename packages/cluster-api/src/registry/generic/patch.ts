/**
 * PATCH bodies: JSON Patch (RFC 6902, with `test`), JSON Merge Patch (RFC 7386) and Kubernetes'
 * strategic merge patch (strategic-merge.ts). A failing patch is 422 as Kubernetes answers it; a body
 * of the wrong shape is 400. Server-side apply (an applied configuration, not a patch) is
 * managed-fields.ts.
 */
import type { KubeObject } from '../../api/meta.js';
import type { ResourceDefinition } from '../definition.js';
import type { PatchType } from '../rest.js';
import { ApiError, badRequest } from '../../api/errors.js';
import { clone, isObject } from './meta.js';
import { strategicMerge } from './strategic-merge.js';
import { checkDepth, MaxNestingDepth, nestsDeeperThan, tooDeep } from './depth.js';

export const checkPatchShape = (type: PatchType, patch: unknown): void => {
  if (type === 'json') {
    if (!Array.isArray(patch)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
    return;
  }
  if (!isObject(patch)) throw badRequest(type === 'apply' ? 'the applied configuration must be an object' : 'the patch must be a JSON object');
};

const patchFailed = (message: string): ApiError => new ApiError(422, 'Invalid', message);

export const applyPatch = (type: PatchType, original: KubeObject, patch: unknown, def: ResourceDefinition): KubeObject => {
  const base = clone(original) as unknown;
  let out: unknown;
  if (type === 'json') out = jsonPatch(base, patch as unknown[]);
  else if (type === 'merge') out = mergePatch(base, patch);
  else out = strategicMerge(base, patch, def.schemaless ? 'none' : 'kubernetes');
  if (!isObject(out)) throw patchFailed('the patched object is not a JSON object');
  // A JSON patch can nest what it adds or copies below any path: the result is bounded as a body is.
  checkDepth(out);
  return out as KubeObject;
};

/** RFC 7386: objects merge recursively, null deletes, anything else replaces. */
export const mergePatch = (target: unknown, patch: unknown): unknown => {
  if (!isObject(patch)) return clone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
};

/* ---- RFC 6902 ---- */

type Container = Record<string, unknown> | unknown[];

const unescapeToken = (t: string): string => t.replace(/~1/g, '/').replace(/~0/g, '~');

const parsePointer = (path: unknown): string[] => {
  if (typeof path !== 'string' || (path !== '' && !path.startsWith('/'))) throw badRequest(`invalid JSON pointer: ${String(path)}`);
  return path === '' ? [] : path.slice(1).split('/').map(unescapeToken);
};

const indexOf = (arr: unknown[], token: string, forAdd: boolean): number => {
  if (forAdd && token === '-') return arr.length;
  if (!/^(0|[1-9]\d*)$/.test(token)) throw patchFailed(`invalid array index: ${token}`);
  const i = Number(token);
  if (i > arr.length || (!forAdd && i === arr.length)) throw patchFailed(`array index out of bounds: ${token}`);
  return i;
};

/** The container holding the last token of `tokens`, and that token. */
const parentOf = (doc: unknown, tokens: string[], path: string): [Container, string] => {
  let cur = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[indexOf(cur, t, false)];
    else if (isObject(cur) && t in cur) cur = cur[t];
    else throw patchFailed(`doc is missing path: "${path}"`);
  }
  if (!Array.isArray(cur) && !isObject(cur)) throw patchFailed(`doc is missing path: "${path}"`);
  return [cur, tokens[tokens.length - 1]!];
};

const getAt = (doc: unknown, path: string): unknown => {
  let cur = doc;
  for (const t of parsePointer(path)) {
    if (Array.isArray(cur)) cur = cur[indexOf(cur, t, false)];
    else if (isObject(cur) && t in cur) cur = cur[t];
    else throw patchFailed(`doc is missing path: "${path}"`);
  }
  return cur;
};

const removeAt = (doc: unknown, path: string): unknown => {
  const [parent, last] = parentOf(doc, parsePointer(path), path);
  if (Array.isArray(parent)) return parent.splice(indexOf(parent, last, false), 1)[0];
  if (!(last in parent)) throw patchFailed(`Unable to remove nonexistent key: ${last}: missing value`);
  const v = parent[last];
  delete parent[last];
  return v;
};

const addAt = (doc: unknown, path: string, value: unknown, replace: boolean): unknown => {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return clone(value);
  const [parent, last] = parentOf(doc, tokens, path);
  if (Array.isArray(parent)) {
    const i = indexOf(parent, last, !replace);
    parent.splice(i, replace ? 1 : 0, clone(value));
  } else {
    if (replace && !(last in parent)) throw patchFailed(`replace operation does not apply: doc is missing key: ${path}`);
    parent[last] = clone(value);
  }
  return doc;
};

/** kube-apiserver's bound on the operations of one JSON patch (413 beyond it). */
export const MaxJsonPatchOperations = 10_000;

/** What copies may add to a document in one patch: the request body limit, as kube-apiserver sets jsonpatch.AccumulatedCopySizeLimit. */
const MaxCopiedBytes = 3 * 1024 * 1024;

const tooLargePatch = (message: string): ApiError => new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: ${message}`);

export const jsonPatch = (doc: unknown, ops: unknown[]): unknown => {
  if (ops.length > MaxJsonPatchOperations)
    throw tooLargePatch(`The allowed maximum operations in a JSON patch is ${MaxJsonPatchOperations}, got ${ops.length}`);
  let cur = doc;
  let copied = 0;
  for (const raw of ops) {
    if (!isObject(raw)) throw badRequest('a JSON patch operation must be an object');
    const { op, path, from, value } = raw;
    switch (op) {
      case 'add': cur = addAt(cur, String(path), bounded(path, value), false); break;
      case 'replace': cur = addAt(cur, String(path), bounded(path, value), true); break;
      case 'remove': removeAt(cur, String(path)); break;
      case 'move': cur = addAt(cur, String(path), bounded(path, removeAt(cur, String(from))), false); break;
      case 'copy': {
        const value = bounded(path, getAt(cur, String(from)));
        // Repeated copies of a subtree into itself double the document each time.
        copied += JSON.stringify(value ?? null).length;
        if (copied > MaxCopiedBytes)
          throw tooLargePatch(`Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${MaxCopiedBytes}`);
        cur = addAt(cur, String(path), value, false);
        break;
      }
      case 'test':
        if (JSON.stringify(getAt(cur, String(path))) !== JSON.stringify(value) && !deepEqual(getAt(cur, String(path)), value)) {
          throw patchFailed(`testing value ${String(path)} failed: test failed`);
        }
        break;
      default:
        throw badRequest(`Unexpected kind: ${String(op)}`);
    }
  }
  return cur;
};

/** A value placed at `path` keeps the document within MaxNestingDepth: checked per operation, so no step builds a deeper one. */
const bounded = (path: unknown, value: unknown): unknown => {
  const levels = String(path).split('/').length - 1;
  if (nestsDeeperThan(value, MaxNestingDepth - levels)) throw tooDeep();
  return value;
};

const deepEqual = (a: unknown, b: unknown): boolean => {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return a === b;
};
