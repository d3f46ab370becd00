/**
 * The distributed engine for real: a three-node JetStream cluster on loopback and two broker
 * processes sharing one Trigger. Each event is delivered once across the processes; then with one
 * NATS node and one broker process killed (-9) under load, no event answered 202 is lost and
 * delivery goes on through the survivors.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NatsCluster, startNats } from '../../src/broker/log/testing/nats-server.js';
import { binaryEvent, broker, subscriber, type Subscriber, trigger } from './helpers.js';
import { type BrokerProcess, spawnBroker } from './processes.js';
import { until } from '../../testing/src/poll.js';

const dir = mkdtempSync(join(tmpdir(), 'broker-nats-cluster-'));
let nats: NatsCluster;
let fn: Subscriber;
const procs: BrokerProcess[] = [];

beforeAll(async () => {
  nats = await startNats(3);
  // A little latency, so a killed broker process dies with deliveries in flight.
  fn = await subscriber((_r, _n, res) => void setTimeout(() => res.writeHead(202).end(), 20));
}, 60_000);
afterAll(async () => {
  for (const p of procs) await p.stop();
  await fn?.close();
  await nats?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Sends `ids` through the given ingresses until each got a 202 (a client retrying on errors). */
async function sendAll(urls: () => string[], ids: string[], concurrency = 8): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ids.length) {
        const id = ids[next++]!;
        for (let attempt = 0; ; attempt++) {
          const targets = urls();
          const e = binaryEvent({ id });
          const r = await fetch(targets[attempt % targets.length]!, { method: 'POST', headers: e.headers, body: e.body }).catch(() => undefined);
          await r?.arrayBuffer().catch(() => undefined);
          if (r?.status === 202) break;
          if (attempt > 200) throw new Error(`event ${id} never accepted (last status ${r?.status})`);
          await new Promise((res) => setTimeout(res, 100));
        }
      }
    }),
  );
}

const deliveredIds = () => fn.received.map((r) => r.headers['ce-id'] as string);

describe('broker on a three-node NATS JetStream cluster', () => {
  const ns = 'cluster';
  const objects = () => ({
    brokers: [broker('default', {}, ns)],
    triggers: [trigger('t', { subscriber: { uri: fn.url }, delivery: { retry: 10, backoffPolicy: 'linear', backoffDelay: 'PT0.2S' } }, ns)],
    options: { ackWaitMs: 3_000 },
  });

  it('two broker processes share the Trigger: each event delivered once across them', async () => {
    procs.push(await spawnBroker(dir, nats.url, objects()), await spawnBroker(dir, nats.url, objects()));
    const ids = Array.from({ length: 300 }, (_, i) => `a-${i}`);
    await sendAll(() => procs.map((p) => `${p.url}/${ns}/default`), ids);
    await until('all deliveries', () => new Set(deliveredIds()).size === ids.length, { timeoutMs: 30_000 });
    await new Promise((r) => setTimeout(r, 500));
    const counts = new Map<string, number>();
    for (const id of deliveredIds()) counts.set(id, (counts.get(id) ?? 0) + 1);
    expect([...counts.values()].every((c) => c === 1)).toBe(true);
    expect(counts.size).toBe(ids.length);
  }, 90_000);

  it('loses nothing answered 202 when a NATS node and a broker process are killed under load', async () => {
    fn.received.length = 0;
    const [a, b] = procs as [BrokerProcess, BrokerProcess];
    let alive = [a, b];
    const ids = Array.from({ length: 900 }, (_, i) => `b-${i}`);
    const sending = sendAll(() => alive.map((p) => `${p.url}/${ns}/default`), ids);
    await until('first deliveries', () => fn.received.length >= 150, { timeoutMs: 30_000 });
    nats.kill(nats.nodes[0]!);
    await until('deliveries after the node died', () => fn.received.length >= 350, { timeoutMs: 60_000 });
    alive = [b];
    await a.kill9();
    await sending;
    await until('every accepted event delivered', () => ids.every((id) => deliveredIds().includes(id)), { timeoutMs: 90_000 });
    expect(ids.filter((id) => !deliveredIds().includes(id))).toEqual([]);
  }, 180_000);
});
