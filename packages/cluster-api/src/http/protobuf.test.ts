import { describe, expect, it } from 'vitest';
import { decodeProtobuf } from './protobuf.js';

/** Minimal protobuf writer for the test: varint and length-delimited fields only. */
const varint = (n: number): number[] => {
  const out: number[] = [];
  do {
    out.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>>= 7;
  } while (n > 0);
  return out;
};
const ld = (field: number, payload: Buffer | string): Buffer => {
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  return Buffer.from([...varint((field << 3) | 2), ...varint(body.length), ...body]);
};
const num = (field: number, n: number): Buffer => Buffer.from([...varint(field << 3), ...varint(n)]);
const msg = (...parts: Buffer[]) => Buffer.concat(parts);
const envelope = (apiVersion: string, kind: string, raw: Buffer) =>
  Buffer.concat([Buffer.from('k8s\0', 'latin1'), ld(1, msg(ld(1, apiVersion), ld(2, kind))), ld(2, raw), ld(3, ''), ld(4, '')]);

describe('decodeProtobuf', () => {
  it('decodes a Namespace as kubectl create namespace sends it', () => {
    const meta = msg(ld(1, 'shop'), ld(8, msg()), ld(11, msg(ld(1, 'team'), ld(2, 'a'))), ld(11, msg(ld(1, 'env'), ld(2, 'dev'))), ld(14, 'f1'), ld(14, 'f2'), num(7, 3));
    const ns = decodeProtobuf(envelope('v1', 'Namespace', msg(ld(1, meta), ld(2, msg()), ld(3, msg()))));
    expect(ns).toEqual({
      apiVersion: 'v1', kind: 'Namespace',
      metadata: { name: 'shop', labels: { team: 'a', env: 'dev' }, finalizers: ['f1', 'f2'], generation: 3 },
      spec: {}, status: {},
    });
  });

  it('decodes Secret data bytes as base64 and ServiceAccount references', () => {
    const secret = decodeProtobuf(envelope('v1', 'Secret', msg(ld(1, ld(1, 's')), ld(2, msg(ld(1, 'k'), ld(2, Buffer.from([0, 255])))), ld(3, 'Opaque'))));
    expect(secret).toEqual({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: 'AP8=' }, type: 'Opaque' });
    const sa = decodeProtobuf(envelope('v1', 'ServiceAccount', msg(ld(1, ld(1, 'sa')), ld(3, ld(1, 'pull')), num(4, 1))));
    expect(sa).toEqual({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa' }, imagePullSecrets: [{ name: 'pull' }], automountServiceAccountToken: true });
  });

  it.each([
    ['no envelope', Buffer.from('{"kind":"Namespace"}'), 400],
    ['a truncated field', Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.from([0x0a, 0x10, 0x01])]), 400],
    ['an unsupported kind', envelope('v1', 'Pod', msg()), 415],
    ['an endless varint', Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.alloc(12, 0xff)]), 400],
  ])('refuses %s', (_what, bytes, code) => {
    expect(() => decodeProtobuf(bytes)).toThrow(expect.objectContaining({ code }));
  });
});
