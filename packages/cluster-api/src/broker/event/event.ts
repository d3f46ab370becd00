/**
 * A CloudEvent as the broker keeps it: context attributes (extensions included) with their CloudEvents
 * types, and the data as the exact bytes that arrived. The broker never rewrites either; what it
 * needs of its own (the hop TTL, the trace context of the request) travels beside the event in
 * the log record, not in it.
 */

/** CloudEvents' type system as JSON carries it: String (URI, Timestamp… as strings), Integer, Boolean. */
export type AttributeValue = string | number | boolean;

export interface CloudEvent {
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  /** Undefined when the event has no data. */
  readonly data?: Uint8Array;
}

/** Knative's hop limit: a reply re-enqueued from a reply … at most this many times in a chain. */
export const DEFAULT_TTL = 255;
/** The extension Knative uses for it on the wire; stripped before delivery, as Knative's filter does. */
export const TTL_EXTENSION = 'knativebrokerttl';

/** What the log stores per event. */
export interface LogRecord {
  readonly event: CloudEvent;
  /** Hops left: a reply to this event gets `ttl - 1`, and is dropped at 0. */
  readonly ttl: number;
  readonly traceparent?: string;
  readonly tracestate?: string;
}

interface RecordHeader {
  a: Record<string, AttributeValue>;
  t: number;
  /** 1 when the event has data, possibly empty. */
  d?: 1;
  p?: string;
  s?: string;
}

/**
 * The record as bytes: a 4-byte big-endian header length, the header as JSON, then the data bytes
 * unchanged (no base64: a binary-mode body is stored as it came).
 */
export function encodeRecord(r: LogRecord): Buffer {
  const header: RecordHeader = { a: r.event.attributes as Record<string, AttributeValue>, t: r.ttl };
  if (r.event.data) header.d = 1;
  if (r.traceparent) header.p = r.traceparent;
  if (r.tracestate) header.s = r.tracestate;
  const head = Buffer.from(JSON.stringify(header), 'utf8');
  const data = r.event.data;
  const out = Buffer.allocUnsafe(4 + head.length + (data?.length ?? 0));
  out.writeUInt32BE(head.length, 0);
  head.copy(out, 4);
  if (data) out.set(data, 4 + head.length);
  return out;
}

export function decodeRecord(bytes: Uint8Array): LogRecord {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const len = buf.readUInt32BE(0);
  const header = JSON.parse(buf.toString('utf8', 4, 4 + len)) as RecordHeader;
  const event: CloudEvent = header.d ? { attributes: header.a, data: buf.subarray(4 + len) } : { attributes: header.a };
  return {
    event,
    ttl: header.t,
    ...(header.p ? { traceparent: header.p } : {}),
    ...(header.s ? { tracestate: header.s } : {}),
  };
}

/** The attributes' string form, as CESQL and the exact/prefix/suffix filters compare them. */
export function attributeString(v: AttributeValue): string {
  return typeof v === 'string' ? v : String(v);
}
