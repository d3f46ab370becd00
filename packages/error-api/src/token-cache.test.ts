import { describe, expect, it } from 'vitest';
import { TokenCache } from './token-cache.js';

const clock = (start = 1_000_000): { now: () => number; advance: (ms: number) => void } => {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
};

describe('TokenCache', () => {
  it('remembers an outcome for its TTL', () => {
    const c = clock();
    const cache = new TokenCache<string>(60_000, 10, c.now);
    cache.set('t', 'ok', 10_000);
    expect(cache.get('t')).toBe('ok');
    c.advance(59_999);
    expect(cache.get('t')).toBe('ok');
    c.advance(1);
    expect(cache.get('t')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('never past the token\'s exp', () => {
    const c = clock();
    const cache = new TokenCache<string>(60_000, 10, c.now);
    cache.set('t', 'ok', 1_000_000 / 1000 + 5); // exp 5 s from now
    c.advance(4_999);
    expect(cache.get('t')).toBe('ok');
    c.advance(1);
    expect(cache.get('t')).toBeUndefined();
  });

  it('does not store a token that is already expired, or anything when disabled', () => {
    const c = clock();
    const cache = new TokenCache<string>(60_000, 10, c.now);
    cache.set('old', 'ok', 1_000_000 / 1000);
    expect(cache.get('old')).toBeUndefined();
    const off = new TokenCache<string>(0, 10, c.now);
    off.set('t', 'ok', 10_000);
    expect(off.get('t')).toBeUndefined();
  });

  it('matches the exact token string only and evicts the oldest entry when full', () => {
    const cache = new TokenCache<string>(60_000, 2);
    const exp = Date.now() / 1000 + 600;
    cache.set('a', 'A', exp);
    cache.set('b', 'B', exp);
    expect(cache.get('a ')).toBeUndefined();
    cache.set('c', 'C', exp);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([undefined, 'B', 'C']);
  });
});
