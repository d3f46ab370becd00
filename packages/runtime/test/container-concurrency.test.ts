/** containerConcurrency enforced at the pod, and the load the autoscaler reads, against a real listening runtime. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveOptions } from '../src/config.js';
import { start } from '../src/index.js';
import { AutoscalingStatsPath } from '../src/server.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** A function whose invocations wait until released; `started` counts the ones `handle` saw. */
function gated() {
  const gates: (() => void)[] = [];
  let started = 0;
  return {
    fn: { handle: () => new Promise((resolve) => (started++, gates.push(() => resolve({ ok: true })))) },
    started: () => started,
    releaseAll: () => gates.splice(0).forEach((g) => g()),
  };
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 10));
}

const stats = async (url: string) => {
  const text = await (await fetch(url + AutoscalingStatsPath)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
  return { concurrency: value('queue_average_concurrent_requests'), rps: value('queue_requests_per_second'), text };
};

describe('containerConcurrency (CONTAINER_CONCURRENCY)', () => {
  it('runs at most the limit at once, queues 10 per slot, answers 503 beyond, and the queued run as slots free', async () => {
    const g = gated();
    server = await start(g.fn, { port: 0, host: '127.0.0.1', logLevel: 'silent', containerConcurrency: 1 });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const answers = Array.from({ length: 11 }, () => fetch(url + '/', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }));
    await until(() => g.started() === 1);
    // The 12th finds one running and ten waiting.
    const refused = await fetch(url + '/');
    expect(refused.status).toBe(503);
    expect(await refused.text()).toMatch(/limit of 1 concurrent requests/);
    expect(g.started()).toBe(1);
    const s = await stats(url);
    expect(s.text).toMatch(/# TYPE queue_average_concurrent_requests gauge/);
    expect(s.concurrency).toBeGreaterThan(0);
    expect(s.rps).toBeGreaterThan(0);
    // Releasing one at a time lets exactly one more in each time.
    for (let n = 2; n <= 11; n++) {
      g.releaseAll();
      await until(() => g.started() === n);
    }
    g.releaseAll();
    const codes = await Promise.all(answers.map(async (a) => (await a).status));
    expect(codes).toEqual(Array(11).fill(200));
  });

  it('a waiting request whose client goes away leaves the queue and the count', async () => {
    const g = gated();
    server = await start(g.fn, { port: 0, host: '127.0.0.1', logLevel: 'silent', containerConcurrency: 1 });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const first = fetch(url + '/');
    await until(() => g.started() === 1);
    const abort = new AbortController();
    const second = fetch(url + '/', { signal: abort.signal }).catch((e: Error) => e.name);
    // Two in the count (one running, one waiting) over a whole period: the second is queued.
    await until(async () => (await stats(url)).concurrency === 2);
    abort.abort();
    expect(await second).toBe('AbortError');
    // Once the server saw it go, a whole period has only the running one.
    await until(async () => (await stats(url)).concurrency === 1);
    g.releaseAll();
    expect((await first).status).toBe(200);
    // Nothing waits any more: the next request runs at once.
    await stats(url);
    const third = fetch(url + '/');
    await until(() => g.started() === 2);
    g.releaseAll();
    expect((await third).status).toBe(200);
  });

  it('0 (the default) is no limit; a bad value is refused with the option named', () => {
    expect(resolveOptions({ env: {} }).containerConcurrency).toBe(0);
    expect(resolveOptions({ env: { CONTAINER_CONCURRENCY: '5' } }).containerConcurrency).toBe(5);
    expect(() => resolveOptions({ env: { CONTAINER_CONCURRENCY: '-1' } })).toThrow(/CONTAINER_CONCURRENCY/);
    expect(() => resolveOptions({ env: { CONTAINER_CONCURRENCY: 'many' } })).toThrow(/CONTAINER_CONCURRENCY/);
  });
});
