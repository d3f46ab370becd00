/**
 * The API server's own metrics, named and labelled as kube-apiserver's (k8s.io/apiserver endpoints
 * metrics): requests by verb, group, version, resource, subresource, scope and code; their latency;
 * requests in flight by kind; open long-running requests and watchers; stored objects per resource.
 *
 * Per request: one string key built from the labels, one map lookup to series found before, one
 * close listener, and at the end one counter increment and one histogram observation.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { listPrefix } from '../registry/generic/meta.js';
import type { Registry } from '../registry/rest.js';
import type { Storage } from '../storage/interface.js';
import { CounterSeries, GaugeSeries, HistogramSeries, type Counter, type MetricsRegistry } from './prometheus.js';
import type { RequestInfo } from './request-info.js';

/** kube-apiserver's buckets for apiserver_request_duration_seconds. */
const DurationBuckets = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

/** Subresources that hold a connection open (LongRunningRequestCheck: watch, proxy, and these). */
const longRunningSubresources = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);
const connectSubresources = new Set(['attach', 'exec', 'proxy', 'portforward']);

/** Non-resource paths reported by name (kube-apiserver reports them in `subresource`); any other path counts as "". */
const reportedPaths = new Set(['/healthz', '/livez', '/readyz', '/metrics', '/version', '/openapi/v2', '/openapi/v3']);

/** In the order Prometheus' Go client prints them (sorted), as kube-apiserver's /metrics reads. */
const Labels = ['component', 'dry_run', 'group', 'resource', 'scope', 'subresource', 'verb', 'version'] as const;
const LongRunningLabels = ['component', 'group', 'resource', 'scope', 'subresource', 'verb', 'version'] as const;

/** The series of one label combination; the counter's per code, found by number (no string per request). */
interface Series {
  labels: string[];
  duration: HistogramSeries;
  codes: Map<number, CounterSeries>;
  longRunning: GaugeSeries | undefined;
}

/** CleanVerb: the HTTP verb as kube-apiserver reports it. */
function reportedVerb(info: RequestInfo, method: string, req: IncomingMessage): string {
  if (info.type !== 'resource') return method === 'HEAD' ? 'GET' : method;
  if (info.verb === 'list') return 'LIST';
  if (info.verb === 'watch') return 'WATCH';
  if (info.verb === 'deletecollection') return 'DELETECOLLECTION';
  if (info.verb === 'proxy' || (info.subresource && connectSubresources.has(info.subresource))) return 'CONNECT';
  if (method === 'PATCH' && req.headers['content-type'] === 'application/apply-patch+yaml') return 'APPLY';
  return method;
}

/** CleanScope. */
function reportedScope(info: RequestInfo): string {
  if (info.type !== 'resource') return '';
  if (info.name || info.verb === 'create') return 'resource';
  return info.namespace ? 'namespace' : 'cluster';
}

const isLongRunning = (info: RequestInfo): boolean =>
  info.type === 'resource' && (info.verb === 'watch' || info.verb === 'proxy' || (info.subresource !== undefined && longRunningSubresources.has(info.subresource)));

export class RequestMetrics {
  private readonly series = new Map<string, Series>();
  private readonly requests: Counter;
  private readonly durations;
  private readonly longRunning;
  private readonly readOnly: GaugeSeries;
  private readonly mutating: GaugeSeries;
  /** The open watches, for apiserver_registered_watchers. */
  private readonly watches = new Map<ServerResponse, RequestInfo>();

