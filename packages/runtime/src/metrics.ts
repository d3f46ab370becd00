/**
 * Prometheus metrics, named and labelled as faas-js-runtime names them (faas_invocations,
 * faas_errors, faas_execution_latency, faas_queue_latency, faas_cold_start_latency,
 * faas_cpu_utilization, faas_mem_utilization, faas_netio_utilization), so existing dashboards keep
 * working. The CPU and memory gauges describe this process (CPU % of one core since the last
 * scrape, RSS in MiB) where faas-js-runtime reports whole-machine figures; network I/O is the
 * network namespace's (in a pod: the pod's), as it reports.
 * Requests only bump plain numbers; prom-client is loaded on the first scrape, and its registry
 * reads these numbers through duck-typed metric objects (prom-client's `get()` contract).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const requireLazy = createRequire(import.meta.url);

/** prom-client's default histogram buckets, in seconds: the ones faas-js-runtime exposes. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

class Histogram {
  /**
   * Observations per bucket, not cumulative: an observation bumps one slot (most land in the first).
   * A plain array of small integers: as a Float64Array, these two bumps per request cost about 2 %
   * of a hello's CPU (bench/README.md, "Where hello's CPU beyond its instruction count went").
   */
  readonly counts: number[] = Array.from({ length: BUCKETS.length + 1 }, () => 0);
  sum = 0;
  count = 0;
  observe(seconds: number): void {
    this.sum += seconds;
    this.count++;
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]!) i++;
    this.counts[i]!++;
  }
  /** Prometheus buckets are cumulative: summed here, at scrape time. */
  values(name: string) {
    let below = 0;
    const out: { metricName: string; labels: Record<string, string | number>; value: number }[] = BUCKETS.map((le, i) => ({
      metricName: `${name}_bucket`, labels: { le }, value: (below += this.counts[i]!),
    }));
    out.push({ metricName: `${name}_bucket`, labels: { le: '+Inf' }, value: this.count });
    out.push({ metricName: `${name}_sum`, labels: {}, value: this.sum });
    out.push({ metricName: `${name}_count`, labels: {}, value: this.count });
    return out;
  }
}

export class Metrics {
  invocations = 0;
  errors = 0;
  /** From the call of `handle` to the answer, as faas-js-runtime times it (its preHandler → onResponse). */
  readonly latency = new Histogram();
  /** From the request's arrival to the call of `handle`: its body read, and any wait for `init`. */
  readonly queue = new Histogram();
  readonly coldStart = new Histogram();
  #registry: import('prom-client').Registry | undefined;

  /** Called once the server listens: process uptime is the cold start as the platform sees it. */
  ready(): void {
    this.coldStart.observe(process.uptime());
  }

  /** `handle` is about to be called for a request that arrived at `arrived` (performance.now()): returns `now`. */
  invoked(arrived: number, now = performance.now()): number {
    this.queue.observe((now - arrived) / 1000);
    return now;
  }

  record(seconds: number, failed: boolean): void {
    this.invocations++;
    if (failed) this.errors++;
    this.latency.observe(seconds);
  }

  get contentType(): string {
    return this.registry().contentType;
  }

  async text(): Promise<string> {
    return this.registry().metrics();
  }

  private registry(): import('prom-client').Registry {
    if (this.#registry) return this.#registry;
    const prom = requireLazy('prom-client') as typeof import('prom-client');
    const registry = new prom.Registry();
    registry.setDefaultLabels(defaultLabels());
    prom.collectDefaultMetrics({ register: registry });
    const metric = (name: string, help: string, type: string, values: () => unknown[]) =>
      registry.registerMetric({ name, help, type, get: async () => ({ name, help, type, values: values(), aggregator: 'sum' }) } as never);
    metric('faas_invocations', 'The number of times this function was invoked', 'counter', () => [{ labels: {}, value: this.invocations }]);
    metric('faas_errors', 'The number of function invocation failures', 'counter', () => [{ labels: {}, value: this.errors }]);
    metric('faas_execution_latency', 'The time it took for this function to be invoked and return', 'histogram', () => this.latency.values('faas_execution_latency'));
    metric('faas_queue_latency', 'The time spent in a system queue before the function was invoked', 'histogram', () => this.queue.values('faas_queue_latency'));
    let lastCpu = process.cpuUsage();
    let lastAt = performance.now();
    metric('faas_cpu_utilization', 'The CPU utilization of this function instance', 'gauge', () => {
      // Percent of one core used by this process since the previous scrape.
      const now = performance.now();
      const used = process.cpuUsage(lastCpu);
      const percent = now > lastAt ? ((used.user + used.system) / 1000 / (now - lastAt)) * 100 : 0;
      lastCpu = process.cpuUsage();
      lastAt = now;
      return [{ labels: {}, value: percent }];
    });
    metric('faas_mem_utilization', 'The memory utilization of this function instance', 'gauge', () => [{ labels: {}, value: process.memoryUsage.rss() / 1_048_576 }]);
    const netio = netioRate();
    metric('faas_netio_utilization', 'The network I/O utilization of this function instance', 'gauge', () => [{ labels: {}, value: netio() }]);
    metric('faas_cold_start_latency', 'The time it took for this function to be in the ready state after the container started', 'histogram', () => this.coldStart.values('faas_cold_start_latency'));
    return (this.#registry = registry);
  }
}

/**
 * The identifying labels faas-js-runtime puts on every metric (OpenTelemetry FaaS conventions),
 * written as it writes them: an unset POD_NAME or K_REVISION is the string "undefined", which
 * queries written against it match.
 */
function defaultLabels(): Record<string, string> {
  const env = process.env;
  return {
    faas_name: env.FAAS_NAME || env.K_SERVICE || 'anonymous',
    faas_id: env.FAAS_ID || `${env.POD_NAME}-${randomUUID()}`,
    faas_instance: String(env.FAAS_INSTANCE || env.POD_NAME),
    faas_version: String(env.FAAS_VERSION || env.K_REVISION),
    faas_runtime: env.FAAS_RUNTIME || 'Node.js',
  };
}

/** Bytes received and sent on every interface but loopback, from /proc/net/dev; undefined where there is none. */
function networkBytes(): number | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/net/dev', 'utf8');
  } catch {
    return undefined;
  }
  let total = 0;
  for (const line of text.split('\n').slice(2)) {
    const [name, counters] = line.split(':');
    if (!counters || name!.trim() === 'lo') continue;
    const fields = counters.trim().split(/\s+/);
    total += Number(fields[0]) + Number(fields[8]);
  }
  return total;
}

/** MB (10^6 bytes, as faas-js-runtime counts) per second moved since the previous scrape; 0 on the first. */
function netioRate(): () => number {
  let last = networkBytes();
  let lastAt = performance.now();
  return () => {
    const now = performance.now();
    const bytes = networkBytes();
    const rate = bytes !== undefined && last !== undefined && now > lastAt ? (bytes - last) / 1e6 / ((now - lastAt) / 1000) : 0;
    last = bytes;
    lastAt = now;
    return rate;
  };
}
