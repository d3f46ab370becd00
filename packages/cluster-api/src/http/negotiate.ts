/**
 * Content negotiation: which representation a client accepts (JSON, YAML, meta.k8s.io Table,
 * protobuf, watch streams) and how a request body is decoded. Protobuf is offered only where the
 * caller can produce it (typed kinds, `protobuf` true): elsewhere a client that lists JSON after it
 * (client-go's default `application/vnd.kubernetes.protobuf, application/json`) gets JSON and one
 * that accepts only protobuf gets 406. Protobuf bodies are decoded by ../protobuf/codec.ts.
 */
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { PatchType } from '../registry/rest.js';
import { decodeProtobuf, encodeProtobuf, ProtobufMediaType } from '../protobuf/codec.js';
import { goJson } from './json.js';
import { checkDepth, MaxNestingDepth, MaxYamlDepthBound, nestsDeeperThan, tooDeep, yamlDepthBound } from '../registry/generic/depth.js';
import { malformedBody, notAcceptable, unsupportedMediaType, unsupportedPatchType } from '../api/errors.js';

export const OutputFormats = ['json', 'yaml', 'table', 'protobuf'] as const;
export type OutputFormat = (typeof OutputFormats)[number];

export interface Output {
  format: OutputFormat;
  /** For `table`: the meta.k8s.io version the client asked for (v1 or v1beta1, same shape). */
  tableVersion?: string;
  /**
   * `as=PartialObjectMetadata` / `as=PartialObjectMetadataList` (client-go's and controller-runtime's
   * metadata-only clients): the answer is the objects' metadata alone, in `format` (JSON, YAML or protobuf).
   */
  partial?: { kind: PartialKind; version: string };
  /** `pretty=1` among the media type's parameters. */
  pretty?: boolean;
}

export const PartialKinds = ['PartialObjectMetadata', 'PartialObjectMetadataList'] as const;
export type PartialKind = (typeof PartialKinds)[number];

interface MediaRange {
  type: string;
  params: Map<string, string>;
  q: number;
}

function parseMediaRange(entry: string): MediaRange {
  const [type = '', ...rawParams] = entry.split(';');
  const params = new Map<string, string>();
  for (const p of rawParams) {
    const eq = p.indexOf('=');
    if (eq > 0) params.set(p.slice(0, eq).trim().toLowerCase(), p.slice(eq + 1).trim());
  }
  const q = params.has('q') ? Number(params.get('q')) : 1;
  return { type: type.trim().toLowerCase(), params, q: Number.isFinite(q) ? q : 0 };
}

/** Clients send a handful of distinct Accept headers, over and over: remember the answers. */
const outputCache = new Map<string, Output>();
const maxCached = 64;

/** The first acceptable range in the client's order of preference (q, then position, as goautoneg). */
export function negotiateOutput(accept: string | undefined, protobuf = false): Output {
  if (!accept) return { format: 'json' };
  const key = protobuf ? `protobuf:${accept}` : accept;
  const cached = outputCache.get(key);
  if (cached) return cached;
  const output = negotiate(accept, protobuf);
  if (outputCache.size < maxCached) outputCache.set(key, output);
  return output;
}

/** A protobuf range counts only where the caller can answer in protobuf (typed kinds; not discovery, not Tables). */
const isProtobuf = (range: MediaRange): boolean => range.type === ProtobufMediaType && !range.params.has('as');

function negotiate(accept: string, protobuf: boolean): Output {
  const ranges = accept
    .split(',')
    .map(parseMediaRange)
    .filter((r) => r.q > 0)
    .sort((a, b) => b.q - a.q);
  for (const range of ranges) {
    const output: Output | undefined = protobuf && isProtobuf(range) ? { format: 'protobuf' } : outputFor(range);
    if (output) return range.params.get('pretty') === '1' ? { ...output, pretty: true } : output;
  }
  throw notAcceptable();
}

const isMetaVersion = (g: string | undefined, v: string | undefined): boolean => g === 'meta.k8s.io' && (v === 'v1' || v === 'v1beta1');

