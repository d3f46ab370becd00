/**
 * The event-log conformance suite: both engines (sqlite, nats) run this one suite, so the broker
 * above can rely on the same semantics whichever `--broker-store` says.
 *
 *   eventLogConformance('sqlite', { open: () => SqliteLog.open(file) });
 *
 * `open` is called once or more per test and must return a log over the same durable store each
 * time (a reopen after close sees everything acknowledged before). Each test uses streams of its own.
 * `shared` engines also run the cases for several processes opening one consumer.
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { type Consumer, type EventLog, JOURNAL_LIMIT, type LogMessage } from '../interface.js';
import { until } from '../../../../testing/src/poll.js';

export interface LogFactory {
  open(): Promise<EventLog>;
  /** True when two open logs may share a consumer (several broker processes). */
  readonly shared?: boolean;
}

const OPTS = { maxInFlight: 100, ackWaitMs: 2_000 };
let counter = 0;
const fresh = (what: string) => `${what}-${process.pid}-${Date.now().toString(36)}-${counter++}`;
const bytes = (s: string) => new TextEncoder().encode(s);
const text = (m: LogMessage) => new TextDecoder().decode(m.data);

/** Fetches until `n` messages arrived (or fails after `ms`). */
export async function collect(c: Consumer, n: number, ms = 10_000): Promise<LogMessage[]> {
  const out: LogMessage[] = [];
  const deadline = Date.now() + ms;
  while (out.length < n) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`got ${out.length} of ${n} messages`);
    out.push(...(await c.fetch(n - out.length, AbortSignal.timeout(left))));
  }
  return out;
}

/** What a consumer hands out within `ms` (for "nothing more arrives"). */
async function quiet(c: Consumer, ms = 300): Promise<LogMessage[]> {
  return c.fetch(100, AbortSignal.timeout(ms));
}

