/**
 * One storage watch over one etcd watch stream, resumed after failures.
 *
 * Invariant: `next` is the first revision not yet handed to onEvents. Every (re)connect asks etcd
 * for changes from `next` with previous values, so a member failure, a leader loss (the stream is
 * ended by require-leader) or a dropped connection costs a reconnect but never an event; events at
 * or below the last delivered revision are dropped, so none is repeated. If history at `next` was
 * compacted meanwhile, etcd says so and the watch ends with Compacted: the API answers 410 and the
 * client relists, exactly as on kube-apiserver.
 *
 * etcd3's own WatchManager is not used: it resumes from the response header's revision, which can
 * be ahead of the events delivered so far while a watcher catches up, and drops the compact revision.
 */
import type { Etcd3, IWatchResponse, IDuplexStream, IWatchRequest, IKeyValue } from 'etcd3';
import { compactedError } from '../checks.js';
import { StorageError } from '../errors.js';
import type { KeyValue, StorageEvent, Watch, WatchHandlers, WatchOptions } from '../interface.js';
import { prefixEnd } from '../keys.js';

const MIN_BACKOFF_MS = 50;
const MAX_BACKOFF_MS = 1_000;

export function kvFromEtcd(kv: IKeyValue): KeyValue {
  return {
    key: kv.key.toString('latin1'),
    value: kv.value ?? Buffer.alloc(0),
    createRevision: Number(kv.create_revision),
    modRevision: Number(kv.mod_revision),
  };
}

function eventFromEtcd(ev: IWatchResponse['events'][number]): StorageEvent {
  const kv = kvFromEtcd(ev.kv);
  const prevKv = ev.prev_kv ? kvFromEtcd(ev.prev_kv) : undefined;
  if (ev.type === 'Delete') {
    return { type: 'delete', kv: { ...kv, value: Buffer.alloc(0), createRevision: 0 }, ...(prevKv && { prevKv }), revision: kv.modRevision };
  }
  return { type: 'put', kv, ...(prevKv && { prevKv }), revision: kv.modRevision };
}

export class EtcdWatch implements Watch {
  private stream: IDuplexStream<IWatchRequest, IWatchResponse> | undefined;
  private next: number;
  private closed = false;
  private backoff = MIN_BACKOFF_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Bumped per connection, so callbacks of a stream already given up on are ignored. */
  private generation = 0;

  constructor(
    private readonly client: Etcd3,
    private readonly opts: WatchOptions,
    private readonly handlers: WatchHandlers,
    /** Revision after which to deliver; resolved once the start point is known. */
    start: Promise<number>,
    /** Told of compact revisions etcd reports, so the store's view stays current. */
    private readonly onCompacted: (revision: number) => void,
    private readonly detach: (w: EtcdWatch) => void,
  ) {
    this.next = 0;
    start.then(
      (after) => {
        this.next = after + 1;
        this.connect();
      },
      (err: Error) => this.fail(err),
    );
  }

  /** Terminal: the watch is over after this. */
  fail(err: Error): void {
    if (this.closed) return;
    this.close();
    queueMicrotask(() => this.handlers.onError(err));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.dropStream();
    this.detach(this);
  }

  private connect(): void {
    if (this.closed) return;
    const generation = ++this.generation;
    this.client.watchClient.watch().then(
      (stream) => {
        if (this.closed || generation !== this.generation) return stream.cancel();
        this.stream = stream;
        stream.on('data', (res) => generation === this.generation && this.onResponse(res));
        stream.on('error', (err) => generation === this.generation && this.retry(err));
        stream.on('end', () => generation === this.generation && this.retry(new Error('watch stream ended')));
        stream.write({ create_request: this.request() });
      },
      (err: Error) => generation === this.generation && this.retry(err),
    );
  }

  private request(): IWatchRequest['create_request'] {
    const key = Buffer.from(this.opts.key, 'latin1');
    return {
      key,
      ...(this.opts.prefix && { range_end: Buffer.from(prefixEnd(this.opts.key), 'latin1') }),
      // One revision early, and that event dropped: etcd refuses a start *below* its compacted
      // revision, the contract refuses an afterRevision below it, so this makes the two agree.
      start_revision: Math.max(1, this.next - 1),
      prev_kv: true,
      progress_notify: true,
    };
  }

  private onResponse(res: IWatchResponse): void {
    if (this.closed) return;
    if (res.canceled) return this.onCanceled(res);
    if (res.created) {
      this.backoff = MIN_BACKOFF_MS;
      return;
    }
    if (res.events.length === 0) {
      // A progress notification: etcd sends them only to watchers that have caught up, so no change
      // up to the header revision is pending, and a resume may start after it.
      this.next = Math.max(this.next, Number(res.header.revision) + 1);
      return;
    }
    const batch = res.events.map(eventFromEtcd).filter((ev) => ev.revision >= this.next);
    if (batch.length === 0) return;
    this.next = batch[batch.length - 1]!.revision + 1;
    try {
      this.handlers.onEvents(batch);
    } catch (err) {
      // A handler that throws cannot be trusted to have seen the batch: end loudly, not with a gap.
      this.fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private onCanceled(res: IWatchResponse): void {
    const compact = Number(res.compact_revision);
    if (compact > 0) {
      this.onCompacted(compact);
      return this.fail(compactedError(this.opts.key, compact));
    }
    // "no leader" and similar: the cluster may recover; anything else is a real refusal.
    if (/leader|timed out|unavailable/i.test(res.cancel_reason)) return this.retry(new Error(res.cancel_reason));
    this.fail(new StorageError('Unavailable', this.opts.key, `etcd canceled the watch: ${res.cancel_reason}`));
  }

  private retry(_err: Error): void {
    if (this.closed) return;
    this.dropStream();
    this.generation++;
    const delay = this.backoff;
    this.backoff = Math.min(MAX_BACKOFF_MS, this.backoff * 2);
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  private dropStream(): void {
    const stream = this.stream;
    this.stream = undefined;
    if (!stream) return;
    try {
      // Half-closed first: etcd3 counts an error on a still-writable watch stream as a failure of
      // its member (it resets the member's connections and feeds its circuit breaker), and the
      // CANCELLED a cancel produces is ours, not etcd's.
      stream.end();
      stream.cancel();
    } catch {
      // Already gone.
    }
  }
}
