import { describe, expect, it } from 'vitest';
import { Activator } from './activator.js';

/** A fake clock and a cancellation the test fires. */
function setup(maxHeld = 10) {
  let now = 0;
  const a = new Activator({ maxHeld, now: () => now });
  const never = () => () => undefined;
  return { a, never, at: (t: number) => (now = t) };
}

describe('Activator', () => {
  it('sends straight to the pod with the fewest in flight that has room (containerConcurrency), spreading', async () => {
    const { a, never } = setup();
    a.setPods('ns/r', [{ ip: '10.0.0.1', port: 8080 }, { ip: '10.0.0.2', port: 8080 }], 2);
    const got = await Promise.all([1, 2, 3, 4].map(() => a.acquire('ns/r', 1000, never)));
    const ips = got.map((g) => (typeof g === 'string' ? g : g.pod.ip));
    expect(ips.sort()).toEqual(['10.0.0.1', '10.0.0.1', '10.0.0.2', '10.0.0.2']);
    expect(got.every((g) => typeof g !== 'string' && !g.cold)).toBe(true);
  });

  it('pods equally loaded take turns: one request after another visits every pod', async () => {
    const { a, never } = setup();
    a.setPods('ns/r', [{ ip: '10.0.0.1', port: 8080 }, { ip: '10.0.0.2', port: 8080 }, { ip: '10.0.0.3', port: 8080 }], 0);
    const ips: string[] = [];
    for (let i = 0; i < 6; i++) {
      const got = await a.acquire('ns/r', 1000, never);
      if (typeof got === 'string') throw new Error(got);
      ips.push(got.pod.ip);
      a.release('ns/r', got.pod);
    }
    expect(ips).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.1', '10.0.0.2', '10.0.0.3']);
    // The fewest in flight still comes before the turn: with .2 busy, .1 and .3 take the next two.
    const busy = await a.acquire('ns/r', 1000, never);
    expect(typeof busy === 'string' ? busy : busy.pod.ip).toBe('10.0.0.1');
    if (typeof busy !== 'string') a.release('ns/r', busy.pod);
    const held = await a.acquire('ns/r', 1000, never);
    expect(typeof held === 'string' ? held : held.pod.ip).toBe('10.0.0.2');
    const next = await Promise.all([a.acquire('ns/r', 1000, never), a.acquire('ns/r', 1000, never)]);
    expect(next.map((g) => (typeof g === 'string' ? g : g.pod.ip))).toEqual(['10.0.0.3', '10.0.0.1']);
  });

  it('a revision forgotten while a request waits sends it to none of its old pods', async () => {
    const { a, never } = setup();
    a.setPods('ns/r', [{ ip: '10.0.0.1', port: 8080 }], 1);
    const first = await a.acquire('ns/r', 1000, never);
    if (typeof first === 'string') throw new Error(first);
    const waiting = a.acquire('ns/r', 50, never);
    a.forget('ns/r');
    expect(a.readyPods('ns/r')).toBe(0);
    a.release('ns/r', first.pod);
    expect(await waiting).toBe('timeout');
  });

  it('holds a request for a revision at zero, reports it (the poke), and sends it out when a pod is ready: a cold one', async () => {
    const { a, never, at } = setup();
    let poked = 0;
    a.onPoke(() => poked++);
    const held = a.acquire('ns/r', 10_000, never);
    expect(poked).toBe(1);
    expect(a.hasNews).toBe(true);
    at(500);
    const report = a.report();
    expect(report.poked).toEqual(['ns/r']);
    expect(report.revisions).toEqual([{ namespace: 'ns', revision: 'r', concurrency: 1, held: 1, rps: 2, waiting: 1, readyPods: 0 }]);
    expect(a.hasNews).toBe(false);
    a.setPods('ns/r', [{ ip: '10.0.0.9', port: 8080 }], 0);
    const got = await held;
    expect(got).toMatchObject({ pod: { ip: '10.0.0.9', inflight: 1 }, cold: true });
  });

  it('a full pod makes the next request wait for its slot, oldest first', async () => {
    const { a, never } = setup();
    a.setPods('ns/r', [{ ip: '10.0.0.1', port: 1 }], 1);
    const first = await a.acquire('ns/r', 1000, never);
    const order: number[] = [];
    const second = a.acquire('ns/r', 1000, never).then((g) => (order.push(2), g));
    const third = a.acquire('ns/r', 1000, never).then((g) => (order.push(3), g));
    if (typeof first === 'string') throw new Error(first);
    a.release('ns/r', first.pod);
    const g2 = await second;
    if (typeof g2 === 'string') throw new Error(g2);
    a.release('ns/r', g2.pod);
    await third;
    expect(order).toEqual([2, 3]);
  });

  it('answers full beyond maxHeld, timeout after the hold, gone when the client leaves', async () => {
    const { a, never } = setup(1);
    const held = a.acquire('ns/r', 5, never);
    expect(await a.acquire('ns/r', 1000, never)).toBe('full');
    expect(await held).toBe('timeout');
    let leave = () => undefined as void;
    const gone = a.acquire('ns/r', 1000, (stop) => ((leave = stop), () => undefined));
    leave();
    expect(await gone).toBe('gone');
    expect(a.report().revisions[0]).toMatchObject({ waiting: 0 });
  });

  it('time-averages the load between reports', async () => {
    const { a, never, at } = setup();
    a.setPods('ns/r', [{ ip: '10.0.0.1', port: 1 }], 0);
    a.report();
    const g = await a.acquire('ns/r', 1000, never);
    at(250);
    if (typeof g === 'string') throw new Error(g);
    a.release('ns/r', g.pod);
    at(1000);
    expect(a.report().revisions[0]).toMatchObject({ concurrency: 0.25, held: 0, rps: 1, readyPods: 1 });
  });
});
