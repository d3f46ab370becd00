/**
 * Kubernetes' protobuf wire format (`application/vnd.kubernetes.protobuf`): the 4-byte magic `k8s\0`,
 * then a runtime.Unknown whose typeMeta names the kind and whose raw holds the typed message. Watch
 * streams frame each WatchEvent with a 4-byte big-endian length; the event's object is itself a
 * complete envelope (client-go's length-delimited framer + embedded protobuf decoder expect exactly this).
 */
import type { Type } from 'protobufjs';
import type { WatchEvent } from '../api/meta.js';
import { malformedBody } from '../api/errors.js';
import { ApiError } from '../api/errors.js';
import { fromWire, toWire } from './convert.js';
import { messageOf, metaMessage, runtimeMessage } from './schema.js';

export const ProtobufMediaType = 'application/vnd.kubernetes.protobuf';
export const ProtobufWatchMediaType = `${ProtobufMediaType};stream=watch`;

const magic = Buffer.from('k8s\0', 'latin1');

type Json = Record<string, unknown>;

/** Whether objects of this kind have a protobuf form (schemaless kinds do not, as CRDs in Kubernetes). */
export const supportsProtobuf = (apiVersion: string, kind: string): boolean => messageOf(apiVersion, kind) !== undefined;

/** A JSON-shaped object (kind, list or Status) as a `k8s\0` envelope. */
export function encodeProtobuf(value: unknown): Buffer {
  const obj = (value ?? {}) as Json;
  const type = messageOf(obj.apiVersion, obj.kind);
  if (!type) throw new ApiError(406, 'NotAcceptable', `${String(obj.kind)} has no protobuf representation; accept application/json`);
  const raw = type.encode(toWire(type, obj)).finish();
  // contentEncoding and contentType are written empty, as Go's serializer writes them.
  const envelope = runtimeMessage('Unknown').encode({
    typeMeta: { apiVersion: String(obj.apiVersion), kind: String(obj.kind) },
    raw,
    contentEncoding: '',
    contentType: '',
  });
  return Buffer.concat([magic, envelope.finish()]);
}

/**
 * A `k8s\0` envelope as its JSON-shaped object, apiVersion and kind from the envelope. Every failure
 * is a 400 Status (truncated, random or hostile bytes never escape as anything else); a kind with no
 * protobuf form is 415, as for a custom resource.
 */
export function decodeProtobuf(bytes: Uint8Array): Json {
  if (bytes.length < magic.length || !magic.equals(bytes.subarray(0, magic.length)))
    throw malformedBody('protobuf body without the k8s envelope');
  const envelope = decode(runtimeMessage('Unknown'), bytes.subarray(magic.length));
  const typeMeta = (envelope.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const raw = (envelope.raw as Uint8Array | undefined) ?? new Uint8Array(0);
  if (envelope.contentEncoding) throw malformedBody(`unsupported protobuf content encoding ${String(envelope.contentEncoding).slice(0, 40)}`);
  if (!typeMeta.apiVersion || !typeMeta.kind) throw malformedBody('protobuf envelope without apiVersion and kind');
  const type = messageOf(typeMeta.apiVersion, typeMeta.kind);
  if (!type)
    throw new ApiError(415, 'UnsupportedMediaType', `${String(typeMeta.kind ?? 'this object').slice(0, 60)} has no protobuf representation; send it as application/json`);
  return { apiVersion: typeMeta.apiVersion, kind: typeMeta.kind, ...convert(() => fromWire(type, decode(type, raw))) };
}

/** The decoded message itself: fields present on the wire are its own properties. */
function decode(type: Type, bytes: Uint8Array): Json {
  return convert(() => type.decode(bytes) as unknown as Json);
}

/** protobufjs throws plain Errors (RangeError, "invalid wire type", stack overflow on deep nesting). */
function convert<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw malformedBody(`invalid protobuf: ${(err as Error).message ?? String(err)}`);
  }
}

/** One watch event as a frame: 4-byte big-endian length, then the WatchEvent message. */
export function encodeWatchFrame(event: WatchEvent<unknown>): Buffer {
  const type = metaMessage('WatchEvent');
  const message = type.encode({ type: event.type, object: { raw: encodeProtobuf(event.object) } }).finish();
  const length = Buffer.alloc(4);
  length.writeUInt32BE(message.length);
  return Buffer.concat([length, message]);
}

/** Split a buffer of frames into events (for clients and tests); a partial last frame is returned as rest. */
export function decodeWatchFrames(bytes: Buffer): { events: WatchEvent<Json>[]; rest: Buffer } {
  const events: WatchEvent<Json>[] = [];
  let at = 0;
  while (at + 4 <= bytes.length) {
    const size = bytes.readUInt32BE(at);
    if (at + 4 + size > bytes.length) break;
    const event = decode(metaMessage('WatchEvent'), bytes.subarray(at + 4, at + 4 + size));
    const object = decodeProtobuf(((event.object as Json | undefined)?.raw as Uint8Array | undefined) ?? new Uint8Array(0));
    events.push({ type: event.type as WatchEvent['type'], object });
    at += 4 + size;
  }
  return { events, rest: bytes.subarray(at) };
}