export function eventLogConformance(name: string, factory: LogFactory): void {
  describe(`event log conformance: ${name}`, () => {
    const open: EventLog[] = [];
    const openLog = async () => {
      const log = await factory.open();
      open.push(log);
      return log;
    };
    afterEach(async () => {
      for (const log of open.splice(0)) await log.close().catch(() => undefined);
    });

    it('hands out what is appended after the consumer exists, in order, once each', async () => {
      const log = await openLog();
      const s = fresh('order');
      await log.ensureStream(s);
      await log.append(s, [bytes('before')]);
      const c = await log.consumer(s, 't1', OPTS);
      await log.append(s, [bytes('a'), bytes('b')]);
      await log.append(s, [bytes('c')]);
      const got = await collect(c, 3);
      expect(got.map(text)).toEqual(['a', 'b', 'c']);
      expect(got.map((m) => m.attempt)).toEqual([1, 1, 1]);
      expect(got[0]!.seq).toBeLessThan(got[2]!.seq);
      await Promise.all(got.map((m) => m.ack()));
      expect(await quiet(c)).toEqual([]);
    });

    it('leaves no listener on the signal its fetches were given (a Trigger fetches with one signal for its whole life)', async () => {
      const log = await openLog();
      const s = fresh('listeners');
      await log.ensureStream(s);
      const c = await log.consumer(s, 't', { maxInFlight: 1, ackWaitMs: 2_000 });
      const signal = new AbortController().signal;
      const got: string[] = [];
      for (let i = 0; i < 5; i++) {
        await log.append(s, [bytes(`m${i}`)]);
        while (got.length <= i) for (const m of await c.fetch(1, signal)) got.push(text(m)), await m.ack();
      }
      expect(got).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
      expect(getEventListeners(signal, 'abort')).toEqual([]);
    });

    it('gives every consumer of a stream every message, and nothing of other streams', async () => {
      const log = await openLog();
      const [s1, s2] = [fresh('fan'), fresh('other')];
      await log.ensureStream(s1);
      await log.ensureStream(s2);
      const [a, b, other] = [await log.consumer(s1, 'a', OPTS), await log.consumer(s1, 'b', OPTS), await log.consumer(s2, 'a', OPTS)];
      await log.append(s1, [bytes('x'), bytes('y')]);
      expect((await collect(a, 2)).map(text)).toEqual(['x', 'y']);
      expect((await collect(b, 2)).map(text)).toEqual(['x', 'y']);
      expect(await quiet(other)).toEqual([]);
      expect((await log.consumers(s1)).sort()).toEqual(['a', 'b']);
    });

    it('creates a consumer without taking messages: it then gets everything appended since', async () => {
      const log = await openLog();
      const s = fresh('ensure');
      await log.ensureStream(s);
      await log.ensureConsumer(s, 'paused', OPTS);
      await log.ensureConsumer(s, 'paused', OPTS);
      await log.append(s, [bytes('kept'), bytes('for later')]);
      const c = await log.consumer(s, 'paused', OPTS);
      expect((await collect(c, 2)).map(text)).toEqual(['kept', 'for later']);
    });

    it('waits for an append, and returns nothing when the signal aborts', async () => {
      const log = await openLog();
      const s = fresh('wait');
      await log.ensureStream(s);
      const c = await log.consumer(s, 't', OPTS);
      const pending = collect(c, 1);
      setTimeout(() => void log.append(s, [bytes('late')]), 100);
      expect((await pending).map(text)).toEqual(['late']);
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      expect(await c.fetch(10, controller.signal)).toEqual([]);
    });

    it('hands a nak’d message out again after the delay, with the attempt raised', async () => {
      const log = await openLog();
      const s = fresh('nak');
      await log.ensureStream(s);
      const c = await log.consumer(s, 't', OPTS);
      await log.append(s, [bytes('retry me')]);
      const [m] = await collect(c, 1);
      const t0 = Date.now();
      await m!.nak(300);
      const [again] = await collect(c, 1);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
      expect({ text: text(again!), attempt: again!.attempt, seq: again!.seq }).toEqual({ text: 'retry me', attempt: 2, seq: m!.seq });
      await again!.ack();
      expect(await quiet(c)).toEqual([]);
    });

    it('keeps at most maxInFlight messages out', async () => {
      const log = await openLog();
      const s = fresh('window');
      await log.ensureStream(s);
      const c = await log.consumer(s, 't', { ...OPTS, maxInFlight: 3 });
      await log.append(s, ['1', '2', '3', '4', '5'].map(bytes));
      const first = await collect(c, 3);
      expect(await quiet(c)).toEqual([]);
      await first[0]!.ack();
      const next = await collect(c, 1);
      expect(text(next[0]!)).toBe('4');
    });

    it('survives a reopen: appended and unacked messages come back, acked ones do not', async () => {
      const s = fresh('durable');
      const log1 = await openLog();
      await log1.ensureStream(s);
      const c1 = await log1.consumer(s, 't', OPTS);
      await log1.append(s, ['m1', 'm2', 'm3', 'm4'].map(bytes));
      const got = await collect(c1, 4);
      await got[0]!.ack();
      await got[1]!.nak(0);
      await c1.close();
      await log1.close();
      const log2 = await openLog();
      const c2 = await log2.consumer(s, 't', OPTS);
      // Each acked as it arrives: one held back past the ack wait (a loaded machine) comes back by
      // design, which is not what this case is about.
      const again: LogMessage[] = [];
      const deadline = Date.now() + 10_000;
      while (new Set(again.map(text)).size < 3 && Date.now() < deadline) {
        const got = await c2.fetch(3, AbortSignal.timeout(Math.max(1, deadline - Date.now())));
        await Promise.all(got.map((m) => m.ack()));
        again.push(...got);
      }
      expect([...new Set(again.map(text))].sort()).toEqual(['m2', 'm3', 'm4']);
      expect(Math.max(...again.filter((m) => text(m) === 'm2').map((m) => m.attempt))).toBeGreaterThanOrEqual(2);
      expect(await quiet(c2)).toEqual([]);
    });

    it('starts a deleted and recreated consumer at the end of the stream', async () => {
      const log = await openLog();
      const s = fresh('recreate');
      await log.ensureStream(s);
      const c = await log.consumer(s, 't', OPTS);
      await log.append(s, [bytes('old')]);
      await c.close();
      await log.deleteConsumer(s, 't');
      expect(await log.consumers(s)).toEqual([]);
      const again = await log.consumer(s, 't', OPTS);
      expect(await quiet(again)).toEqual([]);
      await log.append(s, [bytes('new')]);
      expect((await collect(again, 1)).map(text)).toEqual(['new']);
    });

    it('stores concurrent appends, each once', async () => {
      const log = await openLog();
      const s = fresh('concurrent');
      await log.ensureStream(s);
      const c = await log.consumer(s, 't', { ...OPTS, maxInFlight: 1000 });
      await Promise.all(Array.from({ length: 200 }, (_, i) => log.append(s, [bytes(`e${i}`)])));
      const got = await collect(c, 200);
      expect(new Set(got.map(text)).size).toBe(200);
      await Promise.all(got.map((m) => m.ack()));
      expect(await quiet(c)).toEqual([]);
    });

    it('refuses appends to a stream that does not exist, and forgets a deleted one', async () => {
      const log = await openLog();
      const s = fresh('gone');
      await expect(log.append(s, [bytes('x')])).rejects.toThrow();
      await log.ensureStream(s);
      await log.consumer(s, 't', OPTS);
      await log.deleteStream(s);
      await expect(log.append(s, [bytes('x')])).rejects.toThrow();
    });

    it('keeps a journal per stream: in order, read after a position, removed with the stream', async () => {
      const log = await openLog();
      const [s, other] = [fresh('journal'), fresh('journal-other')];
      await log.ensureStream(s);
      await log.ensureStream(other);
      expect(await log.readJournal(s, 0, 10)).toEqual([]);
      await log.journal(s, [bytes('a'), bytes('b')]);
      await log.journal(s, [bytes('c')]);
      await log.journal(other, [bytes('x')]);
      const all = await log.readJournal(s, 0, 10);
      expect(all.map((e) => Buffer.from(e.data).toString())).toEqual(['a', 'b', 'c']);
      expect(all[0]!.seq).toBeLessThan(all[1]!.seq);
      expect((await log.readJournal(s, all[0]!.seq, 10)).map((e) => Buffer.from(e.data).toString())).toEqual(['b', 'c']);
      expect((await log.readJournal(s, 0, 1)).map((e) => Buffer.from(e.data).toString())).toEqual(['a']);
      expect(await log.readJournal(s, all[2]!.seq, 10)).toEqual([]);
      await log.deleteStream(s);
      expect(await log.readJournal(s, 0, 10)).toEqual([]);
      expect((await log.readJournal(other, 0, 10)).map((e) => Buffer.from(e.data).toString())).toEqual(['x']);
    });

    it(`bounds the journal to the newest ${JOURNAL_LIMIT} entries of a stream`, async () => {
      const log = await openLog();
      const s = fresh('journal-bound');
      await log.ensureStream(s);
      const entries = Array.from({ length: JOURNAL_LIMIT + 10 }, (_, i) => bytes(`e${i}`));
      for (let i = 0; i < entries.length; i += 500) await log.journal(s, entries.slice(i, i + 500));
      await until('the journal trimmed', async () => (await log.readJournal(s, 0, JOURNAL_LIMIT + 100)).length === JOURNAL_LIMIT, { timeoutMs: 10_000 });
      const kept = await log.readJournal(s, 0, JOURNAL_LIMIT + 100);
      expect(Buffer.from(kept[0]!.data).toString()).toBe('e10');
      expect(Buffer.from(kept.at(-1)!.data).toString()).toBe(`e${JOURNAL_LIMIT + 9}`);
    });

    if (factory.shared) sharedCases(openLog);
  });
}

