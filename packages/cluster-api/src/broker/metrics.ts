/**
 * The broker's counters, per Broker and per Trigger, and one log line per dropped event. Logs name
 * the event by id, source and type only: no data, at any level.
 */

export const COUNTERS = ['accepted', 'rejected', 'delivered', 'replies', 'retried', 'deadLettered', 'dropped'] as const;
export type CounterName = (typeof COUNTERS)[number];

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
/** A structured log sink; the default writes one JSON line to stderr. */
export type Logger = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;

export const jsonLogger: Logger = (level, msg, fields) => {
  process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), msg, ...fields })}\n`);
};

export const silentLogger: Logger = () => undefined;

/** Labels: the Broker (`ns/name`), and the Trigger for delivery counters. */
export interface Labels {
  readonly broker: string;
  readonly trigger?: string;
}

export class BrokerMetrics {
  private readonly counts = new Map<string, { labels: Labels; values: Record<CounterName, number> }>();

  inc(name: CounterName, labels: Labels, n = 1): void {
    const key = `${labels.broker}|${labels.trigger ?? ''}`;
    let entry = this.counts.get(key);
    if (!entry) {
      entry = { labels, values: Object.fromEntries(COUNTERS.map((c) => [c, 0])) as Record<CounterName, number> };
      this.counts.set(key, entry);
    }
    entry.values[name] += n;
  }

  /** Totals over every Broker and Trigger, optionally only those matching `filter`. */
  total(name: CounterName, filter: Partial<Labels> = {}): number {
    let sum = 0;
    for (const { labels, values } of this.counts.values()) {
      if (filter.broker !== undefined && labels.broker !== filter.broker) continue;
      if (filter.trigger !== undefined && labels.trigger !== filter.trigger) continue;
      sum += values[name];
    }
    return sum;
  }

  /** Prometheus text format: `broker_events_<counter>_total{broker="ns/b",trigger="ns/t"}`. */
  prometheus(): string {
    const lines: string[] = [];
    for (const c of COUNTERS) {
      const metric = `broker_events_${c.replace(/[A-Z]/g, (m) => `_${m.toLowerCase()}`)}_total`;
      lines.push(`# TYPE ${metric} counter`);
      for (const { labels, values } of this.counts.values()) {
        const l = `broker="${labels.broker}"${labels.trigger ? `,trigger="${labels.trigger}"` : ''}`;
        lines.push(`${metric}{${l}} ${values[c]}`);
      }
    }
    return `${lines.join('\n')}\n`;
  }
}
