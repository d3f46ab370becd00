/**
 * The distributed event log: NATS JetStream (`nats://host:port[,host:port…][?replicas=3]`). One
 * stream per Broker with interest retention (a message lives until every Trigger's consumer acked
 * it), file storage, `replicas` copies; one durable pull consumer per Trigger, explicit acks.
 * Several broker processes open the same consumers and so share the deliveries. Appends of one
 * event-loop turn go to the server together, each answered once JetStream acknowledged it.
 *
 * JetStream names cannot hold `/` or `.`, so streams and consumers are named by a hash of the
 * broker's and trigger's keys, which their descriptions keep readable.
 */
import { createHash } from 'node:crypto';
import {
  AckPolicy,
  connect,
  DeliverPolicy,
  DiscardPolicy,
  type JetStreamClient,
  type JetStreamManager,
  nanos,
  type NatsConnection,
  RetentionPolicy,
  StorageType,
} from 'nats';
import { type Consumer, type ConsumerOptions, type EventLog, JOURNAL_LIMIT, type JournalEntry, LogUnavailableError } from './interface.js';
import { NatsConsumer } from './nats-consumer.js';

export interface NatsLogOptions {
  /** Copies of each stream (1 on one server, 3 on a three-node cluster). */
  readonly replicas?: number;
}

/** Names are hashed on every append, journal write and consumer call: each once (bounded: cleared when full). */
const hashes = new Map<string, string>();
function hash(s: string): string {
  let h = hashes.get(s);
  if (h === undefined) {
    if (hashes.size >= 10_000) hashes.clear();
    hashes.set(s, (h = createHash('sha256').update(s).digest('hex').slice(0, 24)));
  }
  return h;
}

/** A publish waiting for its turn's flush. */
interface Queued {
  readonly subject: string;
  readonly stream: string;
  readonly data: Uint8Array;
  resolve(): void;
  reject(err: unknown): void;
}

const streamName = (stream: string) => `KB_${hash(stream)}`;
const subject = (stream: string) => `kbroker.${hash(stream)}`;
const consumerName = (name: string) => `KT_${hash(name)}`;
/** A stream's journal: a stream of its own, limits-based (the newest JOURNAL_LIMIT kept), never consumed durably. */
const journalName = (stream: string) => `KJ_${hash(stream)}`;
const journalSubject = (stream: string) => `kjournal.${hash(stream)}`;

function unavailable(err: unknown, what: string): LogUnavailableError {
  const e = err as { code?: string; message?: string };
  return new LogUnavailableError(`${what}: nats ${e.code ?? 'error'}${e.message ? ` (${e.message})` : ''}`);
}

const isNotFound = (err: unknown) => /not found/i.test((err as Error).message ?? '') || (err as { code?: string }).code === '404';

/** `nats://a:4222,b:4222?replicas=3` → servers and options. */
export function parseNatsUrl(url: string): { servers: string[]; replicas: number } {
  const [hosts = '', query = ''] = url.replace(/^nats:\/\//, '').split('?');
  const servers = hosts.split(',').filter(Boolean).map((h) => `nats://${h}`);
  if (servers.length === 0) throw new LogUnavailableError(`no NATS server in ${url}`);
  const replicas = Number(new URLSearchParams(query).get('replicas') ?? '1');
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > 5) throw new LogUnavailableError(`replicas must be 1 to 5 in ${url}`);
  return { servers, replicas };
}

export class NatsLog implements EventLog {
  readonly engine = 'nats';
  private readonly open = new Set<NatsConsumer>();
  /** The JetStream subject and stream name of each stream and journal (hashes, computed once). */
  private readonly names = new Map<string, { subject: string; stream: string }>();
  private queued: Queued[] = [];
  private flushing = false;