  constructor(
    registry: MetricsRegistry,
    private readonly served: Registry,
    storage?: Pick<Storage, 'count'>,
  ) {
    this.requests = registry.counter('apiserver_request_total', 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.', ['code', ...Labels]);
    this.durations = registry.histogram('apiserver_request_duration_seconds', 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.', Labels, DurationBuckets);
    const inflight = registry.gauge('apiserver_current_inflight_requests', 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.', ['request_kind']);
    this.readOnly = inflight.labels('readOnly');
    this.mutating = inflight.labels('mutating');
    this.longRunning = registry.gauge('apiserver_longrunning_requests', 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.', LongRunningLabels);
    registry.gauge('apiserver_registered_watchers', 'Number of currently registered watchers for a given resources', ['group', 'kind', 'version'], () => this.watchers(served));
    if (storage) registry.gauge('apiserver_storage_objects', 'Number of stored objects at the time of last check split by kind.', ['resource'], () => storedObjects(served, storage));
  }

  /** A request whose path is parsed: counted once its response closes (answered, failed or cut). */
  begin(req: IncomingMessage, res: ServerResponse, info: RequestInfo, method: string, query: URLSearchParams): void {
    const series = this.seriesOf(info, method, req, query);
    const long = isLongRunning(info);
    const inflight = long ? undefined : method === 'GET' || method === 'HEAD' || method === 'OPTIONS' ? this.readOnly : this.mutating;
    inflight?.inc();
    series.longRunning?.inc();
    if (info.type === 'resource' && info.verb === 'watch') this.watches.set(res, info);
    const start = performance.now();
    // One closure per request: cheaper than keeping the request's record in a WeakMap (ephemeron upkeep).
    res.on('close', () => this.closed(res, series, start, inflight));
  }

  private closed(res: ServerResponse, series: Series, start: number, inflight: GaugeSeries | undefined): void {
    if (series.longRunning) this.watches.delete(res);
    inflight?.dec();
    series.longRunning?.dec();
    series.duration.observe((performance.now() - start) / 1000);
    const code = res.statusCode;
    let counter = series.codes.get(code);
    if (!counter) series.codes.set(code, (counter = this.requests.labels(String(code), ...series.labels)));
    counter.inc();
  }

  /**
   * Label values come from what the server serves, never from the path as sent: an unknown resource or
   * subresource counts with empty labels, so no client can grow the series without bound.
   */
  private seriesOf(info: RequestInfo, method: string, req: IncomingMessage, query: URLSearchParams): Series {
    const verb = reportedVerb(info, method, req);
    const dryRun = query.has('dryRun') ? 'All' : '';
    const def = info.type === 'resource' ? this.served.find(info.group, info.version, info.plural)?.definition : undefined;
    const group = def ? def.group : '';
    const version = def ? def.version : '';
    const plural = def ? def.plural : '';
    const sub = info.type === 'resource' ? info.subresource : undefined;
    const subresource = def ? (sub && def.subresources?.[sub] ? sub : '') : info.type === 'nonResource' && reportedPaths.has(info.path) ? info.path : '';
    const scope = def ? reportedScope(info) : '';
    const key = `${verb} ${dryRun} ${group} ${version} ${plural} ${subresource} ${scope}`;
    let found = this.series.get(key);
    if (!found) {
      const labels = ['apiserver', dryRun, group, plural, scope, subresource, verb, version];
      const longRunning = isLongRunning(info) ? this.longRunning.labels('apiserver', group, plural, scope, subresource, verb, version) : undefined;
      this.series.set(key, (found = { labels, duration: this.durations.labels(...labels), codes: new Map(), longRunning }));
    }
    return found;
  }

  private *watchers(served: Registry): Iterable<[string[], number]> {
    const counts = new Map<string, { labels: string[]; n: number }>();
    for (const info of this.watches.values()) {
      if (info.type !== 'resource') continue;
      const kind = served.find(info.group, info.version, info.plural)?.definition.kind ?? '';
      const key = `${info.group} ${info.version} ${kind}`;
      const entry = counts.get(key) ?? counts.set(key, { labels: [info.group, kind, info.version], n: 0 }).get(key)!;
      entry.n++;
    }
    for (const { labels, n } of counts.values()) yield [labels, n];
  }
}

/** Objects per stored resource (`pods`, `deployments.apps`), counted when scraped; one row per storage version. */
async function storedObjects(served: Registry, storage: Pick<Storage, 'count'>): Promise<Iterable<[string[], number]>> {
  const stored = served.definitions().filter((d) => !d.storedAs && d.verbs.includes('list') && d.verbs.includes('create'));
  const unique = new Map(stored.map((d) => [d.group ? `${d.plural}.${d.group}` : d.plural, d]));
  const counted = await Promise.all([...unique].map(async ([resource, def]) => [[resource], await storage.count(listPrefix(def))] as [string[], number]));
  return counted;
}
