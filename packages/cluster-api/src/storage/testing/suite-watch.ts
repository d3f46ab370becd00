/** Conformance: watch replay and streaming, key vs prefix, compaction, close. */
import { expect, it } from 'vitest';
import { isStorageError } from '../errors.js';
import { dec, enc, expectError, Recorder, type Stores, uniqueRoot } from './suite-helpers.js';

export function watchCases(stores: Stores): void {
  it('watch from afterRevision delivers every later change once, in order, with prevKv', async () => {
    const s = await stores.get();
    const root = uniqueRoot();
    const a1 = await s.create(`${root}a`, enc('a1'));
    await s.create(`${root}b`, enc('b1'));
    const from = await s.currentRevision();
    const a2 = await s.update(`${root}a`, enc('a2'), a1.modRevision);
    const delB = await s.delete(`${root}b`);
    const c1 = await s.create(`${root}c`, enc('c1'));
    const rec = new Recorder(s, { key: root, prefix: true, afterRevision: from });
    await rec.waitForRevision(c1.modRevision);
    const [up, del, cr] = rec.events;
    expect(rec.revisions).toEqual([a2.modRevision, delB.revision, c1.modRevision]);
    expect(up).toMatchObject({ type: 'put', revision: a2.modRevision, kv: { key: `${root}a`, modRevision: a2.modRevision, createRevision: a1.modRevision } });
    expect(dec(up!.kv.value)).toBe('a2');
    expect(up!.prevKv).toMatchObject({ key: `${root}a`, modRevision: a1.modRevision });
    expect(dec(up!.prevKv!.value)).toBe('a1');
    expect(del).toMatchObject({ type: 'delete', revision: delB.revision, kv: { key: `${root}b`, modRevision: delB.revision } });
    expect(del!.kv.value.length).toBe(0);
    expect(dec(del!.prevKv!.value)).toBe('b1');
    expect(cr).toMatchObject({ type: 'put', kv: { createRevision: c1.modRevision } });
    expect(cr!.prevKv).toBeUndefined();
    // Live changes follow the replay without a gap or a repeat.
    const a3 = await s.update(`${root}a`, enc('a3'), a2.modRevision);
    await rec.waitForRevision(a3.modRevision);
    expect(rec.revisions).toEqual([a2.modRevision, delB.revision, c1.modRevision, a3.modRevision]);
    expect(rec.batchOrderOk).toBe(true);
    rec.watch.close();
  });

  it('afterRevision 0 delivers only changes made after the watch starts', async () => {
    const s = await stores.get();
    const root = uniqueRoot();
    await s.create(`${root}old`, enc('x'));
    const rec = new Recorder(s, { key: root, prefix: true, afterRevision: 0 });
    const kv = await s.create(`${root}new`, enc('y'));
    await rec.waitForRevision(kv.modRevision);
    expect(rec.events.map((e) => e.kv.key)).toEqual([`${root}new`]);
    rec.watch.close();
  });

  it('writes racing with the start of a watch are neither lost nor doubled', async () => {
    const s = await stores.get();
    const root = uniqueRoot();
    // afterRevision 0 means "from now", so start from a real revision.
    const from = (await s.create(`${root}seed`, enc('seed'))).modRevision;
    const write = (i: number) => s.create(`${root}k${i}`, enc(`v${i}`)).then((kv) => kv.modRevision);
    const writes = Array.from({ length: 30 }, (_, i) => write(i));
    const rec = new Recorder(s, { key: root, prefix: true, afterRevision: from });
    writes.push(...Array.from({ length: 30 }, (_, i) => write(30 + i)));
    const revs = (await Promise.all(writes)).sort((x, y) => x - y);
    // A sentinel after everything: once it arrives, every earlier event has been delivered.
    const sentinel = (await s.create(`${root}sentinel`, enc('s'))).modRevision;
    await rec.waitForRevision(sentinel);
    expect(rec.revisions).toEqual([...revs, sentinel]);
    expect(rec.batchOrderOk).toBe(true);
    rec.watch.close();
  });

  it('a key watch sees exactly that key; a prefix watch sees the keys under the prefix only', async () => {
    const s = await stores.get();
    const root = uniqueRoot();
    const one = new Recorder(s, { key: `${root}ns/a`, prefix: false, afterRevision: 0 });
    const many = new Recorder(s, { key: `${root}ns/`, prefix: true, afterRevision: 0 });
    const a = await s.create(`${root}ns/a`, enc('1'));
    await s.create(`${root}ns/ab`, enc('2'));
    await s.create(`${root}ns2/a`, enc('3'));
    const last = await s.update(`${root}ns/a`, enc('4'), a.modRevision);
    await one.waitForRevision(last.modRevision);
    await many.waitForRevision(last.modRevision);
    expect(one.events.map((e) => e.kv.key)).toEqual([`${root}ns/a`, `${root}ns/a`]);
    expect(many.events.map((e) => e.kv.key)).toEqual([`${root}ns/a`, `${root}ns/ab`, `${root}ns/a`]);
    one.watch.close();
    many.watch.close();
  });

  it('a watch below the compacted revision ends with Compacted; at it, it replays', async () => {
    const s = await stores.get();
    const root = uniqueRoot();
    const a1 = await s.create(`${root}a`, enc('1'));
    const a2 = await s.update(`${root}a`, enc('2'), a1.modRevision);
    const a3 = await s.update(`${root}a`, enc('3'), a2.modRevision);
    await s.compact(a2.modRevision);
    const gone = new Recorder(s, { key: root, prefix: true, afterRevision: a1.modRevision });
    const err = await gone.waitForError();
    expect(isStorageError(err, 'Compacted')).toBe(true);
    expect((err as { revision?: number }).revision).toBe(a2.modRevision);
    expect(gone.events).toEqual([]);
    const ok = new Recorder(s, { key: root, prefix: true, afterRevision: a2.modRevision });
    await ok.waitForRevision(a3.modRevision);
    expect(ok.revisions).toEqual([a3.modRevision]);
    expect(dec(ok.events[0]!.prevKv!.value)).toBe('2');
    ok.watch.close();
  });

  it('a closed watch receives nothing more; close() is idempotent', async () => {
    const s = await stores.get();
    const root = uniqueRoot();
    const closed = new Recorder(s, { key: root, prefix: true, afterRevision: 0 });
    const open = new Recorder(s, { key: root, prefix: true, afterRevision: 0 });
    closed.watch.close();
    closed.watch.close();
    const kv = await s.create(`${root}a`, enc('1'));
    await open.waitForRevision(kv.modRevision);
    expect(closed.events).toEqual([]);
    expect(closed.error).toBeUndefined();
    open.watch.close();
  });

  it('malformed watch options end the watch with InvalidArgument', async () => {
    const s = await stores.get();
    const root = uniqueRoot();
    const noSlash = new Recorder(s, { key: root.slice(0, -1), prefix: true, afterRevision: 0 });
    const negative = new Recorder(s, { key: `${root}a`, prefix: false, afterRevision: -5 });
    expect(isStorageError(await noSlash.waitForError(), 'InvalidArgument')).toBe(true);
    expect(isStorageError(await negative.waitForError(), 'InvalidArgument')).toBe(true);
    expect(await s.healthy()).toMatchObject({ ok: true });
  });

  it('close() ends open watches with an error, is idempotent, and later calls fail with Unavailable', async () => {
    const s = await stores.get();
    const root = uniqueRoot();
    await s.create(`${root}a`, enc('1'));
    expect(await s.healthy()).toMatchObject({ ok: true });
    const rec = new Recorder(s, { key: root, prefix: true, afterRevision: 0 });
    await s.close();
    await s.close();
    expect(isStorageError(await rec.waitForError(), 'Unavailable')).toBe(true);
    expect((await s.healthy()).ok).toBe(false);
    await expectError(s.get(`${root}a`), 'Unavailable');
    await expectError(s.create(`${root}b`, enc('2')), 'Unavailable');
    await expectError(s.list({ prefix: root }), 'Unavailable');
    const late = new Recorder(s, { key: root, prefix: true, afterRevision: 0 });
    expect(isStorageError(await late.waitForError(), 'Unavailable')).toBe(true);
  });
}
