/**
 * kill -9 of a broker process on SQLite under load: every event it answered 202 for is delivered
 * after a restart on the same file, and retries parked before the kill resume with their state.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { binaryEvent, broker, subscriber, trigger } from './helpers.js';
import { type BrokerProcess, spawnBroker } from './processes.js';

const dir = mkdtempSync(join(tmpdir(), 'broker-kill9-'));
const cleanup: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanup) await c();
  rmSync(dir, { recursive: true, force: true });
});

/** Posts events from `senders` loops until `stop()`; returns the ids answered 202. */
function load(url: string, senders: number) {
  const acked = new Set<string>();
  let running = true;
  let n = 0;
  const loops = Array.from({ length: senders }, async () => {
    while (running) {
      const id = `k-${n++}`;
      const e = binaryEvent({ id });
      try {
        const r = await fetch(url, { method: 'POST', headers: e.headers, body: e.body });
        await r.arrayBuffer();
        if (r.status === 202) acked.add(id);
      } catch {
        // The process died under this request: it was never acknowledged.
      }
    }
  });
  return { acked, stop: async () => ((running = false), await Promise.all(loops)) };
}

describe('broker on SQLite, kill -9', () => {
  it('delivers every event answered 202 before the kill, after a restart on the same file', async () => {
    // Failing until the kill: every event is then waiting, most in the pending-retry table.
    let healthy = false;
    const fn = await subscriber((_r, _n, res) => void res.writeHead(healthy ? 202 : 503).end());
    cleanup.push(() => fn.close());
    const ns = 'kill';
    const objects = {
      brokers: [broker('default', {}, ns)],
      triggers: [trigger('t', { subscriber: { uri: fn.url }, delivery: { retry: 20, backoffPolicy: 'linear', backoffDelay: 'PT0.1S' } }, ns)],
    };
    const store = `sqlite:${join(dir, 'broker.db')}`;
    let proc: BrokerProcess = await spawnBroker(dir, store, objects);
    cleanup.push(() => proc.stop());
    const sender = load(`${proc.url}/${ns}/default`, 8);
    while (sender.acked.size < 1500) await new Promise((r) => setTimeout(r, 20));
    await proc.kill9();
    await sender.stop();
    const acked = [...sender.acked];
    const retriedBefore = fn.received.length - new Set(fn.received.map((r) => r.headers['ce-id'])).size;
    expect(retriedBefore).toBeGreaterThan(0);
    healthy = true;
    fn.received.length = 0;

    proc = await spawnBroker(dir, store, objects);
    const delivered = () => new Set(fn.received.map((r) => r.headers['ce-id'] as string));
    const deadline = Date.now() + 60_000;
    while (acked.some((id) => !delivered().has(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const missing = acked.filter((id) => !delivered().has(id));
    expect(missing).toEqual([]);
    await proc.stop();
  }, 120_000);
});