function sharedCases(openLog: () => Promise<EventLog>): void {
  it('splits one consumer between two processes: each message goes to one of them', async () => {
    const [p1, p2] = [await openLog(), await openLog()];
    const s = fresh('shared');
    await p1.ensureStream(s);
    const [c1, c2] = [await p1.consumer(s, 't', OPTS), await p2.consumer(s, 't', OPTS)];
    await p1.append(s, Array.from({ length: 40 }, (_, i) => bytes(`s${i}`)));
    const seen: string[] = [];
    const deadline = Date.now() + 10_000;
    while (seen.length < 40 && Date.now() < deadline) {
      for (const c of [c1, c2]) {
        const got = await c.fetch(5, AbortSignal.timeout(200));
        for (const m of got) {
          seen.push(text(m));
          await m.ack();
        }
      }
    }
    expect(seen.sort()).toEqual(Array.from({ length: 40 }, (_, i) => `s${i}`).sort());
  });

  it('gives a message to the other process when the first neither acks nor naks it', async () => {
    const [p1, p2] = [await openLog(), await openLog()];
    const s = fresh('handover');
    await p1.ensureStream(s);
    const opts = { maxInFlight: 10, ackWaitMs: 500 };
    const c1 = await p1.consumer(s, 't', opts);
    await p1.append(s, [bytes('orphan')]);
    const [m] = await collect(c1, 1);
    await p1.close();
    const c2 = await p2.consumer(s, 't', opts);
    const [again] = await collect(c2, 1);
    expect({ text: text(again!), seq: again!.seq }).toEqual({ text: 'orphan', seq: m!.seq });
    expect(again!.attempt).toBe(2);
  });
}
