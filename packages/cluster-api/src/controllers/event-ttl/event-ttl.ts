/**
 * Events expire, as kube-apiserver's --event-ttl (1 h) makes them expire in etcd: an Event is removed
 * once its last occurrence (lastTimestamp, series.lastObservedTime, eventTime, else its creation) is
 * older than the TTL. Without this, the Events controllers record would pile up for good. A
 * rewritten Event (a recorder bumping `count`) is due again from its new last occurrence.
 */
import type { KubeObject } from '../../api/meta.js';
import type { ApiClient } from '../../client/interface.js';
import { deleteWhenDue } from '../deadlines.js';
import type { Controller, ControllerOptions } from '../shared.js';

export const DefaultEventTtlMs = 60 * 60 * 1000;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** When the event last happened, as far as the object tells (ms since the epoch). */
const lastOccurrence = (e: KubeObject): number => {
  const series = e.series && typeof e.series === 'object' ? str((e.series as Record<string, unknown>).lastObservedTime) : '';
  for (const t of [series, str(e.lastTimestamp), str(e.eventTime), str(e.firstTimestamp), str(e.metadata.creationTimestamp)]) {
    const ms = Date.parse(t);
    if (!Number.isNaN(ms)) return ms;
  }
  return Date.now();
};

export const startEventTtl = (registry: ApiClient, opts: ControllerOptions & { eventTtlMs?: number } = {}): Controller => {
  const events = registry.find('', 'v1', 'events');
  if (!events) return { stop: async () => undefined };
  const ttl = opts.eventTtlMs ?? DefaultEventTtlMs;
  return deleteWhenDue(events, { name: 'event-ttl', dueAt: (e) => lastOccurrence(e) + ttl }, opts);
};
