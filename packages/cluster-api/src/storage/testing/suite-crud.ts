/** Conformance: create / get / update / delete, revisions, compare-and-swap, bad input. */
import { expect, it } from 'vitest';
import { dec, enc, expectError, type Stores, uniqueRoot } from './suite-helpers.js';

export function crudCases(stores: Stores): void {
  it('create then get returns the value with createRevision = modRevision = a new revision', async () => {
    const s = await stores.get();
    const key = `${uniqueRoot()}ns/a`;
    const before = await s.currentRevision();
    const kv = await s.create(key, enc('v1'));
    expect(kv).toMatchObject({ key, createRevision: kv.modRevision });
    expect(dec(kv.value)).toBe('v1');
    expect(kv.modRevision).toBeGreaterThan(before);
    expect(await s.currentRevision()).toBe(kv.modRevision);
    const got = await s.get(key);
    expect(got && dec(got.value)).toBe('v1');
    expect(got).toMatchObject({ key, createRevision: kv.modRevision, modRevision: kv.modRevision });
    expect(await s.get(`${key}x`)).toBeUndefined();
  });

  it('getNow, where a backend offers it, agrees with get at the latest revision: live, updated, deleted, absent', async () => {
    const s = await stores.get();
    if (!s.getNow) return;
    const key = `${uniqueRoot()}ns/now`;
    expect(s.getNow(key)).toBeNull();
    const created = await s.create(key, enc('v1'));
    expect(s.getNow(key)).toEqual(await s.get(key));
    const updated = await s.update(key, enc('v2'), created.modRevision);
    expect(s.getNow(key)).toMatchObject({ key, modRevision: updated.modRevision, createRevision: created.modRevision });
    expect(dec(s.getNow(key)!.value)).toBe('v2');
    await s.delete(key);
    expect(s.getNow(key)).toBeNull();
    expect(() => s.getNow!('no/../such')).toThrow(expect.objectContaining({ code: 'InvalidArgument' }));
  });

  it('values are binary-safe, including empty values', async () => {
    const s = await stores.get();
    const root = uniqueRoot();
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    await s.create(`${root}bin`, bytes);
    await s.create(`${root}empty`, new Uint8Array(0));
    expect(Array.from((await s.get(`${root}bin`))!.value)).toEqual(Array.from(bytes));
    expect((await s.get(`${root}empty`))!.value.length).toBe(0);
  });

  it('create of a live key fails with KeyExists and changes nothing', async () => {
    const s = await stores.get();
    const key = `${uniqueRoot()}ns/a`;
    const kv = await s.create(key, enc('v1'));
    await expectError(s.create(key, enc('v2')), 'KeyExists');
    expect(await s.currentRevision()).toBe(kv.modRevision);
    expect(dec((await s.get(key))!.value)).toBe('v1');
  });

  it('update with the current revision replaces; a stale one is a Conflict carrying the actual revision', async () => {
    const s = await stores.get();
    const key = `${uniqueRoot()}ns/a`;
    const v1 = await s.create(key, enc('v1'));
    const v2 = await s.update(key, enc('v2'), v1.modRevision);
    expect(v2.modRevision).toBeGreaterThan(v1.modRevision);
    expect(v2.createRevision).toBe(v1.createRevision);
    expect(dec(v2.value)).toBe('v2');
    await expectError(s.update(key, enc('v3'), v1.modRevision), 'Conflict', v2.modRevision);
    expect(dec((await s.get(key))!.value)).toBe('v2');
    expect(await s.currentRevision()).toBe(v2.modRevision);
  });

  it('update and delete of an absent key fail with KeyNotFound', async () => {
    const s = await stores.get();
    const key = `${uniqueRoot()}ns/none`;
    await expectError(s.update(key, enc('x'), 1), 'KeyNotFound');
    await expectError(s.delete(key), 'KeyNotFound');
    await expectError(s.delete(key, 1), 'KeyNotFound');
  });

  it('delete returns the last value and the delete revision; the key can be created again', async () => {
    const s = await stores.get();
    const key = `${uniqueRoot()}ns/a`;
    const v1 = await s.create(key, enc('v1'));
    const del = await s.delete(key);
    expect(del.revision).toBeGreaterThan(v1.modRevision);
    expect(del.prev).toMatchObject({ key, createRevision: v1.createRevision, modRevision: v1.modRevision });
    expect(dec(del.prev.value)).toBe('v1');
    expect(await s.get(key)).toBeUndefined();
    await expectError(s.delete(key), 'KeyNotFound');
    await expectError(s.update(key, enc('x'), del.revision), 'KeyNotFound');
    const again = await s.create(key, enc('v2'));
    expect(again.createRevision).toBeGreaterThan(del.revision);
    expect(dec((await s.get(key))!.value)).toBe('v2');
  });

  it('delete with an expected revision is a compare-and-swap', async () => {
    const s = await stores.get();
    const key = `${uniqueRoot()}ns/a`;
    const v1 = await s.create(key, enc('v1'));
    const v2 = await s.update(key, enc('v2'), v1.modRevision);
    await expectError(s.delete(key, v1.modRevision), 'Conflict', v2.modRevision);
    expect(await s.get(key)).toBeDefined();
    const del = await s.delete(key, v2.modRevision);
    expect(dec(del.prev.value)).toBe('v2');
  });

  it('revisions are global and strictly increasing across keys', async () => {
    const s = await stores.get();
    const root = uniqueRoot();
    const revs: number[] = [];
    const a = await s.create(`${root}ns/a`, enc('a'));
    revs.push(a.modRevision);
    revs.push((await s.create(`${root}ns/b`, enc('b'))).modRevision);
    revs.push((await s.update(`${root}ns/a`, enc('a2'), a.modRevision)).modRevision);
    revs.push((await s.delete(`${root}ns/b`)).revision);
    revs.push((await s.create(`${root}other/c`, enc('c'))).modRevision);
    for (let i = 1; i < revs.length; i++) expect(revs[i]).toBeGreaterThan(revs[i - 1]!);
    expect(await s.currentRevision()).toBe(revs.at(-1));
  });

  it('concurrent updates with the same expected revision: exactly one wins', async () => {
    const s = await stores.get();
    const key = `${uniqueRoot()}ns/a`;
    const v1 = await s.create(key, enc('v0'));
    const results = await Promise.allSettled(
      Array.from({ length: 16 }, (_, i) => s.update(key, enc(`v${i + 1}`), v1.modRevision)),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected') expect((r.reason as { code?: string }).code).toBe('Conflict');
    }
    const winner = (won[0] as PromiseFulfilledResult<{ value: Uint8Array; modRevision: number }>).value;
    const now = (await s.get(key))!;
    expect(now.modRevision).toBe(winner.modRevision);
    expect(dec(now.value)).toBe(dec(winner.value));
  });

  it('concurrent creates of one key: exactly one wins, the rest get KeyExists', async () => {
    const s = await stores.get();
    const key = `${uniqueRoot()}ns/a`;
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => s.create(key, enc(`c${i}`))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) {
      if (r.status === 'rejected') expect((r.reason as { code?: string }).code).toBe('KeyExists');
    }
  });

  it.each([
    ['no leading slash', 'registry/x/a'],
    ['trailing slash', '/registry/x/a/'],
    ['empty', ''],
    ['space', '/registry/x/a b'],
    ['non-ASCII', '/registry/x/ä'],
    ['control character', '/registry/x/a\n'],
  ])('a malformed key (%s) is InvalidArgument and the store keeps working', async (_, key) => {
    const s = await stores.get();
    await expectError(s.create(key, enc('x')), 'InvalidArgument');
    await expectError(s.get(key), 'InvalidArgument');
    await expectError(s.update(key, enc('x'), 1), 'InvalidArgument');
    await expectError(s.delete(key), 'InvalidArgument');
    const ok = await s.create(`${uniqueRoot()}ns/ok`, enc('ok'));
    expect(dec(ok.value)).toBe('ok');
  });

  it('malformed values and revisions are InvalidArgument', async () => {
    const s = await stores.get();
    const key = `${uniqueRoot()}ns/a`;
    await expectError(s.create(key, 'text' as unknown as Uint8Array), 'InvalidArgument');
    await expectError(s.create(key, null as unknown as Uint8Array), 'InvalidArgument');
    const v1 = await s.create(key, enc('v1'));
    await expectError(s.update(key, enc('x'), -1), 'InvalidArgument');
    await expectError(s.update(key, enc('x'), 1.5), 'InvalidArgument');
    await expectError(s.update(key, {} as Uint8Array, v1.modRevision), 'InvalidArgument');
    await expectError(s.get(key, { revision: -3 }), 'InvalidArgument');
    await expectError(s.get(key, { revision: v1.modRevision + 1000 }), 'InvalidArgument');
    expect(dec((await s.get(key))!.value)).toBe('v1');
  });
}
