/**
 * A Trigger's durable consumer on the SQLite log.
 *
 * Progress is a floor: every event of the stream at or below it has been acked or parked in
 * `pending` for a retry. Messages are handed out in stream order and acked in any order; the floor
 * moves over the acked prefix and is written with the next transaction (within 50 ms). A crash
 * loses at most the acks above the floor: those events are delivered again (at least once). A nak writes the pending
 * row (attempt + 1, due time) before the floor may pass the event, so a retry survives a crash with
 * its attempt count, and is not handed out a second time from the stream.
 */
import type { Consumer, ConsumerOptions, LogMessage } from './interface.js';
import type { SqliteLog } from './sqlite.js';

interface Retry {
  attempt: number;
  due: number;
}

export class SqliteConsumer implements Consumer {
  /** Events handed out from the stream (not retries), in order, until the floor passes them. */
  private readonly handed: number[] = [];
  private readonly doneAbove = new Set<number>();
  /** The highest event read from the stream. */
  private cursor: number;
  private readonly retries = new Map<number, Retry>();
  private readonly inFlight = new Set<number>();
  private floorDirty = false;
  /** The last read reached the end of the stream and nothing was appended since: reading again would find nothing. */
  private atEnd = false;
  private closed = false;
  private wakeUp: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: SqliteLog,
    private readonly stream: number,
    readonly rowId: number,
    private floor: number,
    private readonly opts: ConsumerOptions,
    private readonly onClose: (c: SqliteConsumer) => void,
  ) {
    this.cursor = floor;
    for (const r of log.st.pendingOf.all(rowId)) this.retries.set(r.event, { attempt: r.attempt, due: r.due });
  }

  /** Events were committed to the stream. */
  appended(): void {
    this.atEnd = false;
    this.wake();
  }

  wake(): void {
    const w = this.wakeUp;
    this.wakeUp = undefined;
    w?.();
  }

  async fetch(max: number, signal: AbortSignal): Promise<LogMessage[]> {
    for (;;) {
      if (this.closed || signal.aborted) return [];
      const out = this.take(Math.min(max, this.opts.maxInFlight - this.inFlight.size));
      if (out.length > 0) return out;
      await this.sleep(signal);
    }
  }

  private sleep(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(this.timer);
        signal.removeEventListener('abort', done);
        this.wakeUp = undefined;
        resolve();
      };
      this.wakeUp = done;
      signal.addEventListener('abort', done);
      let next = Infinity;
      for (const [id, r] of this.retries) if (r.due < next && !this.inFlight.has(id)) next = r.due;
      if (next !== Infinity) this.timer = setTimeout(done, Math.max(0, next - Date.now()));
    });
  }

  private take(room: number): LogMessage[] {
    const out: LogMessage[] = [];
    if (room <= 0) return out;
    const now = Date.now();
    for (const [id, r] of this.retries) {
      if (out.length >= room) return out;
      if (r.due > now || this.inFlight.has(id)) continue;
      const row = this.log.st.readOne.get(id);
      if (!row) {
        this.retries.delete(id);
        continue;
      }
      out.push(this.message(id, row.body, r.attempt, true));
    }
    const want = room - out.length;
    const rows = want > 0 && !this.atEnd ? this.log.st.readAfter.all(this.stream, this.cursor, want) : [];
    if (want > 0 && rows.length < want) this.atEnd = true;
    for (const row of rows) {
      this.cursor = row.id;
      // Parked for a retry before a crash: it comes back through `retries`, not a second time here.
      if (this.retries.has(row.id)) {
        this.handed.push(row.id);
        this.doneAbove.add(row.id);
        continue;
      }
      this.handed.push(row.id);
      out.push(this.message(row.id, row.body, 1, false));
    }
    this.advance();
    return out;
  }

  private message(seq: number, data: Buffer, attempt: number, isRetry: boolean): LogMessage {
    this.inFlight.add(seq);
    let settled = false;
    const settle = () => {
      if (settled) throw new Error('message already acked or nak’d');
      settled = true;
    };
    return {
      seq,
      data,
      attempt,
      working: () => undefined,
      ack: async () => {
        settle();
        if (isRetry) await this.log.write(() => this.log.st.dropPending.run(this.rowId, seq));
        this.retries.delete(seq);
        this.release(seq, isRetry);
      },
      nak: async (delayMs) => {
        settle();
        const retry = { attempt: attempt + 1, due: Date.now() + Math.max(0, delayMs) };
        await this.log.write(() => this.log.st.putPending.run(this.rowId, seq, retry.attempt, retry.due));
        this.retries.set(seq, retry);
        this.release(seq, isRetry);
      },
    };
  }

  private release(seq: number, isRetry: boolean): void {
    this.inFlight.delete(seq);
    if (!isRetry) this.doneAbove.add(seq);
    this.advance();
    this.wake();
  }

  /** Moves the floor over the handled prefix; the new floor is written with the next transaction (writeLater). */
  private advance(): void {
    let moved = false;
    while (this.handed.length > 0 && this.doneAbove.has(this.handed[0]!)) {
      this.floor = this.handed.shift()!;
      this.doneAbove.delete(this.floor);
      moved = true;
    }
    if (this.handed.length === 0 && this.cursor > this.floor) {
      this.floor = this.cursor;
      moved = true;
    }
    if (moved && !this.floorDirty && !this.closed) {
      this.floorDirty = true;
      this.log
        .writeLater(() => {
          this.floorDirty = false;
          this.log.st.setFloor.run(this.floor, this.rowId);
        })
        .catch(() => {
          // Not written: the events above the old floor are delivered again after a restart.
          this.floorDirty = false;
        });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.wake();
    this.onClose(this);
  }
}
