/**
 * Events expire, as kube-apiserver's --event-ttl (1 h) makes them expire in etcd: an Event is removed
 * once its last occurrence (lastTimestamp, series.lastObservedTime, eventTime, else its creation) is
 * older than the TTL. Without this, the Events controllers record would pile up for good. One timer,
 * set for the earliest expiry; a rewritten Event (a recorder bumping `count`) is due again from its
 * new last occurrence.
 */
import type { KubeObject } from '../api/meta.js';
import type { Registry } from '../registry/rest.js';
import { follow, ignoreRaces, inNamespace, Loop, type Controller, type ControllerOptions } from './loop.js';

export const DefaultEventTtlMs = 60 * 60 * 1000;

interface Due {
  namespace: string;
  name: string;
  uid: string;
  at: number;
}

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

export const startEventTtl = (registry: Registry, opts: ControllerOptions & { eventTtlMs?: number } = {}): Controller => {
  const events = registry.find('', 'v1', 'events');
  if (!events) return { stop: async () => undefined };
  const ttl = opts.eventTtlMs ?? DefaultEventTtlMs;
  const due = new Map<string, Due>();

  const pass = async (): Promise<void> => {
    const now = Date.now();
    for (const [key, d] of [...due]) {
      if (d.at > now) continue;
      due.delete(key);
      await events.delete(inNamespace(d.namespace), d.name, { preconditions: { uid: d.uid } }).catch(ignoreRaces);
    }
    const next = Math.min(...[...due.values()].map((d) => d.at));
    if (Number.isFinite(next)) loop.kick(Math.max(0, next - Date.now()));
  };

  const loop = new Loop('event-ttl', pass, { resyncMs: 60_000, ...opts });
  const watch = follow(events, loop, (type, e) => {
    const { namespace = '', name = '', uid = '' } = e.metadata;
    const key = `${namespace}/${name}`;
    if (type === 'DELETED') return void due.delete(key);
    due.set(key, { namespace, name, uid, at: lastOccurrence(e) + ttl });
    loop.kick(0);
  });
  return {
    stop: async () => {
      watch.close();
      await loop.stop();
    },
  };
};
