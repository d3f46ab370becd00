/**
 * The reply path's durability rule (control-plane spec, "Content Based Routing"): a reply that
 * cannot be stored fails the original delivery, which is then retried; the reply is not lost.
 */
import { getEventListeners } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { deliveryPolicy } from '../delivery/policy.js';
import { decodeRecord, encodeRecord } from '../event/event.js';
import type { EventLog, LogMessage } from '../log/interface.js';
import { SqliteLog } from '../log/sqlite.js';
import { collect } from '../log/testing/conformance.js';
import { BrokerMetrics, silentLogger } from '../metrics.js';
import { holdWhileWorking, sleep, TriggerWorker } from './worker.js';

const dir = mkdtempSync(join(tmpdir(), 'broker-worker-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('fails and retries the original delivery when its reply cannot be stored', async () => {
  let calls = 0;
  const server = createServer((req, res) => {
    calls++;
    req.resume();
    res.writeHead(200, { 'ce-specversion': '1.0', 'ce-id': `reply-${calls}`, 'ce-source': '/fn', 'ce-type': 'reply' }).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const sqlite = SqliteLog.open(join(dir, 'w.db'));
  let failReplies = 1;
  // The real log, except that the first reply append fails as a full disk would.
  const log: EventLog = Object.assign(Object.create(sqlite) as EventLog, {
    append: (stream: string, records: readonly Uint8Array[]) => {
      if (records.some((r) => decodeRecord(r).event.attributes.type === 'reply') && failReplies-- > 0) return Promise.reject(new Error('disk full'));
      return sqlite.append(stream, records);
    },
  });
  await log.ensureStream('s');
  const metrics = new BrokerMetrics();
  const worker = new TriggerWorker('s', 't', { broker: 's', trigger: 't' }, { log, metrics, logger: silentLogger, maxInFlight: 8, ackWaitMs: 5_000, maxEventBytes: 1 << 20 });
  const watcher = await sqlite.consumer('s', 'watch', { maxInFlight: 10, ackWaitMs: 5_000 });
  worker.setProgram({
    predicate: (a) => a.type === 'original',
    subscriber: url,
    reply: { stream: 's' },
    policy: deliveryPolicy({ retry: 3, backoffPolicy: 'linear', backoffDelay: 'PT0.05S' }, undefined),
  });
  await worker.consumerCreated;
  await log.append('s', [encodeRecord({ event: { attributes: { specversion: '1.0', id: 'o1', source: '/', type: 'original' } }, ttl: 255 })]);
  const seen = await collect(watcher, 2);
  expect(seen.map((m) => decodeRecord(m.data).event.attributes.id)).toEqual(['o1', 'reply-2']);
  expect(decodeRecord(seen[1]!.data).ttl).toBe(254);
  expect(calls).toBe(2);
  expect(metrics.total('retried')).toBe(1);
  expect(metrics.total('delivered')).toBe(1);
  await worker.stop();
  await sqlite.close();
  await new Promise((r) => server.close(r));
});

it('marks held messages as being worked on every third of the ack wait, with one timer for all, until released', () => {
  vi.useFakeTimers();
  try {
    const calls: string[] = [];
    const message = (name: string, broken = false): LogMessage => ({
      seq: 1, data: new Uint8Array(), attempt: 1, ack: async () => undefined, nak: async () => undefined,
      working: () => {
        calls.push(name);
        if (broken) throw new Error('connection closed');
      },
    });
    const releaseA = holdWhileWorking(message('a'), 3_000);
    const releaseB = holdWhileWorking(message('b'), 3_000);
    holdWhileWorking(message('closed', true), 3_000);
    vi.advanceTimersByTime(999);
    expect(calls).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(calls).toEqual(['a', 'b', 'closed']);
    // A message whose log closed under it is no longer marked; a released one neither.
    releaseA();
    vi.advanceTimersByTime(1_000);
    expect(calls).toEqual(['a', 'b', 'closed', 'b']);
    releaseB();
    expect(vi.getTimerCount()).toBe(0);
  } finally {
    vi.useRealTimers();
  }
});

it('a sleep leaves no listener on the signal it was given, whether it ran out or was aborted', async () => {
  const stopping = new AbortController();
  for (let i = 0; i < 20; i++) await sleep(1, stopping.signal);
  expect(getEventListeners(stopping.signal, 'abort')).toEqual([]);
  const waiting = sleep(60_000, stopping.signal);
  stopping.abort();
  await waiting;
  expect(getEventListeners(stopping.signal, 'abort')).toEqual([]);
});
