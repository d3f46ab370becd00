import { describe, expect, it } from 'vitest';
import { isStorageError } from './errors.js';
import type { StorageEvent, WatchHandlers } from './interface.js';
import { MemoryStorage } from './memory/memory.js';
import { enc } from './testing/suite-helpers.js';
import { WatchCache } from './watch-cache.js';
import { until } from '../../testing/src/poll.js';

const P = '/registry/pods/';

/** Records what one subscriber receives. */
const recorder = () => {
  const revisions: number[] = [];
  const keys: string[] = [];
  let error: Error | undefined;
  const handlers: WatchHandlers = {
    onEvents: (evs: readonly StorageEvent[]) => evs.forEach((e) => (revisions.push(e.revision), keys.push(e.kv.key))),
    onError: (err) => (error = err),
  };
  return { revisions, keys, handlers, error: () => error };
};

describe('WatchCache', () => {
  it('fans one upstream out to every subscriber, in order, filtered by key', async () => {
    const s = new MemoryStorage();
    const cache = new WatchCache(s);
    await cache.ready(P);
    const all = recorder();
    const ns = recorder();
    const one = recorder();
    cache.subscribe(P, { key: P, prefix: true, afterRevision: 0 }, all.handlers);
    cache.subscribe(P, { key: `${P}a/`, prefix: true, afterRevision: 0 }, ns.handlers);
    cache.subscribe(P, { key: `${P}a/x`, prefix: false, afterRevision: 0 }, one.handlers);
    await s.create(`${P}a/x`, enc('1'));
    await s.create(`${P}b/y`, enc('2'));
    await s.create('/registry/services/a/x', enc('3'));
    await s.update(`${P}a/x`, enc('4'), 1);
    await until('all events', () => all.revisions.length === 3, { timeoutMs: 10_000 });
    expect(all.revisions).toEqual([1, 2, 4]);
    expect(ns.keys).toEqual([`${P}a/x`, `${P}a/x`]);
    expect(one.revisions).toEqual([1, 4]);
    expect(cache.stats()).toEqual([{ prefix: P, subscribers: 3, retained: 3, floor: 0, latest: 4 }]);
    await s.close();
  });

  it('replays from a revision inside the ring, and from the backend below it', async () => {
    const s = new MemoryStorage();
    for (let i = 0; i < 3; i++) await s.create(`${P}n/early${i}`, enc('e'));
    const cache = new WatchCache(s, { capacity: 4 });
    await cache.ready(P);
    for (let i = 0; i < 6; i++) await s.create(`${P}n/k${i}`, enc('v'));
    await until('the cache to catch up', () => cache.stats()[0]!.latest === 9, { timeoutMs: 10_000 });
    expect(cache.stats()[0]).toMatchObject({ retained: 4, floor: 5 });
    const inRing = recorder();
    cache.subscribe(P, { key: P, prefix: true, afterRevision: 7 }, inRing.handlers);
    const below = recorder();
    cache.subscribe(P, { key: P, prefix: true, afterRevision: 1 }, below.handlers);
    await until('replays', () => inRing.revisions.length === 2 && below.revisions.length === 8, { timeoutMs: 10_000 });
    expect(inRing.revisions).toEqual([8, 9]);
    expect(below.revisions).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    await s.compact(8);
    const gone = recorder();
    cache.subscribe(P, { key: P, prefix: true, afterRevision: 2 }, gone.handlers);
    await until('the compacted error', () => gone.error() !== undefined, { timeoutMs: 10_000 });
    expect(isStorageError(gone.error(), 'Compacted')).toBe(true);
    await s.close();
  });

  it('on an empty store, a write between ready() and subscribe(0) is not missed', async () => {
    const s = new MemoryStorage();
    const cache = new WatchCache(s);
    await cache.ready(P);
    await s.create(`${P}n/first`, enc('1'));
    const r = recorder();
    cache.subscribe(P, { key: P, prefix: true, afterRevision: 0 }, r.handlers);
    await until('the first write', () => r.revisions.length === 1, { timeoutMs: 10_000 });
    expect(r.revisions).toEqual([1]);
    await s.close();
  });

  it('cuts off a subscriber whose queue overflows without touching writers or the others', async () => {
    const s = new MemoryStorage();
    const cache = new WatchCache(s, { maxQueue: 3 });
    await cache.ready(P);
    const slow = recorder();
    const sub = cache.subscribe(P, { key: P, prefix: true, afterRevision: 0 }, slow.handlers);
    // Five events reach the queue before it is drained once.
    const writes = [0, 1, 2, 3, 4].map((i) => s.create(`${P}n/k${i}`, enc('v')));
    await Promise.all(writes);
    await until('the cut-off', () => slow.error() !== undefined, { timeoutMs: 10_000 });
    expect(slow.error()!.message).toContain('cut off');
    expect(cache.stats()[0]!.subscribers).toBe(0);
    sub.close();
    const next = recorder();
    cache.subscribe(P, { key: P, prefix: true, afterRevision: 5 }, next.handlers);
    await s.create(`${P}n/after`, enc('v'));
    await until('a later subscriber', () => next.revisions.length === 1, { timeoutMs: 10_000 });
    expect(next.revisions).toEqual([6]);
    await s.close();
  });

  it('frees every subscriber that closes, and tells open ones when the backend closes', async () => {
    const s = new MemoryStorage();
    const cache = new WatchCache(s);
    await cache.ready(P);
    const subs = Array.from({ length: 1000 }, () => cache.subscribe(P, { key: P, prefix: true, afterRevision: 0 }, recorder().handlers));
    expect(cache.stats()[0]!.subscribers).toBe(1000);
    for (const sub of subs) sub.close();
    expect(cache.stats()[0]!.subscribers).toBe(0);
    const open = recorder();
    cache.subscribe(P, { key: P, prefix: true, afterRevision: 0 }, open.handlers);
    await s.close();
    await until('the close error', () => open.error() !== undefined, { timeoutMs: 10_000 });
    expect(isStorageError(open.error(), 'Unavailable')).toBe(true);
    expect(cache.stats()).toEqual([]);
  });

  it('refuses a key outside the prefix', async () => {
    const s = new MemoryStorage();
    const cache = new WatchCache(s);
    expect(() => cache.subscribe(P, { key: '/registry/services/', prefix: true, afterRevision: 0 }, recorder().handlers)).toThrow(/outside/);
    await s.close();
  });
});
