import { describe, expect, it } from 'vitest';
import { Spread } from './spread.js';

describe('spreading deliveries over endpoints', () => {
  it('takes turns among idle endpoints', () => {
    const s = new Spread();
    const urls = ['http://a/', 'http://b/'];
    const picked = [0, 1, 2, 3].map(() => {
      const d = s.acquire(urls);
      d.release();
      return d.url;
    });
    expect(picked).toEqual(['http://a/', 'http://b/', 'http://a/', 'http://b/']);
  });

  it('sends to the endpoint with the fewest deliveries in flight', () => {
    const s = new Spread();
    const urls = ['http://a/', 'http://b/', 'http://c/'];
    const a = s.acquire(urls);
    const b = s.acquire(urls);
    const c = s.acquire(urls);
    expect([a.url, b.url, c.url]).toEqual(urls);
    b.release();
    expect(s.acquire(urls).url).toBe('http://b/');
    // A release counted twice does not make an endpoint look idler than it is.
    a.release();
    a.release();
    const next = s.acquire(urls);
    expect(next.url).toBe('http://a/');
    expect(s.acquire(urls).url).not.toBe('http://a/');
  });

  it('works with one endpoint, and with endpoints that changed', () => {
    const s = new Spread();
    expect(s.acquire(['http://a/']).url).toBe('http://a/');
    expect(s.acquire(['http://a/']).url).toBe('http://a/');
    expect(s.acquire(['http://x/', 'http://y/']).url).toBe('http://x/');
  });
});
