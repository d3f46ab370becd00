import { describe, expect, it } from 'vitest';
import { isStorageError } from './errors.js';
import { MemoryStorage } from './memory/memory.js';
import { enc, Recorder } from './testing/suite-helpers.js';
import { until } from '../../testing/src/poll.js';

describe('watch delivery', () => {
  it('a handler that throws ends its own watch with that error; other watchers go on', async () => {
    const s = new MemoryStorage();
    const boom = new Error('handler failed');
    let calls = 0;
    let ended: Error | undefined;
    s.watch(
      { key: '/registry/w/', prefix: true, afterRevision: 0 },
      {
        onEvents: () => {
          calls++;
          throw boom;
        },
        onError: (err) => {
          ended = err;
        },
      },
    );
    const healthy = new Recorder(s, { key: '/registry/w/', prefix: true, afterRevision: 0 });
    await s.create('/registry/w/a', enc('1'));
    await until('the failing watch to end', () => ended !== undefined, { timeoutMs: 10_000 });
    const last = await s.create('/registry/w/b', enc('2'));
    await healthy.waitForRevision(last.modRevision);
    expect(ended).toBe(boom);
    expect(calls).toBe(1);
    expect(healthy.revisions).toEqual([1, 2]);
    await s.close();
  });

  it('handlers never run inside watch() or inside the write that caused the event', async () => {
    const s = new MemoryStorage();
    await s.create('/registry/w/a', enc('1'));
    let delivered = 0;
    s.watch({ key: '/registry/w/', prefix: true, afterRevision: 0 }, { onEvents: (b) => (delivered += b.length), onError: () => undefined });
    const replaying = s.watch({ key: '/registry/w/', prefix: true, afterRevision: 0 }, { onEvents: (b) => (delivered += b.length), onError: () => undefined });
    const write = s.create('/registry/w/b', enc('2'));
    expect(delivered).toBe(0);
    await write;
    await until('delivery', () => delivered === 2, { timeoutMs: 10_000 });
    replaying.close();
    await s.close();
  });

  it('events queued before close are delivered before the closing error', async () => {
    const s = new MemoryStorage();
    const rec = new Recorder(s, { key: '/registry/w/', prefix: true, afterRevision: 0 });
    void s.create('/registry/w/a', enc('1'));
    await s.close();
    const err = await rec.waitForError();
    expect(isStorageError(err, 'Unavailable')).toBe(true);
    expect(rec.revisions).toEqual([1]);
  });
});