/** The representation a range asks for; `as=` transforms are kube-apiserver's: Table in JSON, metadata in any format. */
function outputFor(range: MediaRange): Output | undefined {
  const as = range.params.get('as');
  const g = range.params.get('g');
  const v = range.params.get('v');
  if (as === undefined) return plainFormat(range.type);
  if (!isMetaVersion(g, v)) return undefined;
  if (as === 'Table') return range.type === 'application/json' || range.type === '*/*' ? { format: 'table', tableVersion: v } : undefined;
  if (!(PartialKinds as readonly string[]).includes(as)) return undefined;
  // meta.k8s.io/v1beta1 has its own PartialObjectMetadataList message, not served here: JSON and YAML only.
  const format = range.type === ProtobufMediaType ? (v === 'v1' ? 'protobuf' : undefined) : plainFormat(range.type)?.format;
  return format && { format, partial: { kind: as as PartialKind, version: v! } };
}

function plainFormat(type: string): Output | undefined {
  switch (type) {
    case 'application/json':
    case 'application/*':
    case '*/*':
      return { format: 'json' };
    case 'application/yaml':
      return { format: 'yaml' };
    default:
      return undefined;
  }
}

/** Watch streams are JSON lines (or Table events); YAML has no stream framing in Kubernetes either. */
export function negotiateWatch(accept: string | undefined, protobuf = false): Output {
  const out = negotiateOutput(accept?.replace(/;\s*stream=watch/g, ''), protobuf);
  if (out.format === 'yaml') throw notAcceptable();
  return out;
}

export function encode(value: unknown, format: OutputFormat, pretty: boolean): { contentType: string; body: string | Buffer } {
  if (format === 'protobuf') return { contentType: ProtobufMediaType, body: encodeProtobuf(value) };
  if (format === 'yaml') return { contentType: 'application/yaml', body: yamlOf(value) };
  return { contentType: 'application/json', body: goJson(value, pretty) };
}

const patchTypes: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
};

const mediaType = (contentType: string | undefined): string =>
  contentType === 'application/json' ? contentType : (contentType ?? '').split(';')[0]!.trim().toLowerCase();

/** The patch type of a PATCH body; 415 for anything else (a plain `application/json` included, as Kubernetes). */
export function patchTypeOf(contentType: string | undefined): PatchType {
  const type = patchTypes[mediaType(contentType)];
  if (!type) throw unsupportedPatchType(mediaType(contentType));
  return type;
}

/**
 * Decode a create/update/delete/patch body. A missing Content-Type is read as JSON: the spec lets
 * these operations consume any type and curl-style clients often omit it. Nesting is bounded before
 * anything recursive sees the body (depth.ts): JSON.parse and the protobuf decoder of a bounded schema
 * do not recurse on the input, the YAML parser does and is given only text whose bound passes.
 */
export function decodeBody(contentType: string | undefined, bytes: Buffer): unknown {
  const type = mediaType(contentType);
  let body: unknown;
  if (type === '' || type === 'application/json' || type.endsWith('+json')) body = parseJson(bytes.toString('utf8'));
  else if (type === 'application/yaml' || type === 'application/apply-patch+yaml') body = parseYamlBody(bytes.toString('utf8'));
  else if (type === ProtobufMediaType) body = decodeProtobuf(bytes);
  else throw unsupportedMediaType(type);
  checkDepth(body);
  return body;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw malformedBody(`json parse error: ${(err as Error).message}`);
  }
}

function parseYamlBody(text: string): unknown {
  if (yamlDepthBound(text) > MaxYamlDepthBound) throw tooDeep();
  try {
    return parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    throw malformedBody(`yaml parse error: ${(err as Error).message.split('\n')[0]}`);
  }
}

/**
 * YAML of an object stored before nesting was bounded (or written to storage by other means) may be
 * too deep for the YAML encoder: such a document is answered as JSON, which is YAML too.
 */
function yamlOf(value: unknown): string {
  return nestsDeeperThan(value, MaxNestingDepth) ? goJson(value) : stringifyYaml(value);
}
