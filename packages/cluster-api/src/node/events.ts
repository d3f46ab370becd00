/**
 * core/v1 Events as client-go's recorder writes them for the kubelet, the scheduler and the node
 * controller: named `<object>.<hex nanoseconds>`, in the object's namespace (`default` for a Node),
 * with `source` and `reportingComponent`/`reportingInstance`. A repeat of the same event (same object,
 * type, reason and message) bumps `count` and `lastTimestamp` of the one already written, as the
 * EventCorrelator does, and its spam filter holds each source and object to a burst of 25 events, then
 * one every 5 minutes (a pod that stays unschedulable does not write an event per attempt). Writing
 * never blocks the caller; a bounded queue drops what it cannot keep.
 */
import type { KubeClient } from '@func/kube-client';
import { Resources } from '@func/kube-client';
import { rfc3339 } from './types.js';

/** Where events go: the API through a client, or (in-process controllers) the registry. */
export interface EventWriter {
  create(namespace: string, event: Record<string, unknown>): Promise<unknown>;
  patch(namespace: string, name: string, patch: Record<string, unknown>): Promise<unknown>;
}

export const clientEvents = (kube: KubeClient): EventWriter => ({
  create: (namespace, event) => kube.create(Resources.events, event, { namespace }),
  patch: (namespace, name, patch) => kube.patch(Resources.events, name, patch, { namespace, type: 'merge' }),
});

export interface InvolvedObject {
  kind: string;
  apiVersion: string;
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface EventSource {
  component: string;
  /** The node (kubelet) or instance that reports. */
  host?: string;
  instance: string;
}

interface Seen {
  name: string;
  namespace: string;
  count: number;
  at: number;
}

const MaxQueue = 1000;
const MaxSeen = 4096;
/** The correlator forgets an event after this long and writes a new one. */
const SeenForMs = 10 * 60 * 1000;
/** EventSourceObjectSpamFilter: a token bucket per source and object. */
const SpamBurst = 25;
const SpamRefillMs = 5 * 60 * 1000;

export class EventRecorder {
  private readonly seen = new Map<string, Seen>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private queue: (() => Promise<unknown>)[] = [];
  private running = false;
  private closed = false;

  constructor(private readonly writer: EventWriter, private readonly source: EventSource, private readonly log?: (e: Record<string, unknown>) => void) {}

  record(involved: InvolvedObject, type: 'Normal' | 'Warning', reason: string, message: string): void {
    if (this.closed || this.queue.length >= MaxQueue) return;
    const namespace = involved.namespace || 'default';
    const now = Date.now();
    if (!this.allowed(JSON.stringify([involved.kind, namespace, involved.name, involved.uid, involved.apiVersion]), now)) return;
    const key = JSON.stringify([involved.kind, namespace, involved.name, involved.uid, involved.fieldPath, type, reason, message]);
    const seen = this.seen.get(key);
    if (seen && now - seen.at < SeenForMs) {
      seen.count++;
      seen.at = now;
      const patch = { count: seen.count, lastTimestamp: rfc3339(now) };
      this.enqueue(() => this.writer.patch(seen.namespace, seen.name, patch));
      return;
    }
    const name = `${involved.name}.${(BigInt(now) * 1_000_000n + BigInt(Math.floor(Math.random() * 1e6))).toString(16)}`;
    this.remember(key, { name, namespace, count: 1, at: now });
    const event = {
      metadata: { name, namespace },
      involvedObject: { ...involved, namespace: involved.namespace },
      reason,
      message,
      source: { component: this.source.component, ...(this.source.host ? { host: this.source.host } : {}) },
      firstTimestamp: rfc3339(now),
      lastTimestamp: rfc3339(now),
      count: 1,
      type,
      eventTime: null,
      reportingComponent: this.source.component,
      reportingInstance: this.source.instance,
    };
    this.enqueue(() => this.writer.create(namespace, event));
  }

  private allowed(object: string, now: number): boolean {
    const bucket = this.buckets.get(object) ?? { tokens: SpamBurst, at: now };
    bucket.tokens = Math.min(SpamBurst, bucket.tokens + (now - bucket.at) / SpamRefillMs);
    bucket.at = now;
    if (this.buckets.size >= MaxSeen && !this.buckets.has(object)) this.buckets.delete(this.buckets.keys().next().value!);
    this.buckets.set(object, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens--;
    return true;
  }

  private remember(key: string, seen: Seen): void {
    if (this.seen.size >= MaxSeen) this.seen.delete(this.seen.keys().next().value!);
    this.seen.set(key, seen);
  }

  private enqueue(write: () => Promise<unknown>): void {
    this.queue.push(write);
    if (!this.running) void this.drain();
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0 && !this.closed) {
      const write = this.queue.shift()!;
      await write().catch((err: Error) => this.log?.({ level: 'debug', msg: 'event not written', error: err.message }));
    }
    this.running = false;
  }

  /** Stops writing; what is queued is dropped. */
  close(): void {
    this.closed = true;
    this.queue = [];
  }
}
