/**
 * DER, the encoding of X.509 certificates and PKCS#10 requests: a reader that keeps every element's
 * exact bytes (a signature covers the bytes as sent, never a re-encoding), and the few encoders a
 * certificate and a request are built from. Node's crypto signs and verifies; it parses no request.
 */

export class DerError extends Error {
  override readonly name = 'DerError';
}

/** One element: its tag byte, its whole encoding, its content, and its children when constructed. */
export interface Der {
  tag: number;
  bytes: Buffer;
  content: Buffer;
  children: Der[];
}

const Constructed = 0x20;

function element(buf: Buffer, at: number): Der {
  if (at + 2 > buf.length) throw new DerError('truncated element');
  const tag = buf[at]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError('high tag numbers are not supported');
  let length = buf[at + 1]!;
  let start = at + 2;
  if (length & 0x80) {
    const n = length & 0x7f;
    if (n === 0 || n > 4 || start + n > buf.length) throw new DerError('bad length');
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + buf[start + i]!;
    start += n;
  }
  const end = start + length;
  if (end > buf.length) throw new DerError('truncated element');
  const content = buf.subarray(start, end);
  const children: Der[] = [];
  if (tag & Constructed) for (let p = 0; p < content.length; ) {
    const child = element(content, p);
    children.push(child);
    p += child.bytes.length;
  }
  return { tag, bytes: buf.subarray(at, end), content, children };
}

/** The one element `buf` holds (trailing bytes are an error). */
export function readDer(buf: Buffer): Der {
  const top = element(buf, 0);
  if (top.bytes.length !== buf.length) throw new DerError('trailing data after the element');
  return top;
}

export const Tag = {
  Boolean: 0x01, Integer: 0x02, BitString: 0x03, OctetString: 0x04, Null: 0x05, Oid: 0x06,
  Utf8String: 0x0c, PrintableString: 0x13, T61String: 0x14, Ia5String: 0x16, UtcTime: 0x17, GeneralizedTime: 0x18,
  BmpString: 0x1e, Sequence: 0x30, Set: 0x31,
} as const;

/** A context-specific tag: `[n]`, constructed (EXPLICIT, or IMPLICIT of a constructed type) or primitive. */
export const contextTag = (n: number, constructed: boolean): number => 0x80 | (constructed ? Constructed : 0) | n;

export function decodeOid(content: Buffer): string {
  if (content.length === 0) throw new DerError('empty object identifier');
  const parts: number[] = [];
  let value = 0;
  for (const byte of content) {
    value = value * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) (parts.push(value), (value = 0));
  }
  const first = parts.shift()!;
  return [first < 80 ? Math.floor(first / 40) : 2, first < 80 ? first % 40 : first - 80, ...parts].join('.');
}

/** A string attribute or name in any of X.509's string types. */
export function decodeString(d: Der): string {
  if (d.tag === Tag.BmpString) {
    const swapped = Buffer.from(d.content);
    swapped.swap16();
    return swapped.toString('utf16le');
  }
  return d.content.toString(d.tag === Tag.Utf8String ? 'utf8' : 'latin1');
}

// Encoders.

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export const tlv = (tag: number, content: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), lengthBytes(content.length), content]);

export const sequence = (...items: Buffer[]): Buffer => tlv(Tag.Sequence, Buffer.concat(items));
export const set = (...items: Buffer[]): Buffer => tlv(Tag.Set, Buffer.concat(items));
export const explicit = (n: number, inner: Buffer): Buffer => tlv(contextTag(n, true), inner);
export const utf8 = (s: string): Buffer => tlv(Tag.Utf8String, Buffer.from(s, 'utf8'));
export const octets = (b: Buffer): Buffer => tlv(Tag.OctetString, b);
export const bool = (v: boolean): Buffer => tlv(Tag.Boolean, Buffer.from([v ? 0xff : 0]));
export const nullValue = (): Buffer => tlv(Tag.Null, Buffer.alloc(0));
/** A BIT STRING of whole bytes (a signature, a key). */
export const bitString = (b: Buffer, unusedBits = 0): Buffer => tlv(Tag.BitString, Buffer.concat([Buffer.from([unusedBits]), b]));

/** A non-negative INTEGER from its big-endian magnitude, minimally encoded. */
export function integer(magnitude: Buffer | number): Buffer {
  const hex = typeof magnitude === 'number' ? magnitude.toString(16) : '';
  let b = typeof magnitude === 'number' ? Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex') : magnitude;
  while (b.length > 1 && b[0] === 0 && !(b[1]! & 0x80)) b = b.subarray(1);
  if (b[0]! & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return tlv(Tag.Integer, b);
}

export function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const bytes: number[] = [];
  for (const n of [a! * 40 + b!, ...rest]) {
    const chunk = [n & 0x7f];
    for (let v = Math.floor(n / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(Tag.Oid, Buffer.from(bytes));
}

/** UTCTime through 2049, GeneralizedTime after, as RFC 5280 requires. */
export function time(at: Date): Buffer {
  const iso = at.toISOString();
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return at.getUTCFullYear() < 2050 ? tlv(Tag.UtcTime, Buffer.from(digits.slice(2), 'latin1')) : tlv(Tag.GeneralizedTime, Buffer.from(digits, 'latin1'));
}
