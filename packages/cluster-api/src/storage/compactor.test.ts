import { afterEach, describe, expect, it } from 'vitest';
import { Compactor } from './compactor.js';
import { isStorageError } from './errors.js';
import { MemoryStorage } from './memory/memory.js';
import { until } from '../../testing/src/poll.js';

const enc = (s: string) => new TextEncoder().encode(s);

async function writes(s: MemoryStorage, n: number): Promise<number> {
  let rev = 0;
  for (let i = 0; i < n; i++) {
    const key = `/registry/x/k${i % 5}`;
    const cur = await s.get(key);
    rev = (cur ? await s.update(key, enc(String(i)), cur.modRevision) : await s.create(key, enc(String(i)))).modRevision;
  }
  return rev;
}

describe('Compactor', () => {
  const open: MemoryStorage[] = [];
  afterEach(async () => Promise.all(open.splice(0).map((s) => s.close())));
  const store = (...args: ConstructorParameters<typeof MemoryStorage>) => {
    const s = new MemoryStorage(...args);
    open.push(s);
    return s;
  };

  it('keeps revisions younger than minAgeMs even when more than keepRevisions exist', async () => {
    const s = store();
    let now = 0;
    const c = new Compactor(s, { intervalMs: 1000, keepRevisions: 10, minAgeMs: 1000 }, () => now);
    await writes(s, 50);
    expect(await c.tick()).toBe(0);
    await writes(s, 50);
    now = 999;
    expect(await c.tick()).toBe(0);
    now = 1000;
    // The sample taken at t=0 (revision 50) is now old enough; 100 - 10 does not limit further.
    expect(await c.tick()).toBe(50);
    expect(await s.compactedRevision()).toBe(50);
  });

  it('keeps the newest keepRevisions revisions even when all are old', async () => {
    const s = store();
    let now = 0;
    const c = new Compactor(s, { intervalMs: 1000, keepRevisions: 30, minAgeMs: 100 }, () => now);
    const rev = await writes(s, 40);
    await c.tick();
    now = 500;
    expect(await c.tick()).toBe(rev - 30);
    now = 1000;
    expect(await c.tick()).toBe(rev - 30);
    expect((await s.list({ prefix: '/registry/x/', revision: rev - 30 })).items).toHaveLength(5);
  });

  it('runs on its own timer and stops when the store closes', async () => {
    const s = store({ compaction: { intervalMs: 5, keepRevisions: 0, minAgeMs: 0 } });
    const rev = await writes(s, 20);
    let compacted = 0;
    const sampler = setInterval(() => void s.compactedRevision().then((r) => (compacted = r)), 2);
    await until('the timer to compact', () => compacted === rev, { timeoutMs: 10_000 }).finally(() => clearInterval(sampler));
    await s.close();
    // A tick after close would reject with Unavailable; the timer is gone, so nothing surfaces.
    await new Promise((r) => setTimeout(r, 20));
    expect((await s.healthy()).ok).toBe(false);
  });

  it('start() is idempotent and stop() ends the timer', () => {
    const c = new Compactor(store(), { intervalMs: 1000, keepRevisions: 0, minAgeMs: 0 });
    c.start();
    c.start();
    expect(c.started).toBe(true);
    c.stop();
    c.stop();
    expect(c.started).toBe(false);
  });

  it('reports a failing store through tick() and lastError', async () => {
    const s = store();
    const c = new Compactor(s, { intervalMs: 1000, keepRevisions: 0, minAgeMs: 0 });
    await writes(s, 3);
    await s.close();
    const err = await c.tick().catch((e: unknown) => e);
    expect(isStorageError(err, 'Unavailable')).toBe(true);
    expect(c.lastError).toBe(err);
  });

  it.each([
    { intervalMs: 0, keepRevisions: 1, minAgeMs: 0 },
    { intervalMs: 10, keepRevisions: -1, minAgeMs: 0 },
    { intervalMs: 10, keepRevisions: 1.5, minAgeMs: 0 },
    { intervalMs: Number.NaN, keepRevisions: 1, minAgeMs: 0 },
  ])('rejects the policy %j', (policy) => {
    expect(() => new Compactor(store(), policy)).toThrow(/invalid compaction policy/);
  });
});
