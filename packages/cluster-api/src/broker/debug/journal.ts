/**
 * What the debugger reads: every step of an event's path, written beside the Broker's stream into the
 * log's bounded journal (log/interface.ts `journal`), so every broker process sees every step, on
 * SQLite and NATS alike. One JSON entry per step:
 *
 * | `k`          | written when                                   | holds                                         |
 * | ------------ | ---------------------------------------------- | --------------------------------------------- |
 * | `event`      | an event is stored (ingress, reply, replay)    | its attributes, the record (for replay and filter tests, when at most 32 KiB), `via` |
 * | `match`      | a Trigger's filter refused it (a match shows as its attempts) | `trigger`, `matched: false`, `why` |
 * | `attempt`    | a delivery attempt ended                       | `trigger`, `n`, `url`, `code`, `ms`, `outcome` (`done`, `reply`, `retry`, `fail`), `why` |
 * | `deadletter` | it went to the dead-letter sink (or not)       | `trigger`, `sink`, `ok`                       |
 * | `dropped`    | it was given up                                | `trigger`, `why`                              |
 *
 * Writes are batched per stream and event-loop turn, and never fail a delivery: a journal that
 * cannot be written is logged once a minute, and the debugger shows less.
 */
import type { AttributeValue, CloudEvent } from '../event/event.js';
import type { EventLog } from '../log/interface.js';
import type { Logger } from '../metrics.js';

/** Largest record kept in an `event` entry; bigger events are journaled without it (no replay). */
export const JOURNAL_RECORD_MAX = 32 * 1024;

export type Step =
  | { k: 'event'; id: string; attributes: Record<string, AttributeValue>; record?: string; via: 'ingress' | 'reply' | 'replay'; trigger?: string; replyTo?: string }
  | { k: 'match'; id: string; trigger: string; matched: boolean; why?: string }
  | { k: 'attempt'; id: string; trigger: string; n: number; url: string; code?: number; ms: number; outcome: 'done' | 'reply' | 'retry' | 'fail'; why?: string }
  | { k: 'deadletter'; id: string; trigger: string; sink: string; ok: boolean }
  | { k: 'dropped'; id: string; trigger?: string; why: string };

/** The `event` step of a stored event: its attributes, and its record when small enough to keep. */
export function eventStep(event: CloudEvent, record: Uint8Array, via: 'ingress' | 'reply' | 'replay', extra: { trigger?: string; replyTo?: string } = {}): Step {
  return {
    k: 'event', id: String(event.attributes.id), attributes: event.attributes, via, ...extra,
    ...(record.length <= JOURNAL_RECORD_MAX ? { record: Buffer.from(record.buffer, record.byteOffset, record.byteLength).toString('base64') } : {}),
  };
}

/** A step as read back: with its position and time. */
export type JournaledStep = Step & { seq: number; at: string };

export class Journal {
  private readonly pending = new Map<string, Uint8Array[]>();
  private scheduled = false;
  private lastComplaint = 0;
  private lastMs = 0;
  private lastIso = '';

  constructor(private readonly log: EventLog, private readonly logger: Logger) {}

  add(stream: string, step: Step): void {
    // The step's JSON with `at` appended: no copy of the step, one timestamp string per millisecond.
    const json = JSON.stringify(step);
    const bytes = Buffer.from(`${json.slice(0, -1)},"at":"${this.now()}"}`);
    const list = this.pending.get(stream);
    if (list) list.push(bytes);
    else this.pending.set(stream, [bytes]);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private now(): string {
    const ms = Date.now();
    if (ms !== this.lastMs) {
      this.lastMs = ms;
      this.lastIso = new Date(ms).toISOString();
    }
    return this.lastIso;
  }

  private flush(): void {
    this.scheduled = false;
    for (const [stream, entries] of this.pending) {
      this.log.journal(stream, entries).catch((err: Error) => {
        if (Date.now() - this.lastComplaint < 60_000) return;
        this.lastComplaint = Date.now();
        this.logger('warn', 'journal not written; the event debugger will miss steps', { broker: stream, error: err.message });
      });
    }
    this.pending.clear();
  }
}

/** Every journaled step of `stream` (the journal is bounded), oldest first; entries that do not parse are skipped. */
export async function readSteps(log: EventLog, stream: string, afterSeq = 0, limit = Number.MAX_SAFE_INTEGER): Promise<JournaledStep[]> {
  const out: JournaledStep[] = [];
  for (let after = afterSeq; out.length < limit; ) {
    const batch = await log.readJournal(stream, after, Math.min(500, limit - out.length));
    if (batch.length === 0) break;
    for (const e of batch) {
      try {
        out.push({ ...(JSON.parse(Buffer.from(e.data).toString('utf8')) as Step & { at: string }), seq: e.seq });
      } catch {
        // Not ours: skipped.
      }
    }
    after = batch.at(-1)!.seq;
  }
  return out;
}
