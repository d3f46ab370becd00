/**
 * Query parameters of resource requests, decoded once and checked: a bad value is a 400 naming the
 * parameter, never a silently ignored option (kubectl and client-node only send well-formed values,
 * so anything else is a hand-made request that deserves a clear answer).
 */
import type { DeleteOptions } from '../api/meta.js';
import { PropagationPolicies } from '../api/meta.js';
import type { ListQuery, PatchType, WatchQuery } from '../registry/rest.js';
import { badRequest, invalid } from '../api/errors.js';
import { managerFromUserAgent } from '../registry/generic/managed-fields.js';
import { parseGoBool } from './json.js';

const unsupported = (param: string, value: string, supported: string): Error =>
  badRequest(`${param}: Unsupported value: "${value.slice(0, 50)}": supported values: ${supported}`);

/** A non-negative integer parameter; undefined when absent. */
export function intParam(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^\d{1,15}$/.test(raw)) throw badRequest(`${name}: Invalid value: "${raw.slice(0, 50)}": must be a non-negative integer`);
  return Number(raw);
}

/**
 * A boolean option as kube-apiserver decodes query parameters (runtime.Convert_Slice_string_To_bool):
 * absent is undefined, "false" and "0" in any case are false, and every other value, "" included, is
 * true. The Python client sends `True`/`False`, Go clients `true`/`false`: all of them mean what they say.
 */
export function boolParam(query: URLSearchParams, name: string): boolean | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  const lower = raw.toLowerCase();
  return lower !== 'false' && lower !== '0';
}

/** Clients for people, whom kube-apiserver answers in indented JSON unless `pretty` says otherwise. */
const humanAgents = /^(curl|Wget|Mozilla\/5\.0)/;

/** `pretty` by strconv.ParseBool (an invalid value is false); when absent or empty, a curl, Wget or browser User-Agent. */
export function isPretty(query: URLSearchParams, userAgent: string | undefined): boolean {
  const pretty = query.get('pretty');
  if (pretty) return parseGoBool(pretty) === true;
  return userAgent !== undefined && humanAgents.test(userAgent);
}

/** `dryRun=All` (the only value Kubernetes accepts); repeated parameters allowed as client-go sends them. */
export function dryRunOf(query: URLSearchParams): boolean {
  const values = query.getAll('dryRun');
  for (const v of values) if (v !== 'All') throw unsupported('dryRun', v, '"All"');
  return values.length > 0;
}

const optional = (query: URLSearchParams, name: string): string | undefined => query.get(name) ?? undefined;

export function listQueryOf(query: URLSearchParams): ListQuery {
  const match = optional(query, 'resourceVersionMatch');
  if (match !== undefined && match !== 'NotOlderThan' && match !== 'Exact')
    throw unsupported('resourceVersionMatch', match, '"Exact", "NotOlderThan"');
  return {
    labelSelector: optional(query, 'labelSelector'),
    fieldSelector: optional(query, 'fieldSelector'),
    limit: intParam(query, 'limit'),
    continue: optional(query, 'continue'),
    resourceVersion: optional(query, 'resourceVersion'),
    resourceVersionMatch: match as ListQuery['resourceVersionMatch'],
  };
}

export function watchQueryOf(query: URLSearchParams, name: string | undefined): WatchQuery {
  return {
    labelSelector: optional(query, 'labelSelector'),
    fieldSelector: optional(query, 'fieldSelector'),
    resourceVersion: optional(query, 'resourceVersion'),
    allowWatchBookmarks: boolParam(query, 'allowWatchBookmarks'),
    name,
  };
}

/**
 * DeleteOptions from the query, then the body on top (kube-apiserver reads both, the body wins).
 * Semantic rules (orphanDependents with propagationPolicy, …) belong to the store.
 */
export function deleteOptionsOf(query: URLSearchParams, body: unknown): DeleteOptions {
  const options: DeleteOptions = {};
  const grace = intParam(query, 'gracePeriodSeconds');
  if (grace !== undefined) options.gracePeriodSeconds = grace;
  const orphan = boolParam(query, 'orphanDependents');
  if (orphan !== undefined) options.orphanDependents = orphan;
  const policy = query.get('propagationPolicy');
  if (policy !== null) options.propagationPolicy = policy as DeleteOptions['propagationPolicy'];
  if (dryRunOf(query)) options.dryRun = ['All'];
  if (body !== undefined && body !== null) Object.assign(options, checkDeleteBody(body));
  if (options.propagationPolicy !== undefined && !(PropagationPolicies as readonly string[]).includes(options.propagationPolicy))
    throw unsupported('propagationPolicy', String(options.propagationPolicy), '"Background", "Foreground", "Orphan"');
  return options;
}

function checkDeleteBody(body: unknown): DeleteOptions {
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('DeleteOptions: the body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (b.kind !== undefined && b.kind !== 'DeleteOptions')
    throw badRequest(`DeleteOptions: kind must be "DeleteOptions", got "${String(b.kind).slice(0, 50)}"`);
  const g = b.gracePeriodSeconds;
  if (g !== undefined && g !== null && !(typeof g === 'number' && Number.isInteger(g)))
    throw badRequest('DeleteOptions: gracePeriodSeconds must be an integer');
  if (b.orphanDependents !== undefined && b.orphanDependents !== null && typeof b.orphanDependents !== 'boolean')
    throw badRequest('DeleteOptions: orphanDependents must be a boolean');
  const out = { ...b } as DeleteOptions & Record<string, unknown>;
  for (const k of Object.keys(out)) if (out[k] === null) delete out[k];
  return out;
}

const FieldManagerMaxLength = 128;

/**
 * The managedFields options of a create, update or patch (apimachinery's ValidatePatchOptions and
 * ValidateFieldManager): an apply must name its manager, only an apply may force; a write that names
 * none is recorded for its User-Agent's product (`kubectl`, `node-fetch`).
 */
export function writeOptionsOf(
  query: URLSearchParams,
  verb: 'create' | 'update' | 'patch',
  patchType: PatchType | undefined,
  userAgent: string | undefined,
): { fieldManager: string; force: boolean } {
  const named = query.get('fieldManager') ?? '';
  const force = boolParam(query, 'force');
  const causes: { reason: string; message: string; field: string }[] = [];
  if (verb === 'patch' && patchType !== 'apply' && force !== undefined)
    causes.push({ reason: 'FieldValueForbidden', message: 'Forbidden: may not be specified for non-apply patch', field: 'force' });
  if (patchType === 'apply' && named === '')
    causes.push({ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' });
  if (named.length > FieldManagerMaxLength)
    causes.push({ reason: 'FieldValueTooLong', message: `Too long: may not be more than ${FieldManagerMaxLength} bytes`, field: 'fieldManager' });
  const bad = [...named].findIndex((c) => !/^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(c));
  if (bad >= 0) {
    const code = named.codePointAt(bad)!.toString(16).toUpperCase().padStart(4, '0');
    causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(named.slice(0, 50))}: invalid character U+${code} (at position ${bad})`, field: 'fieldManager' });
  }
  if (causes.length > 0) throw invalid(`${verb[0]!.toUpperCase()}${verb.slice(1)}Options`, 'meta.k8s.io', '', causes);
  return { fieldManager: named || managerFromUserAgent(userAgent), force: force === true };
}
