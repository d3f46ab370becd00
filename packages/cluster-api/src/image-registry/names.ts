/**
 * The distribution spec's grammar for what a request path holds (repository names, tags, digests)
 * and the routes of its API, read from the raw path: nothing is URL-decoded or resolved, so `..`,
 * `%2e` or a backslash can never name a file (a name is `[a-z0-9]` components joined by `.`, `_`,
 * `__`, `-` and `/`; digests are sha256, the one algorithm the image store keeps).
 */
import { DistributionError } from './errors.js';

const Component = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const Name = new RegExp(`^${Component}(?:/${Component})*$`);
const Tag = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const Sha256 = /^sha256:[a-f0-9]{64}$/;

export const MaxNameLength = 255;

export function checkName(name: string): string {
  if (name.length > MaxNameLength || !Name.test(name)) throw new DistributionError('NAME_INVALID', 'invalid repository name');
  return name;
}

export const isDigestRef = (ref: string): boolean => ref.includes(':');

export function checkDigest(digest: string): string {
  if (Sha256.test(digest)) return digest;
  if (!digest.startsWith('sha256:') && /^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$/.test(digest)) throw new DistributionError('UNSUPPORTED', 'only sha256 digests are supported', 400);
  throw new DistributionError('DIGEST_INVALID', 'invalid digest');
}

export function checkTag(tag: string): string {
  if (!Tag.test(tag)) throw new DistributionError('TAG_INVALID', 'invalid tag');
  return tag;
}

/** A manifest reference: a digest or a tag. */
export const checkReference = (ref: string): string => (isDigestRef(ref) ? checkDigest(ref) : checkTag(ref));

export type Route =
  | { kind: 'base' }
  | { kind: 'catalog' }
  | { kind: 'tags'; name: string }
  | { kind: 'manifest'; name: string; reference: string }
  | { kind: 'uploads'; name: string }
  | { kind: 'upload'; name: string; id: string }
  | { kind: 'blob'; name: string; digest: string };

const routes: [RegExp, (m: RegExpExecArray) => Route][] = [
  [/^\/v2\/?$/, () => ({ kind: 'base' })],
  [/^\/v2\/_catalog$/, () => ({ kind: 'catalog' })],
  [/^\/v2\/(.+)\/tags\/list$/, (m) => ({ kind: 'tags', name: m[1]! })],
  [/^\/v2\/(.+)\/manifests\/([^/]+)$/, (m) => ({ kind: 'manifest', name: m[1]!, reference: m[2]! })],
  [/^\/v2\/(.+)\/blobs\/uploads\/?$/, (m) => ({ kind: 'uploads', name: m[1]! })],
  [/^\/v2\/(.+)\/blobs\/uploads\/([^/]+)$/, (m) => ({ kind: 'upload', name: m[1]!, id: m[2]! })],
  [/^\/v2\/(.+)\/blobs\/([^/]+)$/, (m) => ({ kind: 'blob', name: m[1]!, digest: m[2]! })],
];

/** The route of a raw request path (no query), its name and references checked; undefined when none matches. */
export function route(path: string): Route | undefined {
  for (const [pattern, make] of routes) {
    const m = pattern.exec(path);
    if (!m) continue;
    const r = make(m);
    if ('name' in r) checkName(r.name);
    if (r.kind === 'manifest') checkReference(r.reference);
    if (r.kind === 'blob') checkDigest(r.digest);
    return r;
  }
  return undefined;
}
