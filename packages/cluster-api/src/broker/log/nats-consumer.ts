/**
 * A Trigger's durable JetStream consumer, shared by every broker process that opens it: JetStream
 * hands each message to one of them, and hands it to another when it is not acked within the
 * consumer's ack wait (the process died). Retries are `nak` with a delay; the delivery count is the
 * attempt. The client's `consume()` keeps a small buffer pulled ahead; a message is taken from it
 * only when the dispatcher has room, so the buffer never outgrows what one pull asked for.
 */
import type { ConsumerMessages, JsMsg } from 'nats';
import type { Consumer, LogMessage } from './interface.js';

export class NatsConsumer implements Consumer {
  /** Handed out, not yet acked or nak'd: bounded by maxInFlight in this process. */
  private inFlight = 0;
  private released: (() => void) | undefined;
  private readonly it: AsyncIterator<JsMsg>;
  /** A `next()` still running from a fetch that returned early: its message belongs to the next fetch. */
  private waiting: Promise<IteratorResult<JsMsg>> | undefined;
  private closed = false;
  private acks: { m: JsMsg; resolve: () => void; reject: (err: Error) => void }[] = [];

  constructor(
    private readonly messages: ConsumerMessages,
    private readonly maxInFlight: number,
  ) {
    this.it = messages[Symbol.asyncIterator]();
  }

  private toMessage(m: JsMsg): LogMessage {
    this.inFlight++;
    let settled = false;
    const settle = () => {
      if (settled) throw new Error('message already acked or nak’d');
      settled = true;
      this.inFlight--;
      const r = this.released;
      this.released = undefined;
      r?.();
    };
    return {
      seq: m.info.streamSequence,
      data: m.data,
      attempt: m.info.redeliveryCount,
      // Confirmed by the server: a later reopen must not see an acked message again.
      ack: async () => {
        settle();
        await this.queueAck(m);
      },
      nak: async (delayMs) => {
        settle();
        m.nak(Math.max(0, Math.round(delayMs)));
      },
      working: () => m.working(),
    };
  }

  /**
   * Acks are sent once per event-loop turn, all together: the client writes what is queued in one
   * turn to its socket at once, where acks sent from each delivery's own callback were a write each.
   */
  private queueAck(m: JsMsg): Promise<void> {
    return new Promise((resolve, reject) => {
      this.acks.push({ m, resolve, reject });
      if (this.acks.length === 1) setImmediate(() => this.sendAcks());
    });
  }

  private sendAcks(): void {
    const acks = this.acks;
    this.acks = [];
    for (const a of acks) {
      try {
        a.m.ackAck().then(() => a.resolve(), a.reject);
      } catch (err) {
        a.reject(err as Error);
      }
    }
  }

  async fetch(max: number, signal: AbortSignal): Promise<LogMessage[]> {
    while (!this.closed && !signal.aborted && this.inFlight >= this.maxInFlight) await this.release(signal);
    const room = Math.min(max, this.maxInFlight - this.inFlight);
    if (this.closed || signal.aborted || room <= 0) return [];
    const first = await this.next(signal);
    if (!first) return [];
    const out = [this.toMessage(first)];
    // Take what the client has already buffered, without waiting for more. The iterator counts the
    // message it last yielded as pending until the next call, hence `> 1`.
    while (out.length < room && this.messages.getPending() > 1) {
      const next = this.it.next();
      const r = await Promise.race([next, new Promise<'later'>((resolve) => setImmediate(() => resolve('later')))]);
      if (r === 'later') {
        this.waiting = next;
        break;
      }
      if (r.done) break;
      out.push(this.toMessage(r.value));
    }
    return out;
  }

  /** Each wait removes its abort listener when it ends: the signal lives as long as the Trigger, the waits are one per fetch. */
  private release(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.released = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private async next(signal: AbortSignal): Promise<JsMsg | undefined> {
    this.waiting ??= this.it.next();
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<'aborted'>((resolve) => {
      if (signal.aborted) return resolve('aborted');
      onAbort = () => resolve('aborted');
      signal.addEventListener('abort', onAbort, { once: true });
    });
    const r = await Promise.race([this.waiting, aborted]).finally(() => onAbort && signal.removeEventListener('abort', onAbort));
    if (r === 'aborted') return undefined;
    this.waiting = undefined;
    if (r.done) {
      this.closed = true;
      return undefined;
    }
    return r.value;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.messages.stop();
    this.released?.();
  }
}
