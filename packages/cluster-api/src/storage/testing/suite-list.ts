/** Conformance: reads at a revision, list paging, count, compaction. */
import { expect, it } from 'vitest';
import type { KeyValue, Storage } from '../interface.js';
import { dec, enc, expectError, type Stores, uniqueRoot } from './suite-helpers.js';

const names = (items: readonly KeyValue[]): string[] => items.map((kv) => kv.key.slice(kv.key.lastIndexOf('/') + 1));

async function fill(s: Storage, prefix: string, n: number): Promise<string[]> {
  const keys = Array.from({ length: n }, (_, i) => `${prefix}k${String(i).padStart(3, '0')}`);
  for (const k of keys) await s.create(k, enc(`v-${k}`));
  return keys;
}

export function listCases(stores: Stores): void {
  it('get at a past revision sees the value as it was, including before creation and after deletion', async () => {
    const s = await stores.get();
    const key = `${uniqueRoot()}ns/a`;
    const before = await s.create(`${uniqueRoot()}ns/other`, enc('o'));
    const v1 = await s.create(key, enc('v1'));
    const v2 = await s.update(key, enc('v2'), v1.modRevision);
    const del = await s.delete(key);
    expect(await s.get(key, { revision: before.modRevision })).toBeUndefined();
    expect(dec((await s.get(key, { revision: v1.modRevision }))!.value)).toBe('v1');
    expect(await s.get(key, { revision: v2.modRevision })).toMatchObject({ modRevision: v2.modRevision, createRevision: v1.modRevision });
    expect(await s.get(key, { revision: del.revision })).toBeUndefined();
    expect(await s.get(key, { revision: 0 })).toBeUndefined();
  });

  it('list returns the keys under the prefix only, sorted, at the current revision', async () => {
    const s = await stores.get();
    const root = uniqueRoot();
    await s.create(`${root}b/z`, enc('1'));
    await s.create(`${root}a/y`, enc('2'));
    await s.create(`${root}a/x`, enc('3'));
    await s.create(`${root}ab/w`, enc('4'));
    const res = await s.list({ prefix: `${root}a/` });
    expect(res.items.map((kv) => kv.key)).toEqual([`${root}a/x`, `${root}a/y`]);
    expect(res.revision).toBe(await s.currentRevision());
    expect(res.more).toBe(false);
    const all = await s.list({ prefix: root });
    expect(all.items.map((kv) => kv.key)).toEqual([`${root}a/x`, `${root}a/y`, `${root}ab/w`, `${root}b/z`]);
    expect(dec(all.items[0]!.value)).toBe('3');
  });

  it('list at a past revision is a consistent snapshot', async () => {
    const s = await stores.get();
    const root = uniqueRoot();
    const a = await s.create(`${root}a`, enc('a1'));
    await s.create(`${root}b`, enc('b1'));
    const snap = await s.currentRevision();
    await s.update(`${root}a`, enc('a2'), a.modRevision);
    await s.delete(`${root}b`);
    await s.create(`${root}c`, enc('c1'));
    const old = await s.list({ prefix: root, revision: snap });
    expect(old.revision).toBe(snap);
    expect(old.items.map((kv) => [names([kv])[0], dec(kv.value)])).toEqual([['a', 'a1'], ['b', 'b1']]);
    const now = await s.list({ prefix: root });
    expect(now.items.map((kv) => [names([kv])[0], dec(kv.value)])).toEqual([['a', 'a2'], ['c', 'c1']]);
  });

  it('paging with limit + startAfter at one revision stays consistent while writes go on', async () => {
    const s = await stores.get();
    const root = uniqueRoot();
    const keys = await fill(s, root, 25);
    const p1 = await s.list({ prefix: root, limit: 10 });
    expect(p1.items.map((kv) => kv.key)).toEqual(keys.slice(0, 10));
    expect(p1).toMatchObject({ more: true, remaining: 15 });
    // Writes between pages must not show in later pages of the same snapshot.
    await s.delete(keys[12]!);
    await s.create(`${root}k0105`, enc('new'));
    const last = (await s.get(keys[20]!))!;
    await s.update(keys[20]!, enc('changed'), last.modRevision);
    const p2 = await s.list({ prefix: root, limit: 10, revision: p1.revision, startAfter: p1.items.at(-1)!.key });
    const p3 = await s.list({ prefix: root, limit: 10, revision: p1.revision, startAfter: p2.items.at(-1)!.key });
    expect(p2).toMatchObject({ revision: p1.revision, more: true, remaining: 5 });
    expect(p3).toMatchObject({ revision: p1.revision, more: false });
    expect(p3.remaining ?? 0).toBe(0);
    const paged = [...p1.items, ...p2.items, ...p3.items];
    expect(paged.map((kv) => kv.key)).toEqual(keys);
    expect(dec(paged[20]!.value)).toBe(`v-${keys[20]}`);
    const latest = await s.list({ prefix: root });
    expect(latest.items).toHaveLength(25);
    expect(latest.items.map((kv) => kv.key)).toContain(`${root}k0105`);
  });

  it('a page that ends exactly at the last key reports more = false', async () => {
    const s = await stores.get();
    const root = uniqueRoot();
    const keys = await fill(s, root, 4);
    const res = await s.list({ prefix: root, limit: 4 });
    expect(res.items.map((kv) => kv.key)).toEqual(keys);
    expect(res.more).toBe(false);
    const after = await s.list({ prefix: root, startAfter: keys[3]! });
    expect(after.items).toEqual([]);
    expect(after.more).toBe(false);
  });

  it('count counts live keys under the prefix', async () => {
    const s = await stores.get();
    const root = uniqueRoot();
    const keys = await fill(s, `${root}ns1/`, 7);
    await fill(s, `${root}ns2/`, 3);
    await s.delete(keys[0]!);
    expect(await s.count(`${root}ns1/`)).toBe(6);
    expect(await s.count(root)).toBe(9);
    expect(await s.count(`${root}none/`)).toBe(0);
  });

  it('malformed list options are InvalidArgument', async () => {
    const s = await stores.get();
    const root = uniqueRoot();
    await expectError(s.list({ prefix: root.slice(0, -1) }), 'InvalidArgument');
    await expectError(s.list({ prefix: root, limit: -1 }), 'InvalidArgument');
    await expectError(s.list({ prefix: root, limit: 2.5 }), 'InvalidArgument');
    await expectError(s.list({ prefix: root, revision: -1 }), 'InvalidArgument');
    await expectError(s.list({ prefix: root, revision: (await s.currentRevision()) + 100 }), 'InvalidArgument');
    await expectError(s.count('no-slash'), 'InvalidArgument');
  });

  it('reads below the compacted revision fail with Compacted; at it they still work', async () => {
    const s = await stores.get();
    const root = uniqueRoot();
    const a1 = await s.create(`${root}a`, enc('a1'));
    const b1 = await s.create(`${root}b`, enc('b1'));
    const a2 = await s.update(`${root}a`, enc('a2'), a1.modRevision);
    await s.delete(`${root}b`);
    const a3 = await s.update(`${root}a`, enc('a3'), a2.modRevision);
    expect(await s.compact(a2.modRevision)).toBe(a2.modRevision);
    expect(await s.compactedRevision()).toBe(a2.modRevision);
    await expectError(s.get(`${root}a`, { revision: b1.modRevision }), 'Compacted', a2.modRevision);
    await expectError(s.list({ prefix: root, revision: a1.modRevision }), 'Compacted', a2.modRevision);
    const at = await s.list({ prefix: root, revision: a2.modRevision });
    expect(at.items.map((kv) => dec(kv.value))).toEqual(['a2', 'b1']);
    expect(dec((await s.get(`${root}a`))!.value)).toBe('a3');
    expect(await s.list({ prefix: root })).toMatchObject({ revision: a3.modRevision });
    // Compaction never moves backwards and never beyond the present.
    expect(await s.compact(a1.modRevision)).toBe(a2.modRevision);
    await expectError(s.compact(a3.modRevision + 100), 'InvalidArgument');
    const full = await s.compact(a3.modRevision);
    expect(full).toBe(a3.modRevision);
    expect((await s.list({ prefix: root })).items.map((kv) => dec(kv.value))).toEqual(['a3']);
    const again = await s.create(`${root}b`, enc('b2'));
    expect(dec((await s.get(`${root}b`))!.value)).toBe('b2');
    expect(again.modRevision).toBeGreaterThan(a3.modRevision);
  });
}
