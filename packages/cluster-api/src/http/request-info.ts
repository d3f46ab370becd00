/**
 * Parse a request path into what it addresses, as Kubernetes' RequestInfoFactory does
 * (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go): discovery documents, resource paths
 * (core `/api/v1/...` and grouped `/apis/{g}/{v}/...`, segments after a subresource kept for the
 * proxies), the legacy `/watch/` prefix, and everything else as a non-resource path. Pure: no
 * registry lookups here, the router does those.
 */

export const RequestVerbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] as const;
export type RequestVerb = (typeof RequestVerbs)[number];

/** `/api`, `/apis`, `/apis/{g}`, `/api/v1` or `/apis/{g}/{v}` (and `/oapi/v1`, the same resource list). */
export interface DiscoveryInfo {
  type: 'discovery';
  /** `apiVersions` (/api), `groupList` (/apis), `group` (/apis/{g}), `resourceList` (a group version). */
  document: 'apiVersions' | 'groupList' | 'group' | 'resourceList';
  group?: string;
  version?: string;
}

export interface ResourceInfo {
  type: 'resource';
  /** Undefined for a method no resource path accepts (OPTIONS, …): the router answers 405. */
  verb: RequestVerb | undefined;
  group: string;
  version: string;
  plural: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  /**
   * The raw path after the subresource segment, when anything follows it (`…/pods/p/proxy/a/b/` →
   * `/a/b/`), as Kubernetes keeps those parts: only a connect subresource that takes a path serves it.
   */
  subpath?: string;
}

export interface NonResourceInfo {
  type: 'nonResource';
  path: string;
}

export type RequestInfo = DiscoveryInfo | ResourceInfo | NonResourceInfo;

/** Subresources of a namespace object itself, so `/namespaces/x/status` is not "resource status in x". */
const namespaceSubresources = new Set(['status', 'finalize']);

/** `?watch=` as kube-apiserver decodes booleans: "false" and "0" (any case) are false, any other value true. */
const watchParam = (v: string | null): boolean => v !== null && v !== '0' && v.toLowerCase() !== 'false';

/** Split a path into non-empty segments; trailing slashes (`/api/v1/`) address the same thing. */
function segments(path: string): string[] {
  const out: string[] = [];
  let start = 0;
  // One pass, no intermediate arrays: this runs on every request.
  while (start < path.length) {
    let end = path.indexOf('/', start);
    if (end < 0) end = path.length;
    if (end > start) out.push(decodeSegment(path.slice(start, end)));
    start = end + 1;
  }
  return out;
}

/** `%3A` in a name is `:` (client-go escapes segments); a malformed escape stays as sent and matches nothing. */
function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const parts = segments(path);
  const prefix = parts[0];
  if (prefix === 'api' || prefix === 'oapi') {
    if (parts.length === 1) return prefix === 'api' ? { type: 'discovery', document: 'apiVersions' } : nonResource(path);
    if (parts[1] !== 'v1') return nonResource(path);
    return parts.length === 2
      ? { type: 'discovery', document: 'resourceList', group: '', version: 'v1' }
      : prefix === 'api'
        ? resourceInfo(method, '', 'v1', parts.slice(2), query, path, 2)
        : nonResource(path);
  }
  if (prefix === 'apis') {
    if (parts.length === 1) return { type: 'discovery', document: 'groupList' };
    if (parts.length === 2) return { type: 'discovery', document: 'group', group: parts[1] };
    if (parts.length === 3) return { type: 'discovery', document: 'resourceList', group: parts[1], version: parts[2] };
    return resourceInfo(method, parts[1]!, parts[2]!, parts.slice(3), query, path, 3);
  }
  return nonResource(path);
}

const nonResource = (path: string): NonResourceInfo => ({ type: 'nonResource', path });

function resourceInfo(
  method: string,
  group: string,
  version: string,
  rest: string[],
  query: URLSearchParams,
  path: string,
  /** Segments before `rest` (`api/v1`: 2, `apis/{g}/{v}`: 3). */
  before: number,
): RequestInfo {
  let parts = rest;
  const watchPath = parts[0] === 'watch';
  if (watchPath) parts = parts.slice(1);
  let namespace: string | undefined;
  if (parts[0] === 'namespaces' && parts.length > 1) {
    namespace = parts[1];
    if (parts.length > 2 && !namespaceSubresources.has(parts[2]!)) parts = parts.slice(2);
    else namespace = undefined;
  }
  const [plural, name, subresource, ...extra] = parts;
  if (!plural) return nonResource(path);
  // As RequestInfoFactory: `?watch` turns a collection GET into a watch; a named GET stays a get.
  const verb = verbOf(method, name !== undefined, watchPath || (name === undefined && watchParam(query.get('watch'))));
  const info: ResourceInfo = { type: 'resource', verb, group, version, plural, namespace, name, subresource };
  if (subresource !== undefined) {
    const subpath = rawAfter(path, before + rest.length - extra.length);
    if (subpath) info.subpath = subpath;
  }
  return info;
}

/** What follows the first `count` non-empty segments of the raw path (slashes and escapes as sent). */
function rawAfter(path: string, count: number): string {
  let at = 0;
  for (let seen = 0; seen < count && at < path.length; seen++) {
    while (path[at] === '/') at++;
    const end = path.indexOf('/', at);
    at = end < 0 ? path.length : end;
  }
  return path.slice(at);
}

/** Method + shape → verb; `undefined` for a method no resource path accepts (the router answers 405). */
function verbOf(method: string, named: boolean, watch: boolean): RequestVerb | undefined {
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (watch) return 'watch';
      return named ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      return undefined;
  }
}
