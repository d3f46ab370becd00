/**
 * The resource metrics pipeline, as metrics-server runs it: every `resolution` (its
 * --metric-resolution, 15 s by default) each Node's agent is scraped at `/metrics/resource`
 * (the kubelet's cumulative CPU seconds and working sets, node/stats/resource-metrics.ts) over the
 * API server's kubelet client, and the last two scrapes of a node give its and its containers'
 * CPU rate over the window between them. Scraping starts with the first read (a server nobody asks
 * for metrics scrapes nothing) and ends with stop(). A node that cannot be scraped, or answers
 * what does not parse, has no metrics until it can again; a container that restarted between two
 * scrapes (another start time, a counter that went back) has none for that window.
 */
import type { IncomingMessage } from 'node:http';
import type { KubeObject } from '../api/meta.js';
import type { KubeletConnection, ResourceMetricsSource, UsagePoint, PodUsagePoint, NodeUsagePoint } from '../registry/definition.js';
import { parseMetricsText, type Sample } from './prometheus-text.js';

export const DefaultResolutionMs = 15_000;
/** The most a node's answer may hold (a node of thousands of containers is far below it). */
const MaxBodyBytes = 16 << 20;

interface Point {
  /** When it was read at the node (ms). */
  at: number;
  cpuSeconds: number;
  memoryBytes: number;
  startedAt?: number;
}

interface Scrape {
  node?: Point;
  /** By `namespace/pod/container`. */
  containers: Map<string, Point>;
}

export interface ResourceMetricsOptions {
  /** The Nodes to scrape, as stored. */
  nodes(): Promise<readonly KubeObject[]>;
  kubelet: KubeletConnection;
  resolutionMs?: number;
  log?: (entry: Record<string, unknown>) => void;
}

/** A scrape's samples as points (the timestamp of a sample, else the time it was read). */
export function scrapeOf(samples: readonly Sample[], readAt: number): Scrape {
  const scrape: Scrape = { containers: new Map() };
  const container = (s: Sample): Point | undefined => {
    const { namespace, pod, container: name } = s.labels;
    if (!namespace || !pod || !name) return undefined;
    const key = `${namespace}/${pod}/${name}`;
    let p = scrape.containers.get(key);
    if (!p) scrape.containers.set(key, (p = { at: s.timestamp ?? readAt, cpuSeconds: NaN, memoryBytes: NaN }));
    return p;
  };
  for (const s of samples) {
    if (s.name === 'node_cpu_usage_seconds_total') (scrape.node ??= { at: s.timestamp ?? readAt, cpuSeconds: NaN, memoryBytes: NaN }).cpuSeconds = s.value;
    else if (s.name === 'node_memory_working_set_bytes') (scrape.node ??= { at: s.timestamp ?? readAt, cpuSeconds: NaN, memoryBytes: NaN }).memoryBytes = s.value;
    else if (s.name === 'container_cpu_usage_seconds_total') {
      const p = container(s);
      if (p) (p.cpuSeconds = s.value), (p.at = s.timestamp ?? p.at);
    } else if (s.name === 'container_memory_working_set_bytes') {
      const p = container(s);
      if (p) p.memoryBytes = s.value;
    } else if (s.name === 'container_start_time_seconds') {
      const p = container(s);
      if (p) p.startedAt = s.value;
    }
  }
  return scrape;
}

/** The usage over the window between two points of one counter; undefined when they cannot be compared. */
export function rate(prev: Point | undefined, last: Point | undefined): UsagePoint | undefined {
  if (!prev || !last || !(last.at > prev.at)) return undefined;
  if (![prev.cpuSeconds, last.cpuSeconds, last.memoryBytes].every(Number.isFinite) || last.cpuSeconds < prev.cpuSeconds) return undefined;
  if (prev.startedAt !== last.startedAt) return undefined;
  const windowMs = last.at - prev.at;
  return { timestamp: last.at, windowMs, cpuNanoCores: Math.round(((last.cpuSeconds - prev.cpuSeconds) * 1e9 * 1000) / windowMs), memoryBytes: Math.round(last.memoryBytes) };
}

const body = (res: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MaxBodyBytes) res.destroy(new Error('answer too large'));
      else chunks.push(c);
    });
    res.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.once('error', reject);
  });

export class ResourceMetrics implements ResourceMetricsSource {
  private readonly scrapes = new Map<string, { prev?: Scrape; last: Scrape }>();
  private readonly resolutionMs: number;
  private first?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly opts: ResourceMetricsOptions) {
    this.resolutionMs = opts.resolutionMs ?? DefaultResolutionMs;
  }

  /** Scraping from now on; resolves once the first round is in. */
  private started(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return (this.first ??= this.round());
  }

  private async round(): Promise<void> {
    const nodes = await this.opts.nodes().catch(() => []);
    const names = new Set(nodes.map((n) => n.metadata.name ?? ''));
    for (const name of this.scrapes.keys()) if (!names.has(name)) this.scrapes.delete(name);
    await Promise.all(nodes.map((n) => this.scrapeNode(n)));
    if (!this.stopped) (this.timer = setTimeout(() => void this.round(), this.resolutionMs)).unref();
  }

  private async scrapeNode(node: KubeObject): Promise<void> {
    const name = node.metadata.name ?? '';
    // A node that does not answer within a resolution (at least 5 s) is not waited for: the next round asks again.
    const limitMs = Math.max(this.resolutionMs, 5000);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), limitMs)));
    try {
      const asked = this.opts.kubelet.request(node, 'GET', '/metrics/resource');
      // An answer that comes after the limit is dropped.
      asked.then((late) => timer === undefined && late.destroy(), () => undefined);
      const res = await Promise.race([asked, timedOut]);
      const text = await Promise.race([body(res), timedOut]).catch((err: unknown) => (res.destroy(), Promise.reject(err)));
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
      clearTimeout(timer);
      const scrape = scrapeOf(parseMetricsText(text), Date.now());
      this.scrapes.set(name, { prev: this.scrapes.get(name)?.last, last: scrape });
    } catch (err) {
      clearTimeout(timer);
      timer = undefined;
      this.scrapes.delete(name);
      this.opts.log?.({ level: 'debug', msg: 'node not scraped for resource metrics', node: name, error: (err as Error).message });
    }
  }

  async nodes(): Promise<NodeUsagePoint[]> {
    await this.started();
    return [...this.scrapes].flatMap(([name, s]) => {
      const r = rate(s.prev?.node, s.last.node);
      return r ? [{ name, ...r }] : [];
    });
  }

  async pods(): Promise<PodUsagePoint[]> {
    await this.started();
    const pods = new Map<string, PodUsagePoint>();
    for (const s of this.scrapes.values()) {
      for (const [key, last] of s.last.containers) {
        const r = rate(s.prev?.containers.get(key), last);
        if (!r) continue;
        const [namespace, name, container] = key.split('/') as [string, string, string];
        const pod = pods.get(`${namespace}/${name}`) ?? { namespace, name, timestamp: r.timestamp, windowMs: r.windowMs, containers: [] };
        pod.containers.push({ name: container, cpuNanoCores: r.cpuNanoCores, memoryBytes: r.memoryBytes });
        pods.set(`${namespace}/${name}`, pod);
      }
    }
    return [...pods.values()];
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