  static async connect(url: string): Promise<NatsLog> {
    const { servers, replicas } = parseNatsUrl(url);
    try {
      // No stack captured per request (each publish and each confirmed ack is one): in the bench's
      // profile those stacks were ~9% of the broker's CPU on NATS.
      const nc = await connect({ servers, name: 'func-broker', maxReconnectAttempts: -1, reconnectTimeWait: 250, noAsyncTraces: true });
      return new NatsLog(nc, await nc.jetstreamManager(), nc.jetstream(), { replicas });
    } catch (err) {
      throw unavailable(err, `cannot reach NATS at ${servers.join(',')}`);
    }
  }

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly js: JetStreamClient,
    private readonly opts: NatsLogOptions,
  ) {}

  async ensureStream(stream: string): Promise<void> {
    const name = streamName(stream);
    try {
      await this.jsm.streams.info(name);
      return;
    } catch (err) {
      if (!isNotFound(err)) throw unavailable(err, `cannot look up the stream of ${stream}`);
    }
    try {
      await this.jsm.streams.add({
        name,
        description: `broker ${stream}`,
        subjects: [subject(stream)],
        retention: RetentionPolicy.Interest,
        storage: StorageType.File,
        num_replicas: this.opts.replicas ?? 1,
      });
    } catch (err) {
      // Another broker process created it in the meantime: fine if it is there now.
      await this.jsm.streams.info(name).catch(() => Promise.reject(unavailable(err, `cannot create the stream of ${stream}`)));
    }
  }

  async deleteStream(stream: string): Promise<void> {
    for (const name of [streamName(stream), journalName(stream)]) {
      try {
        await this.jsm.streams.delete(name);
      } catch (err) {
        if (!isNotFound(err)) throw unavailable(err, `cannot delete the stream of ${stream}`);
      }
    }
    this.journals.delete(stream);
    this.names.delete(stream);
    this.names.delete(`journal ${stream}`);
  }

  private readonly journals = new Map<string, Promise<void>>();

  /** The journal's stream, made once per process (another process may have made it). */
  private ensureJournal(stream: string): Promise<void> {
    let made = this.journals.get(stream);
    if (!made) {
      const name = journalName(stream);
      const config = {
        name, description: `journal of broker ${stream}`, subjects: [journalSubject(stream)],
        retention: RetentionPolicy.Limits, discard: DiscardPolicy.Old, max_msgs: JOURNAL_LIMIT,
        storage: StorageType.File, num_replicas: this.opts.replicas ?? 1,
      };
      made = this.jsm.streams.info(name).then(
        () => undefined,
        () => this.jsm.streams.add(config).then(() => undefined, () => this.jsm.streams.info(name).then(() => undefined)),
      );
      made.catch(() => this.journals.delete(stream));
      this.journals.set(stream, made);
    }
    return made;
  }

  private named(key: string, make: () => { subject: string; stream: string }): { subject: string; stream: string } {
    let n = this.names.get(key);
    if (!n) this.names.set(key, (n = make()));
    return n;
  }

  /**
   * Publishes `records` to JetStream; resolves once the server acknowledged every one (stored).
   * Publishes of one event-loop turn are sent together at its end: the client writes them to the
   * server in one go (group commit on the wire) and each waits for its own acknowledgement.
   */
  private publish(to: { subject: string; stream: string }, records: readonly Uint8Array[]): Promise<unknown> {
    return Promise.all(records.map((data) => new Promise<void>((resolve, reject) => {
      this.queued.push({ ...to, data, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => this.flush());
      }
    })));
  }

  private flush(): void {
    this.flushing = false;
    const queued = this.queued;
    this.queued = [];
    for (const q of queued) this.js.publish(q.subject, q.data, { expect: { streamName: q.stream } }).then(() => q.resolve(), q.reject);
  }

  async journal(stream: string, entries: readonly Uint8Array[]): Promise<void> {
    try {
      await this.ensureJournal(stream);
      await this.publish(this.named(`journal ${stream}`, () => ({ subject: journalSubject(stream), stream: journalName(stream) })), entries);
    } catch (err) {
      throw unavailable(err, `journal of ${stream} not stored`);
    }
  }

  async readJournal(stream: string, afterSeq: number, limit: number): Promise<JournalEntry[]> {
    let state: { first_seq: number; last_seq: number };
    try {
      state = (await this.jsm.streams.info(journalName(stream))).state;
    } catch (err) {
      if (isNotFound(err)) return [];
      throw unavailable(err, `cannot read the journal of ${stream}`);
    }
    const start = Math.max(afterSeq + 1, state.first_seq);
    const want = Math.min(limit, state.last_seq - start + 1);
    if (want <= 0) return [];
    try {
      // An ordered (ephemeral) consumer from `start`: read, then gone.
      const c = await this.js.consumers.get(journalName(stream), { opt_start_seq: start });
      const out: JournalEntry[] = [];
      for await (const m of await c.fetch({ max_messages: want, expires: 2_000 })) {
        out.push({ seq: m.seq, data: m.data });
        if (out.length >= want) break;
      }
      return out;
    } catch (err) {
      throw unavailable(err, `cannot read the journal of ${stream}`);
    }
  }

  async append(stream: string, records: readonly Uint8Array[]): Promise<void> {
    try {
      await this.publish(this.named(stream, () => ({ subject: subject(stream), stream: streamName(stream) })), records);
    } catch (err) {
      throw unavailable(err, `events not stored in ${stream}`);
    }
  }

  async ensureConsumer(stream: string, name: string, opts: ConsumerOptions): Promise<void> {
    const sname = streamName(stream);
    const durable = consumerName(name);
    const config = {
      durable_name: durable,
      description: name,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.New,
      ack_wait: nanos(opts.ackWaitMs),
      max_ack_pending: opts.maxInFlight * 8,
      max_deliver: -1,
    };
    try {
      await this.jsm.consumers.info(sname, durable).catch(async (err) => {
        if (!isNotFound(err)) throw err;
        // Another process may create it at the same time: then it is there when we look again.
        await this.jsm.consumers.add(sname, config).catch(() => this.jsm.consumers.info(sname, durable));
      });
    } catch (err) {
      throw unavailable(err, `cannot create consumer ${name} of ${stream}`);
    }
  }

  /**
   * Opens the consumer for pulling. Closing it leaves the server's open pull request behind for up
   * to its expiry; messages sent to it come back after the ack wait, so consumers are opened for
   * long stretches (a Trigger's life), not per fetch.
   */
  async consumer(stream: string, name: string, opts: ConsumerOptions): Promise<Consumer> {
    await this.ensureConsumer(stream, name, opts);
    const sname = streamName(stream);
    const durable = consumerName(name);
    try {
      const c = await this.js.consumers.get(sname, durable);
      const consumer = new NatsConsumer(await c.consume({ max_messages: Math.min(opts.maxInFlight, 256) }), opts.maxInFlight);
      this.open.add(consumer);
      return consumer;
    } catch (err) {
      throw unavailable(err, `cannot open consumer ${name} of ${stream}`);
    }
  }

  async deleteConsumer(stream: string, name: string): Promise<void> {
    try {
      await this.jsm.consumers.delete(streamName(stream), consumerName(name));
    } catch (err) {
      if (!isNotFound(err)) throw unavailable(err, `cannot delete consumer ${name} of ${stream}`);
    }
  }

  async consumers(stream: string): Promise<string[]> {
    try {
      const infos = await this.jsm.consumers.list(streamName(stream)).next();
      return infos.map((i) => i.config.description ?? i.name).sort();
    } catch (err) {
      if (isNotFound(err)) return [];
      throw unavailable(err, `cannot list the consumers of ${stream}`);
    }
  }

  async close(): Promise<void> {
    for (const c of this.open) await c.close();
    this.open.clear();
    if (!this.nc.isClosed()) await this.nc.close();
  }
}
