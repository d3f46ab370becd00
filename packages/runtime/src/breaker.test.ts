import { describe, expect, it } from 'vitest';
import { Breaker } from './breaker.js';
import { InFlight } from './inflight.js';

describe('Breaker (containerConcurrency)', () => {
  it('runs up to capacity, queues up to the depth in order, refuses beyond', () => {
    const b = new Breaker(2, 2);
    const ran: number[] = [];
    expect(b.enter(() => ran.push(1))).toBe(true);
    expect(b.enter(() => ran.push(2))).toBe(true);
    const c3 = b.enter(() => ran.push(3));
    const c4 = b.enter(() => ran.push(4));
    expect(typeof c3).toBe('function');
    expect(typeof c4).toBe('function');
    expect(b.enter(() => ran.push(5))).toBe(false);
    expect([b.active, b.waiting]).toEqual([2, 2]);
    b.leave();
    expect(ran).toEqual([1, 2, 3]);
    b.leave();
    b.leave();
    b.leave();
    expect(ran).toEqual([1, 2, 3, 4]);
    expect([b.active, b.waiting]).toEqual([0, 0]);
  });

  it('a cancelled waiter never runs and frees its queue place', () => {
    const b = new Breaker(1, 1);
    const ran: string[] = [];
    b.enter(() => ran.push('a'));
    const cancel = b.enter(() => ran.push('b')) as () => void;
    cancel();
    expect(b.enter(() => ran.push('c'))).not.toBe(false);
    b.leave();
    expect(ran).toEqual(['a', 'c']);
  });

  it('sizes its queue at 10 per slot by default', () => {
    expect(new Breaker(5).queueDepth).toBe(50);
  });
});

describe('InFlight reports (time-averaged concurrency, requests per second)', () => {
  it('averages the count over the period and resets per report', () => {
    const f = new InFlight();
    f.report(0);
    f.enter(0);
    f.enter(500);
    f.leave(1000);
    // 1 for 500 ms, 2 for 500 ms: 1.5 on average; 2 arrivals in 1 s.
    expect(f.report(1000)).toEqual({ averageConcurrency: 1.5, requestsPerSecond: 2 });
    // One still in flight for the next second, no arrivals.
    expect(f.report(2000)).toEqual({ averageConcurrency: 1, requestsPerSecond: 0 });
    f.leave(2500);
    expect(f.report(3000)).toEqual({ averageConcurrency: 0.5, requestsPerSecond: 0 });
  });

  it('a request that came and went within a period still counts', () => {
    const f = new InFlight();
    f.report(0);
    f.enter(100);
    f.leave(200);
    expect(f.report(1000).averageConcurrency).toBeCloseTo(0.1);
  });

  it('a report at the instant of the previous one gives the current count', () => {
    const f = new InFlight();
    f.report(5);
    f.enter(5);
    expect(f.report(5)).toEqual({ averageConcurrency: 1, requestsPerSecond: 0 });
  });
});
