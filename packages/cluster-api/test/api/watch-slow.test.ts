/**
 * A watcher that stops reading is cut off on its own: its stream is ended once its unsent backlog
 * passes the bound, while writes keep being acknowledged and a reading watcher gets every event.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MaxWatchBufferBytes } from '../../src/http/watch.js';
import { TestToken, namespace, startTestServer, type TestServer } from '../support/helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer('memory');
  await s.request('POST', '/api/v1/namespaces', { body: namespace('slow') });
});
afterAll(() => s.close());

it('ends the stream of a watcher that never reads, without slowing writers or other watchers', async () => {
  const path = '/api/v1/namespaces/slow/secrets?watch=true';
  const url = new URL(s.url);
  // The stalled client: sends its request, then never reads a byte.
  const stalled = connect(Number(url.port), url.hostname);
  stalled.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${TestToken}\r\n\r\n`);
  stalled.pause();
  let stalledBytes = 0;
  stalled.on('data', (b: Buffer) => (stalledBytes += b.length));
  stalled.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => stalled.once('close', () => resolve()));
  // The healthy watcher counts the events it reads.
  const controller = new AbortController();
  const res = await fetch(s.url + path, { headers: { authorization: `Bearer ${TestToken}` }, signal: controller.signal });
  const reader = res.body!.getReader();
  let lines = 0;
  const reading = (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      for (const b of value!) if (b === 10) lines++;
    }
  })();
  // ~0.9 MB events until the stalled stream's backlog must pass the bound, counting what the kernel
  // absorbs first on loopback (receive buffers autotune up to 32 MiB, send buffers to 4 MiB).
  const data = { blob: Buffer.alloc(700 * 1024, 7).toString('base64') };
  const count = Math.ceil((MaxWatchBufferBytes + 40 * 1024 * 1024) / (900 * 1024));
  for (let i = 0; i < count; i++) {
    const r = await s.request('POST', '/api/v1/namespaces/slow/secrets', { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `s${i}` }, data } });
    expect(r.status).toBe(201);
  }
  for (let i = 0; i < 400 && lines < count; i++) await new Promise((r) => setTimeout(r, 25));
  expect(lines).toBe(count);
  // Reading now, the stalled client drains what reached it, then finds its stream ended: it never
  // got all the events the healthy watcher got.
  stalled.resume();
  await closed;
  expect(stalledBytes).toBeGreaterThan(0);
  expect(stalledBytes).toBeLessThan(count * 900 * 1024);
  controller.abort();
  await reading;
}, 90_000);
