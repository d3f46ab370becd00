/**
 * client-go's EventCorrelator (tools/record/events_cache.go), which every recorder runs its events
 * through, so the Events here look and pile up as they do in Kubernetes:
 * - aggregation: from the 10th event of one object, type and reason with a distinct message within
 *   10 minutes, they become one event "(combined from similar events): <latest message>";
 * - deduplication: an event seen before (same source, object, field path, type, reason and message)
 *   bumps `count`, `lastTimestamp` and `message` of the stored one by a patch instead of creating
 *   another;
 * - spam filter: a token bucket per source, object and type (burst 25, then one per 5 minutes) drops
 *   the rest, so a ReplicaSet creating 1,000 pods writes 25 events, not 1,000, and a pod that stays
 *   unschedulable does not write an event per attempt.
 */
import type { CoreEvent } from './event.js';

/** What to do with an event: create it, patch an earlier one, or nothing. */
export type Correlated = { create: CoreEvent } | { patch: { name: string; namespace: string; body: Record<string, unknown> }; event: CoreEvent } | undefined;

const MaxSimilar = 10;
const AggregateWindowMs = 600_000;
const SpamBurst = 25;
const SpamRefillMs = 300_000;
const CacheSize = 4096;

/** A map that forgets its oldest entries past `CacheSize` (client-go's LRU caches). */
class Lru<V> extends Map<string, V> {
  override set(key: string, value: V): this {
    this.delete(key);
    super.set(key, value);
    if (this.size > CacheSize) this.delete(this.keys().next().value!);
    return this;
  }
}

const join = (values: unknown[]): string => values.map((v) => String(v ?? '')).join('\u0000');

/** Source and object: what the spam filter and the aggregator group by. */
const objectKey = (e: CoreEvent): string => {
  const o = e.involvedObject;
  return join([e.source.component, e.source.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion]);
};

export class EventCorrelator {
  private readonly similar = new Lru<{ messages: Set<string>; last: number }>();
  private readonly seen = new Lru<{ name: string; count: number; firstTimestamp: string }>();
  private readonly buckets = new Lru<{ tokens: number; at: number }>();

  /** `eventName` names an aggregate event, which replaces `event` from the 10th similar one. */
  correlate(event: CoreEvent, now: number, eventName: () => string): Correlated {
    const [aggregated, key] = this.aggregate(event, now, eventName);
    if (!this.allowed(event, now)) return undefined;
    const before = this.seen.get(key);
    if (!before) {
      this.seen.set(key, { name: aggregated.metadata.name, count: 1, firstTimestamp: aggregated.firstTimestamp });
      return { create: aggregated };
    }
    const count = before.count + 1;
    this.seen.set(key, { ...before, count });
    const merged = { ...aggregated, metadata: { ...aggregated.metadata, name: before.name }, firstTimestamp: before.firstTimestamp, count };
    const body = { count, lastTimestamp: aggregated.lastTimestamp, message: aggregated.message };
    return { patch: { name: before.name, namespace: aggregated.metadata.namespace, body }, event: merged };
  }

  /** A patched event was gone (expired): the next occurrence starts a new one. */
  forget(event: CoreEvent): void {
    for (const [k, v] of this.seen) if (v.name === event.metadata.name) this.seen.delete(k);
  }

  private aggregate(event: CoreEvent, now: number, eventName: () => string): [CoreEvent, string] {
    const group = join([objectKey(event), event.type, event.reason]);
    let record = this.similar.get(group);
    if (!record || now - record.last > AggregateWindowMs) record = { messages: new Set(), last: now };
    record.messages.add(event.message);
    record.last = now;
    this.similar.set(group, record);
    if (record.messages.size < MaxSimilar) return [event, join([group, event.involvedObject.fieldPath, event.message])];
    record.messages.delete(record.messages.values().next().value!);
    const at = event.lastTimestamp;
    // As client-go builds it: no reporting fields on the aggregate.
    const combined: CoreEvent = {
      apiVersion: 'v1', kind: 'Event',
      metadata: { name: eventName(), namespace: event.metadata.namespace },
      involvedObject: event.involvedObject, reason: event.reason, message: `(combined from similar events): ${event.message}`,
      source: event.source, firstTimestamp: at, lastTimestamp: at, count: 1, type: event.type,
    };
    return [combined, group];
  }

  private allowed(event: CoreEvent, now: number): boolean {
    const key = join([objectKey(event), event.type]);
    const bucket = this.buckets.get(key) ?? { tokens: SpamBurst, at: now };
    const tokens = Math.min(SpamBurst, bucket.tokens + (now - bucket.at) / SpamRefillMs);
    const ok = tokens >= 1;
    this.buckets.set(key, { tokens: ok ? tokens - 1 : tokens, at: now });
    return ok;
  }
}
