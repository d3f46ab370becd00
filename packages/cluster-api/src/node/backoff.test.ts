import { describe, expect, it } from 'vitest';
import { Backoff, goDuration } from './backoff.js';

describe('Backoff (the kubelet\'s crash loop back-off)', () => {
  it('restarts at once, then waits 10 s doubling to 5 min, and forgets after 10 quiet minutes', () => {
    let now = 0;
    const b = new Backoff(undefined, () => now);
    expect(b.inBackoffSince('c', now)).toBe(false);
    b.next('c', now);
    const delays = [];
    for (let i = 0; i < 7; i++) {
      now += 1000;
      const exit = now;
      expect(b.inBackoffSince('c', exit)).toBe(true);
      delays.push(b.delay('c'));
      now = b.readyAt('c', exit);
      expect(b.inBackoffSince('c', exit)).toBe(false);
      b.next('c', exit);
    }
    expect(delays.map(goDuration)).toEqual(['10s', '20s', '40s', '1m20s', '2m40s', '5m0s', '5m0s']);
    now += 11 * 60_000;
    expect(b.inBackoffSince('c', now)).toBe(false);
    b.next('c', now);
    expect(b.delay('c')).toBe(10_000);
  });

  it('tracks image pull failures since the last update', () => {
    let now = 0;
    const b = new Backoff(undefined, () => now);
    b.next('pull', now, 'ErrImagePull: nope');
    expect(b.inBackoffSinceUpdate('pull')).toBe(true);
    expect(b.note('pull')).toBe('ErrImagePull: nope');
    now = b.readyAfterUpdate('pull');
    expect(b.inBackoffSinceUpdate('pull')).toBe(false);
  });
});
