/**
 * The DNS wire format (RFC 1035 §4) as far as a cluster's resolver needs it: a query's header and
 * first question read, and an answer built for it with A, AAAA, PTR, SRV or CNAME records (names
 * written out in full, the question's name by pointer). A message that is not a query, or is cut
 * short, reads as undefined: the server drops it, as resolvers do with garbage.
 */
import { isIPv4 } from 'node:net';

export const RecordType = { A: 1, CNAME: 5, PTR: 12, AAAA: 28, SRV: 33, ANY: 255 } as const;
export const Rcode = { NoError: 0, FormErr: 1, ServFail: 2, NXDomain: 3, NotImp: 4, Refused: 5 } as const;

export interface Query {
  id: number;
  /** The header's flags as sent (opcode and RD are echoed). */
  flags: number;
  /** Lower case, no trailing dot. */
  name: string;
  type: number;
  class: number;
  /** The question as it was on the wire (copied into the answer). */
  question: Buffer;
}

export type Answer =
  | { type: typeof RecordType.A | typeof RecordType.AAAA; name: string; ttl: number; address: string }
  | { type: typeof RecordType.PTR | typeof RecordType.CNAME; name: string; ttl: number; target: string }
  | { type: typeof RecordType.SRV; name: string; ttl: number; priority: number; weight: number; port: number; target: string };

const MaxName = 255;

/** Reads the name at `at` (no compression: a query's question never needs it); undefined when malformed. */
function readName(buf: Buffer, at: number): { name: string; end: number } | undefined {
  const labels: string[] = [];
  let length = 0;
  for (let i = at; i < buf.length;) {
    const n = buf[i]!;
    if (n === 0) return { name: labels.join('.').toLowerCase(), end: i + 1 };
    if (n > 63 || i + 1 + n > buf.length) return undefined;
    length += n + 1;
    if (length > MaxName) return undefined;
    labels.push(buf.toString('latin1', i + 1, i + 1 + n));
    i += 1 + n;
  }
  return undefined;
}

/** A standard query (QR 0, opcode 0) with one question; undefined for anything else. */
export function parseQuery(buf: Buffer): Query | undefined {
  if (buf.length < 12) return undefined;
  const id = buf.readUInt16BE(0);
  const flags = buf.readUInt16BE(2);
  if (flags & 0x8000 || ((flags >> 11) & 0xf) !== 0 || buf.readUInt16BE(4) !== 1) return undefined;
  const read = readName(buf, 12);
  if (!read || read.end + 4 > buf.length) return undefined;
  return { id, flags, name: read.name, type: buf.readUInt16BE(read.end), class: buf.readUInt16BE(read.end + 2), question: buf.subarray(12, read.end + 4) };
}

function writeName(name: string): Buffer {
  const parts = name.split('.').filter(Boolean).map((l) => {
    const b = Buffer.from(l, 'latin1');
    return Buffer.concat([Buffer.from([b.length]), b]);
  });
  return Buffer.concat([...parts, Buffer.from([0])]);
}

const ipv4 = (a: string) => Buffer.from(a.split('.').map(Number));
const ipv6 = (a: string): Buffer => {
  const [head = '', tail = ''] = a.split('::');
  const groups = (s: string) => (s ? s.split(':') : []);
  const h = groups(head);
  const t = a.includes('::') ? groups(tail) : [];
  const all = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16) || 0, i * 2));
  return out;
};

function rdata(a: Answer): Buffer {
  switch (a.type) {
    case RecordType.A:
      return ipv4(a.address);
    case RecordType.AAAA:
      return ipv6(a.address);
    case RecordType.PTR:
    case RecordType.CNAME:
      return writeName(a.target);
    case RecordType.SRV: {
      const head = Buffer.alloc(6);
      head.writeUInt16BE(a.priority, 0);
      head.writeUInt16BE(a.weight, 2);
      head.writeUInt16BE(a.port, 4);
      return Buffer.concat([head, writeName(a.target)]);
    }
  }
}

function record(a: Answer, questionName: string): Buffer {
  // The question's own name by pointer to offset 12; another name written out.
  const name = a.name === questionName ? Buffer.from([0xc0, 0x0c]) : writeName(a.name);
  const data = rdata(a);
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(a.type, 0);
  fixed.writeUInt16BE(1, 2);
  fixed.writeUInt32BE(a.ttl, 4);
  fixed.writeUInt16BE(data.length, 8);
  return Buffer.concat([name, fixed, data]);
}

/** The answer to `q`: its question echoed, `answers` (in order), `authoritative` for the cluster's own names. */
export function buildAnswer(q: Query, rcode: number, answers: readonly Answer[], authoritative: boolean, extra: readonly Answer[] = []): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(q.id, 0);
  // QR, the query's opcode and RD, AA when ours, RA (we recurse for names outside the cluster).
  header.writeUInt16BE(0x8000 | (q.flags & 0x7900) | (authoritative ? 0x0400 : 0) | 0x0080 | (rcode & 0xf), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  header.writeUInt16BE(0, 8);
  header.writeUInt16BE(extra.length, 10);
  return Buffer.concat([header, q.question, ...answers.map((a) => record(a, q.name)), ...extra.map((a) => record(a, q.name))]);
}

/** A bare error answer (SERVFAIL when the upstream does not answer, REFUSED …). */
export const errorAnswer = (q: Query, rcode: number): Buffer => buildAnswer(q, rcode, [], false);

/** The address record type for an IP. */
export const addressType = (ip: string): typeof RecordType.A | typeof RecordType.AAAA => (isIPv4(ip) ? RecordType.A : RecordType.AAAA);
