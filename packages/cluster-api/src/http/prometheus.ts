/**
 * A Prometheus metrics registry and its text exposition (format 0.0.4), what `/metrics` serves. Parts
 * of the server register their counters, gauges and histograms on the one registry; a metric's
 * labelled series is found once by its label values and kept, so the hot path bumps a number on an
 * object it already holds. A gauge may instead be collected at scrape time (a count the server does
 * not keep by itself, such as stored objects).
 */

export const PrometheusContentType = 'text/plain; version=0.0.4; charset=utf-8';

type Values = readonly string[];

/** One labelled series of a histogram: observations per bucket (not cumulative), sum and count. */
export class HistogramSeries {
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(private readonly buckets: readonly number[]) {
    this.counts = Array.from({ length: buckets.length + 1 }, () => 0);
  }
  observe(value: number): void {
    this.sum += value;
    this.count++;
    let i = 0;
    while (i < this.buckets.length && value > this.buckets[i]!) i++;
    this.counts[i]!++;
  }
}

/** A value that only goes up. */
export class CounterSeries {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
}

/** A value that goes up and down. */
export class GaugeSeries {
  value = 0;
  set(value: number): void {
    this.value = value;
  }
  inc(by = 1): void {
    this.value += by;
  }
  dec(by = 1): void {
    this.value -= by;
  }
}

/** Label values at scrape time, for gauges the server computes when asked. */
export type Collect = () => Iterable<[Values, number]> | Promise<Iterable<[Values, number]>>;

abstract class Metric<S> {
  private readonly series = new Map<string, { values: Values; series: S }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: Values,
  ) {}
  protected abstract create(): S;
  /** The series of these label values (as many as labelNames), made on first use and kept. */
  labels(...values: string[]): S {
    const key = values.join('\u0000');
    let found = this.series.get(key);
    if (!found) {
      if (values.length !== this.labelNames.length) throw new Error(`${this.name}: ${this.labelNames.length} label values expected`);
      this.series.set(key, (found = { values, series: this.create() }));
    }
    return found.series;
  }
  protected entries(): Iterable<{ values: Values; series: S }> {
    return this.series.values();
  }
  abstract lines(): Promise<string[]>;
}

export class Counter extends Metric<CounterSeries> {
  protected create() {
    return new CounterSeries();
  }
  async lines(): Promise<string[]> {
    return [...this.entries()].map(({ values, series }) => sample(this.name, this.labelNames, values, series.value));
  }
}

export class Gauge extends Metric<GaugeSeries> {
  constructor(name: string, help: string, labelNames: Values, private readonly collect?: Collect) {
    super(name, help, labelNames);
  }
  protected create() {
    return new GaugeSeries();
  }
  async lines(): Promise<string[]> {
    const kept = [...this.entries()].map(({ values, series }) => sample(this.name, this.labelNames, values, series.value));
    if (!this.collect) return kept;
    return [...kept, ...[...(await this.collect())].map(([values, value]) => sample(this.name, this.labelNames, values, value))];
  }
}

export class Histogram extends Metric<HistogramSeries> {
  constructor(name: string, help: string, labelNames: Values, readonly buckets: readonly number[]) {
    super(name, help, labelNames);
  }
  protected create() {
    return new HistogramSeries(this.buckets);
  }
  /** Buckets are cumulative in the exposition: summed here, at scrape time. */
  async lines(): Promise<string[]> {
    const out: string[] = [];
    const names = [...this.labelNames, 'le'];
    for (const { values, series } of this.entries()) {
      let below = 0;
      this.buckets.forEach((le, i) => out.push(sample(`${this.name}_bucket`, names, [...values, String(le)], (below += series.counts[i]!))));
      out.push(sample(`${this.name}_bucket`, names, [...values, '+Inf'], series.count));
      out.push(sample(`${this.name}_sum`, this.labelNames, values, series.sum));
      out.push(sample(`${this.name}_count`, this.labelNames, values, series.count));
    }
    return out;
  }
}

const escapeValue = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const escapeHelp = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

function sample(name: string, labelNames: Values, values: Values, value: number): string {
  const labels = labelNames.map((l, i) => `${l}="${escapeValue(values[i] ?? '')}"`).join(',');
  return `${name}${labels ? `{${labels}}` : ''} ${Number.isFinite(value) ? value : value > 0 ? '+Inf' : value < 0 ? '-Inf' : 'NaN'}`;
}

const validName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** The metrics of one process, in registration order; a name is registered once. */
export class MetricsRegistry {
  private readonly metrics = new Map<string, { type: string; metric: Metric<unknown> }>();

  counter(name: string, help: string, labelNames: Values = []): Counter {
    return this.add('counter', new Counter(name, help, labelNames));
  }
  gauge(name: string, help: string, labelNames: Values = [], collect?: Collect): Gauge {
    return this.add('gauge', new Gauge(name, help, labelNames, collect));
  }
  histogram(name: string, help: string, labelNames: Values, buckets: readonly number[]): Histogram {
    return this.add('histogram', new Histogram(name, help, labelNames, buckets));
  }

  private add<M extends Metric<unknown>>(type: string, metric: M): M {
    if (!validName.test(metric.name) || metric.labelNames.some((l) => !validName.test(l) || l.startsWith('__')))
      throw new Error(`invalid metric or label name in ${metric.name}`);
    if (this.metrics.has(metric.name)) throw new Error(`metric ${metric.name} is already registered`);
    this.metrics.set(metric.name, { type, metric });
    return metric;
  }

  /** The text exposition; a collector that fails leaves its metric without samples rather than failing the scrape. */
  async text(): Promise<string> {
    const out: string[] = [];
    for (const [name, { type, metric }] of this.metrics) {
      out.push(`# HELP ${name} ${escapeHelp(metric.help)}`, `# TYPE ${name} ${type}`);
      out.push(...(await metric.lines().catch(() => [])));
    }
    return `${out.join('\n')}\n`;
  }
}
