/**
 * The ingress gateway (Knative's Kourier/Envoy and activator path, in one HTTP listener): a request
 * is routed by its Host to a Route (hosts.ts), to one of the Route's revisions — chosen per request
 * by the traffic percents, or the tag's revision on a tag host — and proxied straight to one of the
 * revision's ready pods (its Service's Endpoints) by the activator (activator.ts): the pod with the
 * fewest in flight that has room under the revision's containerConcurrency (no limit while the
 * autoscaler has the revision in Serve mode: ../autoscaling/burst-mode.ts); when none has (the
 * revision at zero or every pod full) the request is held, at most 10 s or the revision's timeout,
 * the autoscaler poked at once, then answered 503. Both bodies stream, with `X-Forwarded-For`/
 * `-Host`/`-Proto` and the revision's `timeoutSeconds`. An unknown host is 404 (as Knative's gateway
 * answers); a pod that cannot be reached 502 (a request without a body is first sent again, to
 * another pod), a timeout 504. For a Host no Route answers on, `GET /metrics` is the gateway's
 * Prometheus text (cold starts, cold-starts.ts) and `GET /activator/stats?wait=ms` the load the
 * autoscaler reads. Routes, revisions, Endpoints and DomainMappings (their domain a host of the
 * Route they map) come from informers (the gateway is a client of the API like any other part).
 */
import { Agent, createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Informer, Resources, resourceType, type KubeClient, type KubeObject } from '@func/kube-client';
import { performance } from 'node:perf_hooks';
import { DefaultTimeoutSeconds } from '../kinds.js';
import { Activator, type PodSlot } from './activator.js';
import { gatewayPodCapacity } from '../autoscaling/burst-mode.js';
import { ColdStarts } from './cold-starts.js';
import { prefersAsync, queueAsync } from './async.js';
import { startListener } from '../../serve/listener.js';
import { hostsOf, mappedHost, pickRevision, requestHost, type DomainMapping, type HostEntry, type Route } from './hosts.js';

export interface GatewayOptions {
  kube: KubeClient;
  host: string;
  /** 0 picks a free one. */
  port: number;
  log?: (entry: Record<string, unknown>) => void;
  /** The broker's URL, for requests that prefer `respond-async` (async.ts); undefined: served synchronously. */
  asyncBroker?: () => string | undefined;
}

type Revision = KubeObject & { spec?: { timeoutSeconds?: number; containerConcurrency?: number } };
type Endpoints = KubeObject & { subsets?: { addresses?: { ip?: string }[]; ports?: { port?: number }[] }[] };

/** The longest a request waits for its revision to have a ready endpoint (less when the revision's timeout is shorter). */
const MaxHoldMs = 10_000;
/** A request with no body whose connection to the revision failed is tried this often in all, 100 ms more apart each time. */
const RetryAttempts = 3;
const RetryDelayMs = 100;

const RouteType = resourceType('serving.knative.dev/v1', 'Route', 'routes');
const RevisionType = resourceType('serving.knative.dev/v1', 'Revision', 'revisions');
const DomainMappingType = resourceType('serving.knative.dev/v1beta1', 'DomainMapping', 'domainmappings');

/** Connection-scoped headers a proxy does not pass on (RFC 9110 §7.6.1). */
const HopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

export const passed = (headers: IncomingHttpHeaders): IncomingHttpHeaders => {
  const named = new Set(String(headers.connection ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean));
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !HopByHop.has(k) && !named.has(k)));
};

const answer = (res: ServerResponse, code: number, text: string): void => {
  if (res.headersSent) return void res.destroy();
  res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) }).end(text);
};

/** Requests held per revision at most (beyond: 503). */
const MaxHeldPerRevision = 1000;
/** The longest a stats reader's long poll waits for news. */
const MaxStatsWaitMs = 5_000;
/** Paths the gateway answers itself, for a Host no Route answers on. */
export const GatewayPaths = { metrics: '/metrics', stats: '/activator/stats' } as const;

export class Gateway {
  private readonly routes: Informer<Route>;
  private readonly mappings: Informer<DomainMapping>;
  private readonly revisions: Informer<Revision>;
  private readonly endpoints: Informer<Endpoints>;
  private hosts = new Map<string, HostEntry>();
  readonly activator = new Activator({ maxHeld: MaxHeldPerRevision });
  readonly coldStarts = new ColdStarts();
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly agent = new Agent({ keepAlive: true });
  url = '';

