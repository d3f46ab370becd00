import { describe, expect, it } from 'vitest';
import type { IKeyValue } from 'etcd3';
import { GetBatcher, MAX_TXN_OPS } from './reads.js';

const kv = (key: Buffer): IKeyValue => ({ key, value: Buffer.from(`v:${key}`), create_revision: '1', mod_revision: '1', version: '1', lease: '0' });

describe('GetBatcher', () => {
  it('coalesces the gets of one loop turn into reads of at most MAX_TXN_OPS keys, answering each in order', async () => {
    const batches: string[][] = [];
    const b = new GetBatcher(async (keys) => {
      batches.push(keys.map(String));
      return keys.map((k) => (String(k).endsWith('absent') ? undefined : kv(k)));
    });
    const keys = Array.from({ length: 300 }, (_, i) => (i % 10 === 0 ? `k${i}-absent` : `k${i}`));
    const got = await Promise.all(keys.map((k) => b.get(Buffer.from(k))));
    expect(batches.map((x) => x.length)).toEqual([MAX_TXN_OPS, MAX_TXN_OPS, 300 - 2 * MAX_TXN_OPS]);
    expect(batches.flat()).toEqual(keys);
    got.forEach((g, i) => expect(g === undefined ? undefined : String(g.value)).toBe(keys[i]!.endsWith('absent') ? undefined : `v:${keys[i]}`));
  });

  it('a get issued after a batch was sent goes into the next read', async () => {
    const batches: number[] = [];
    const b = new GetBatcher(async (keys) => (batches.push(keys.length), keys.map(kv)));
    const first = b.get(Buffer.from('a'));
    await new Promise((r) => setImmediate(r));
    await Promise.all([first, b.get(Buffer.from('b')), b.get(Buffer.from('c'))]);
    expect(batches).toEqual([1, 2]);
  });

  it('a failed read rejects every get of that batch with the error, and the next batch works', async () => {
    let fail = true;
    const b = new GetBatcher(async (keys) => {
      if (fail) throw new Error('etcd down');
      return keys.map(kv);
    });
    const results = await Promise.allSettled([b.get(Buffer.from('a')), b.get(Buffer.from('b'))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((results[0] as PromiseRejectedResult).reason.message).toBe('etcd down');
    fail = false;
    expect(String((await b.get(Buffer.from('c')))!.value)).toBe('v:c');
  });
});
