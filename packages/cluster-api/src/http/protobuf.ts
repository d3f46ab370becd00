/**
 * Protobuf request bodies, for the few kinds kubectl's typed `create` subcommands send that way
 * (`kubectl create namespace|secret|serviceaccount` post `application/vnd.kubernetes.protobuf` and do
 * not fall back to JSON). The envelope is Kubernetes' `k8s\0` magic + runtime.Unknown; the message
 * schemas below are the field numbers of Kubernetes' generated.proto. Any other kind is a 415 that says
 * so: full protobuf support is a separate piece of work.
 */
import { malformedBody } from './status.js';
import { ApiError } from '../registry/errors.js';

type Scalar = 'string' | 'int' | 'bool' | 'bytes' | 'time';
/** [JSON name, type, repeated?]; a nested Schema is a message, `map` a map<string, string|bytes>. */
type Field = [string, Scalar | Schema | 'map' | 'bytesMap', boolean?];
interface Schema {
  [field: number]: Field;
}

const Time: Scalar = 'time';
const ownerReference: Schema = { 1: ['kind', 'string'], 3: ['name', 'string'], 4: ['uid', 'string'], 5: ['apiVersion', 'string'], 6: ['controller', 'bool'], 7: ['blockOwnerDeletion', 'bool'] };
const objectMeta: Schema = {
  1: ['name', 'string'], 2: ['generateName', 'string'], 3: ['namespace', 'string'], 5: ['uid', 'string'], 6: ['resourceVersion', 'string'],
  7: ['generation', 'int'], 8: ['creationTimestamp', Time], 9: ['deletionTimestamp', Time], 10: ['deletionGracePeriodSeconds', 'int'],
  11: ['labels', 'map'], 12: ['annotations', 'map'], 13: ['ownerReferences', ownerReference, true], 14: ['finalizers', 'string', true],
};
const objectReference: Schema = { 1: ['kind', 'string'], 2: ['namespace', 'string'], 3: ['name', 'string'], 4: ['uid', 'string'], 5: ['apiVersion', 'string'], 6: ['resourceVersion', 'string'], 7: ['fieldPath', 'string'] };

/** The kinds whose protobuf form is decoded, by `apiVersion/kind`. */
const kinds: Record<string, Schema> = {
  'v1/Namespace': { 1: ['metadata', objectMeta], 2: ['spec', { 1: ['finalizers', 'string', true] }], 3: ['status', { 1: ['phase', 'string'] }] },
  'v1/Secret': { 1: ['metadata', objectMeta], 2: ['data', 'bytesMap'], 3: ['type', 'string'], 4: ['stringData', 'map'], 5: ['immutable', 'bool'] },
  'v1/ServiceAccount': {
    1: ['metadata', objectMeta], 2: ['secrets', objectReference, true], 3: ['imagePullSecrets', { 1: ['name', 'string'] }, true],
    4: ['automountServiceAccountToken', 'bool'],
  },
};

const unknownEnvelope: Schema = { 1: ['typeMeta', { 1: ['apiVersion', 'string'], 2: ['kind', 'string'] }], 2: ['raw', 'bytes'] };
const magic = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** Decode a `k8s\0`-framed protobuf object into its JSON form. */
export function decodeProtobuf(bytes: Buffer): Record<string, unknown> {
  if (bytes.length < 4 || !bytes.subarray(0, 4).equals(magic)) throw malformedBody('protobuf body without the k8s envelope');
  const envelope = decodeMessage(bytes.subarray(4), unknownEnvelope);
  const typeMeta = (envelope.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const schema = kinds[`${typeMeta.apiVersion}/${typeMeta.kind}`];
  if (!schema)
    throw new ApiError(415, 'UnsupportedMediaType', `protobuf bodies are accepted for v1 Namespace, Secret and ServiceAccount only; send ${typeMeta.kind ?? 'this object'} as application/json`);
  const raw = Buffer.from((envelope.raw as string | undefined) ?? '', 'base64');
  return { apiVersion: typeMeta.apiVersion, kind: typeMeta.kind, ...decodeMessage(raw, schema) };
}

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}
  varint(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.buf.length) throw malformedBody('truncated protobuf varint');
      const b = this.buf[this.pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return result;
    }
    throw malformedBody('protobuf varint too long');
  }
  bytes(): Buffer {
    const len = Number(this.varint());
    if (len < 0 || this.pos + len > this.buf.length) throw malformedBody('truncated protobuf field');
    return this.buf.subarray(this.pos, (this.pos += len));
  }
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 2) this.bytes();
    else if (wire === 1 || wire === 5) this.pos += wire === 1 ? 8 : 4;
    else throw malformedBody(`unsupported protobuf wire type ${wire}`);
  }
}

function decodeMessage(buf: Buffer, schema: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const r = new Reader(buf);
  while (r.pos < buf.length) {
    const tag = Number(r.varint());
    const field = schema[tag >>> 3];
    if (!field) {
      r.skip(tag & 7);
      continue;
    }
    const [name, type, repeated] = field;
    const value = decodeValue(r, type, tag & 7);
    if (value === undefined) continue;
    if (type === 'map' || type === 'bytesMap') out[name] = { ...(out[name] as object), ...(value as object) };
    else if (repeated) ((out[name] ??= []) as unknown[]).push(value);
    else out[name] = value;
  }
  return out;
}

function decodeValue(r: Reader, type: Field[1], wire: number): unknown {
  if (type === 'int') return wire === 0 ? Number(BigInt.asIntN(64, r.varint())) : (r.skip(wire), undefined);
  if (type === 'bool') return wire === 0 ? r.varint() !== 0n : (r.skip(wire), undefined);
  if (wire !== 2) return r.skip(wire), undefined;
  const bytes = r.bytes();
  if (type === 'string') return bytes.toString('utf8');
  if (type === 'bytes') return bytes.toString('base64');
  if (type === 'time') return timeOf(decodeMessage(bytes, { 1: ['seconds', 'int'], 2: ['nanos', 'int'] }));
  if (type === 'map' || type === 'bytesMap') {
    const entry = decodeMessage(bytes, { 1: ['key', 'string'], 2: ['value', type === 'map' ? 'string' : 'bytes'] });
    return { [String(entry.key ?? '')]: entry.value ?? '' };
  }
  return decodeMessage(bytes, type);
}

/** A zero Time is Go's unset metav1.Time, which JSON renders as null: leave the field out. */
function timeOf(t: Record<string, unknown>): string | undefined {
  const seconds = Number(t.seconds ?? 0);
  if (!seconds && !t.nanos) return undefined;
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`;
}