  constructor(private readonly opts: GatewayOptions) {
    const onError = (err: unknown) => opts.log?.({ level: 'debug', msg: 'gateway watch', error: (err as Error)?.message });
    this.routes = new Informer<Route>(opts.kube, RouteType, { onError });
    this.mappings = new Informer<DomainMapping>(opts.kube, DomainMappingType, { onError });
    this.revisions = new Informer<Revision>(opts.kube, RevisionType, { onError });
    this.endpoints = new Informer<Endpoints>(opts.kube, Resources.endpoints, { onError });
    const rebuild = () => this.rebuild();
    const pods = (o: KubeObject) => this.refreshPods(o.metadata?.namespace ?? '', o.metadata?.name ?? '');
    this.endpoints.on('add', pods).on('update', pods).on('delete', (o: KubeObject) => this.activator.forget(`${o.metadata?.namespace}/${o.metadata?.name}`));
    this.revisions.on('add', pods).on('update', pods);
    for (const i of [this.routes, this.mappings]) (i as Informer).on('add', rebuild).on('update', rebuild).on('delete', rebuild);
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.on('connection', (s) => (this.sockets.add(s), s.once('close', () => this.sockets.delete(s))));
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.host, () => (this.server.off('error', reject), resolve()));
    });
    const { port } = this.server.address() as AddressInfo;
    const host = this.opts.host === '0.0.0.0' ? '127.0.0.1' : this.opts.host.includes(':') ? `[${this.opts.host}]` : this.opts.host;
    this.url = `http://${host}:${port}`;
    for (const i of this.informers()) i.start();
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const s of this.sockets) s.destroy();
    });
    this.agent.destroy();
    await Promise.all(this.informers().map((i) => i.stop()));
  }

  private informers(): Informer<any>[] {
    return [this.routes, this.mappings, this.revisions, this.endpoints];
  }

  private rebuild(): void {
    const hosts = new Map<string, HostEntry>();
    for (const r of this.routes.list()) for (const [h, e] of hostsOf(r)) hosts.set(h, e);
    // A Route's own hosts win over a mapping of the same name.
    for (const dm of this.mappings.list()) {
      const mapped = mappedHost(dm);
      if (mapped && !hosts.has(mapped[0])) hosts.set(...mapped);
    }
    this.hosts = hosts;
  }

  /** A revision's ready pods, from the Endpoints of its Service (same name), to the activator. */
  private refreshPods(ns: string, name: string): void {
    const rev = this.revisions.get(name, ns);
    if (!rev) return;
    const ep = this.endpoints.get(name, ns);
    const addresses = (ep?.subsets ?? []).flatMap((s) => {
      const port = s.ports?.[0]?.port;
      return port === undefined ? [] : (s.addresses ?? []).flatMap((a) => (a.ip ? [{ ip: a.ip, port }] : []));
    });
    this.activator.setPods(`${ns}/${name}`, addresses, gatewayPodCapacity(rev.metadata?.annotations, rev.spec?.containerConcurrency));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const arrived = performance.now();
    const host = requestHost(req.headers.host);
    const entry = host ? this.hosts.get(host) : undefined;
    const route = entry && this.routes.get(entry.route, entry.namespace);
    if (!entry || !route) {
      if (req.method === 'GET' && this.own(req, res)) return;
      return answer(res, 404, `no Route answers for host ${JSON.stringify(host ?? '')}\n`);
    }
    const brokerUrl = prefersAsync(req.headers.prefer) ? this.opts.asyncBroker?.() : undefined;
    if (brokerUrl) return queueAsync(req, res, { brokerUrl, namespace: entry.namespace, name: entry.route, headers: passed(req.headers), agent: this.agent });
    const revision = pickRevision(route, entry.tag, Math.random());
    const ns = entry.namespace;
    if (!revision) return answer(res, 503, `no ready endpoint for Route ${JSON.stringify(entry.route)}\n`);
    const timeoutMs = (this.revisions.get(revision, ns)?.spec?.timeoutSeconds ?? DefaultTimeoutSeconds) * 1000;
    const key = `${ns}/${revision}`;
    const holdMs = Math.min(timeoutMs, MaxHoldMs);
    const cancelled = (stop: () => void) => {
      res.once('close', stop);
      return () => res.off('close', stop);
    };
    void this.activator.acquire(key, holdMs, cancelled).then((got) => {
      if (got === 'gone') return;
      if (got === 'full') return answer(res, 503, `too many requests waiting for revision ${JSON.stringify(revision)}\n`);
      if (got === 'timeout') return answer(res, 503, `no ready endpoint for revision ${JSON.stringify(revision)}\n`);
      res.once('close', () => {
        this.coldStarts.answered(ns, revision);
        if (got.cold && res.writableFinished) this.coldStarts.observe(ns, revision, (performance.now() - arrived) / 1000);
      });
      this.forward(req, res, { key, pod: got.pod, timeoutMs, holdMs, originalHost: req.headers.host!, cancelled });
    });
  }

  /** The gateway's own answers: its metrics, and the load the autoscaler reads (a long poll: `?wait=ms` answers at the first poke, or then). */
  private own(req: IncomingMessage, res: ServerResponse): boolean {
    const url = new URL(req.url ?? '/', 'http://gateway');
    if (url.pathname === GatewayPaths.metrics) {
      const text = this.coldStarts.text();
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(text) }).end(text);
      return true;
    }
    if (url.pathname !== GatewayPaths.stats) return false;
    const wait = url.searchParams.get('wait');
    const waitMs = wait === null ? 0 : Number(wait);
    if (!Number.isInteger(waitMs) || waitMs < 0) {
      answer(res, 400, `wait must be a whole number of milliseconds\n`);
      return true;
    }
    const send = () => {
      const body = JSON.stringify(this.activator.report());
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    };
    if (this.activator.hasNews || waitMs === 0) {
      send();
      return true;
    }
    const done = () => {
      clearTimeout(timer);
      unsubscribe();
      res.off('close', done);
      if (!res.destroyed && !res.writableEnded) send();
    };
    const timer = setTimeout(done, Math.min(waitMs, MaxStatsWaitMs));
    const unsubscribe = this.activator.onPoke(done);
    res.once('close', done);
    return true;
  }

  private forward(req: IncomingMessage, res: ServerResponse, to: Target, attempt = 1): void {
    const remote = req.socket.remoteAddress ?? '';
    const prior = req.headers['x-forwarded-for'];
    const headers: IncomingHttpHeaders = {
      ...passed(req.headers),
      'x-forwarded-for': prior ? `${String(prior)}, ${remote}` : remote,
      'x-forwarded-host': String(req.headers['x-forwarded-host'] ?? to.originalHost),
      'x-forwarded-proto': String(req.headers['x-forwarded-proto'] ?? 'http'),
    };
    let released = false;
    const release = () => {
      if (!released) this.activator.release(to.key, to.pod);
      released = true;
    };
    const upstream = request({ host: to.pod.ip, port: to.pod.port, method: req.method, path: req.url, headers, agent: this.agent });
    const timer = setTimeout(() => {
      upstream.destroy();
      answer(res, 504, 'request timeout\n');
    }, to.timeoutMs);
    timer.unref();
    upstream.on('response', (up) => {
      res.writeHead(up.statusCode ?? 502, up.statusMessage, passed(up.headers));
      up.pipe(res);
      up.on('end', () => (clearTimeout(timer), release()));
      up.on('error', () => res.destroy());
    });
    // A request with no body can be sent again, to another pod: this one may be going away (scaled down, its listener closed).
    const bodiless = !req.headers['transfer-encoding'] && (req.headers['content-length'] ?? '0') === '0';
    upstream.on('error', () => {
      clearTimeout(timer);
      release();
      if (res.writableEnded) return;
      if (res.headersSent || res.destroyed) return void res.destroy();
      if (bodiless && attempt < RetryAttempts) {
        return void setTimeout(() => {
          void this.activator.acquire(to.key, to.holdMs, to.cancelled).then((got) => {
            if (typeof got !== 'string') return this.forward(req, res, { ...to, pod: got.pod }, attempt + 1);
            if (got !== 'gone') answer(res, 502, 'the revision could not be reached\n');
          });
        }, RetryDelayMs * attempt).unref();
      }
      answer(res, 502, 'the revision could not be reached\n');
    });
    // The client went away: so does the upstream request.
    res.on('close', () => {
      clearTimeout(timer);
      release();
      if (!res.writableFinished) upstream.destroy();
    });
    if (bodiless) upstream.end();
    else req.pipe(upstream);
  }
}

interface Target { key: string; pod: PodSlot; timeoutMs: number; holdMs: number; originalHost: string; cancelled: (stop: () => void) => () => void }

/**
 * A started gateway (what `serve`'s gateway part and `cluster-api gateway` run); a failed start
 * releases what it opened. `portFlag` names the flag that sets the port, for the error.
 */
export const startGateway = (opts: GatewayOptions, portFlag = '--gateway-port'): Promise<Gateway> =>
  startListener(new Gateway(opts), { what: 'the gateway', host: opts.host, port: opts.port, portFlag });
