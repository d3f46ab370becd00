/**
 * The durable event log under the broker: one stream per Broker, one durable consumer per Trigger.
 * Two engines implement it (sqlite.ts, the embedded default; nats.ts, JetStream for several broker
 * processes) and both pass testing/conformance.ts.
 *
 * The contract, in the broker's terms:
 * - `append` resolves only once every record is durably stored: the ingress answers 202 after it.
 * - A consumer sees every record appended to its stream after it was first created, in order of
 *   the stream, each until it is acked. A new consumer starts at the end of the stream.
 * - `nak(delay)` hands the message out again after `delay` with `attempt + 1`; the retry state is
 *   durable. A message neither acked nor nak'd (the process died, the consumer closed) is handed out
 *   again later: delivery is at least once, and a redelivery may duplicate a delivery that was done.
 * - Consumers of one stream are independent; on an engine that several processes share, the
 *   processes opening the same consumer split its messages, each message going to one of them.
 */

export interface ConsumerOptions {
  /** At most this many messages handed out and not yet acked or nak'd. */
  readonly maxInFlight: number;
  /** A message not acked, nak'd or marked `working` within this time may go to another process. */
  readonly ackWaitMs: number;
}

export interface LogMessage {
  /** Position in the stream: increasing with append order. */
  readonly seq: number;
  readonly data: Uint8Array;
  /** 1 on the first hand-out, n on the n-th. */
  readonly attempt: number;
  /** Done with it: never handed out again (unless the ack is lost in a crash). */
  ack(): Promise<void>;
  /** Hand it out again after `delayMs`, with the attempt count raised. */
  nak(delayMs: number): Promise<void>;
  /** Still being handled: pushes back the ack deadline. */
  working(): void;
}

export interface Consumer {
  /**
   * Up to `max` messages ready now; waits for at least one unless `signal` aborts or the consumer
   * closes, then returns what it has (possibly none).
   */
  fetch(max: number, signal: AbortSignal): Promise<LogMessage[]>;
  /** Stops handing out; unacked messages go back to the stream. */
  close(): Promise<void>;
}

/** How many journal entries a stream keeps (the newest): the journal is bounded whatever the traffic. */
export const JOURNAL_LIMIT = 2_000;

/** One entry of a stream's journal: bytes the broker's debugger wrote (debug/journal.ts), in order. */
export interface JournalEntry {
  /** Increasing with the order entries were added. */
  readonly seq: number;
  readonly data: Uint8Array;
}

export interface EventLog {
  /** `sqlite` or `nats`, for logs and status messages. */
  readonly engine: string;
  /** Creates the stream if missing. */
  ensureStream(stream: string): Promise<void>;
  /** Removes the stream, its records and its consumers. */
  deleteStream(stream: string): Promise<void>;
  /** Stores `records` at the end of `stream`; resolves once all are durable. */
  append(stream: string, records: readonly Uint8Array[]): Promise<void>;
  /**
   * Creates the durable consumer `name` of `stream` at the end of the stream if missing, without
   * taking messages: a paused Trigger keeps its place this way.
   */
  ensureConsumer(stream: string, name: string, opts: ConsumerOptions): Promise<void>;
  /** Opens the durable consumer `name` of `stream`, creating it (at the end of the stream) if missing. */
  consumer(stream: string, name: string, opts: ConsumerOptions): Promise<Consumer>;
  /** Removes a consumer and its progress. */
  deleteConsumer(stream: string, name: string): Promise<void>;
  /** The consumers `stream` has, by name (to remove those of Triggers that are gone). */
  consumers(stream: string): Promise<string[]>;
  /**
   * Adds entries to the journal of `stream`: what happened to its events, for the debugger. Kept
   * apart from the records (which go once every consumer is past them), at most the newest
   * `JOURNAL_LIMIT` per stream, shared by every process on the log; removed with the stream.
   */
  journal(stream: string, entries: readonly Uint8Array[]): Promise<void>;
  /** Up to `limit` journal entries of `stream` after `afterSeq` (0: from the oldest kept), oldest first. */
  readJournal(stream: string, afterSeq: number, limit: number): Promise<JournalEntry[]>;
  close(): Promise<void>;
}

/** A failure of the log itself (engine down, disk full): retriable, and never a client's fault. */
export class LogUnavailableError extends Error {
  override readonly name = 'LogUnavailableError';
}
