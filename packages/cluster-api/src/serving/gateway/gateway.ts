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
 * While a request is held, the revision's pods listed not ready are probed by the gateway itself
 * (pod-probe.ts) and take requests at their first success.
 * One port takes HTTP/1.1 and HTTP/2 with prior knowledge (h2c.ts tells them apart by a
 * connection's first bytes; an HTTP/2 request is routed as any other, and reaches an `h2c`-named
 * port over HTTP/2); an upgrade (a websocket) is routed the same and piped to the pod (upgrade.ts).
 */
import { Agent, createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttp2Server, type Http2Server } from 'node:http2';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import type { Duplex, Writable } from 'node:stream';
import { Informer, Resources, resourceType, type KubeClient, type KubeObject } from '@func/kube-client';
import { performance } from 'node:perf_hooks';
import { DefaultTimeoutSeconds } from '../kinds.js';
import { Activator, type PodSlot } from './activator.js';
import { PodProber, type PodAddress } from './pod-probe.js';
import type { Container } from '../../node/types.js';
import { readinessProbe, userPort } from '../../controllers/serving-revision/revision.js';
import { gatewayPodCapacity } from '../autoscaling/burst-mode.js';
import { ColdStarts } from './cold-starts.js';
import { prefersAsync, queueAsync } from './async.js';
import type { InvocationQueue } from '../../broker/invocation/queue.js';
import { startListener } from '../../serve/listener.js';
import { H2cPods, H2cResponse, sniff, SniffTimeoutMs } from './h2c.js';
import { enforceHeadersDeadline } from './headers-deadline.js';
import { answerOnSocket, forwardUpgrade } from './upgrade.js';
import { HopByHop, listTokens } from './http1-head.js';
import { forwardedHeaders as forwarded } from './forwarded.js';
import { Http1Connection, PodConnections, type Http1Gateway, type Http1Target } from './http1-forward.js';
import { hostsOf, mappedHost, pickRevision, requestHost, type DomainMapping, type HostEntry, type Route } from './hosts.js';

export interface GatewayOptions {
  kube: KubeClient;
  host: string;
  /** 0 picks a free one. */
  port: number;
  log?: (entry: Record<string, unknown>) => void;
  /** The broker's invocation queue, for requests that prefer `respond-async` (async.ts); undefined: served synchronously. */
  asyncQueue?: () => InvocationQueue | undefined;
  /** How long an HTTP/1.1 connection may take to send a request head (headers-deadline.ts); Node.js's headersTimeout by default. */
  headersTimeoutMs?: number;
}

type Revision = KubeObject & { spec?: { timeoutSeconds?: number; containerConcurrency?: number; containers?: Container[] } };
type Endpoints = KubeObject & { subsets?: { addresses?: { ip?: string }[]; notReadyAddresses?: { ip?: string }[]; ports?: { port?: number }[] }[] };

/** The longest a request waits for its revision to have a ready endpoint (less when the revision's timeout is shorter). */
const MaxHoldMs = 10_000;
/** A request with no body whose connection to the revision failed is tried this often in all, 100 ms more apart each time. */
const RetryAttempts = 3;
const RetryDelayMs = 100;

const RouteType = resourceType('serving.knative.dev/v1', 'Route', 'routes');
const RevisionType = resourceType('serving.knative.dev/v1', 'Revision', 'revisions');
const DomainMappingType = resourceType('serving.knative.dev/v1beta1', 'DomainMapping', 'domainmappings');

/** The headers a proxy passes on: not the hop-by-hop ones, nor HTTP/2's pseudo-headers (`:path`…). */
export const passed = (headers: IncomingHttpHeaders): IncomingHttpHeaders => {
  const named = new Set(listTokens(String(headers.connection ?? '')));
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !HopByHop.has(k) && !named.has(k) && !k.startsWith(':')));
};

/** The host a request names: its Host header, or HTTP/2's `:authority`. */
const authority = (headers: IncomingHttpHeaders): string | undefined => headers.host ?? (headers[':authority'] as string | undefined);

/** The headers a request goes to its pod with: the passed ones, its host, and `X-Forwarded-For`/`-Host`/`-Proto`. */
const forwardedHeaders = (req: IncomingMessage, originalHost: string): IncomingHttpHeaders => {
  const h = req.headers;
  const prior = (v: string | string[] | undefined) => (v === undefined ? undefined : String(v));
  return {
    ...passed(h),
    host: originalHost,
    ...forwarded(req.socket.remoteAddress ?? '', { for: prior(h['x-forwarded-for']) || undefined, host: prior(h['x-forwarded-host']), proto: prior(h['x-forwarded-proto']) }, originalHost),
  };
};

/** The revision's container port is named `h2c`: its pods are spoken to over HTTP/2 (Knative's rule). */
const speaksH2c = (rev: Revision | undefined): boolean => rev?.spec?.containers?.[0]?.ports?.[0]?.name === 'h2c';

/** An HTTP/2 request or response (the compatibility API's, which reads as HTTP/1.1's) carries its stream. */
const overHttp2 = (o: IncomingMessage | ServerResponse): o is (IncomingMessage | ServerResponse) & { stream: { endAfterHeaders: boolean } } => 'stream' in o;

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
  private readonly prober = new PodProber({ healthy: (key) => this.refreshKey(key) });
  /** The listener: each connection goes to `http1` or `http2` by its first bytes (h2c.ts). */
  private readonly listener: NetServer;
  private readonly http1: Server;
  private readonly http2: Http2Server;
  private readonly sockets = new Set<Socket>();
  private readonly agent = new Agent({ keepAlive: true });
  private readonly h2cPods = new H2cPods();
  /** What the HTTP/1.1 forwarding path (http1-forward.ts) asks of the gateway. */
  private readonly forwarding: Http1Gateway;
  url = '';

  constructor(private readonly opts: GatewayOptions) {
    const onError = (err: unknown) => opts.log?.({ level: 'debug', msg: 'gateway watch', error: (err as Error)?.message });
    this.routes = new Informer<Route>(opts.kube, RouteType, { onError });
    this.mappings = new Informer<DomainMapping>(opts.kube, DomainMappingType, { onError });
    this.revisions = new Informer<Revision>(opts.kube, RevisionType, { onError });
    this.endpoints = new Informer<Endpoints>(opts.kube, Resources.endpoints, { onError });
    const rebuild = () => this.rebuild();
    const pods = (o: KubeObject) => this.refreshPods(o.metadata?.namespace ?? '', o.metadata?.name ?? '');
    this.endpoints.on('add', pods).on('update', pods).on('delete', (o: KubeObject) => {
      const key = `${o.metadata?.namespace}/${o.metadata?.name}`;
      this.prober.forget(key);
      this.activator.forget(key);
    });
    this.activator.onPoke((key) => this.refreshKey(key));
    this.revisions.on('add', pods).on('update', pods);
    for (const i of [this.routes, this.mappings]) (i as Informer).on('add', rebuild).on('update', rebuild).on('delete', rebuild);
    this.http1 = createServer((req, res) => this.handle(req, res));
    this.http1.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
    enforceHeadersDeadline(this.http1, opts.headersTimeoutMs ?? SniffTimeoutMs);
    this.forwarding = {
      route: (head) => this.fastRoute(head.host),
      activator: this.activator,
      coldStarts: this.coldStarts,
      pods: new PodConnections(),
      headersTimeoutMs: opts.headersTimeoutMs ?? SniffTimeoutMs,
      handOver: (socket) => this.http1.emit('connection', socket),
    };
    // The compatibility API's request and response read as HTTP/1.1's, for what the gateway uses of them.
    this.http2 = createHttp2Server((req, res) => this.handle(req as unknown as IncomingMessage, res as unknown as ServerResponse));
    this.listener = createNetServer((s) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
      s.on('error', () => s.destroy());
      sniff(s, (c) => new Http1Connection(c, this.forwarding), (c) => this.http2.emit('connection', c));
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.listener.once('error', reject);
      this.listener.listen(this.opts.port, this.opts.host, () => (this.listener.off('error', reject), resolve()));
    });
    const { port } = this.listener.address() as AddressInfo;
    const host = this.opts.host === '0.0.0.0' ? '127.0.0.1' : this.opts.host.includes(':') ? `[${this.opts.host}]` : this.opts.host;
    this.url = `http://${host}:${port}`;
    for (const i of this.informers()) i.start();
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.listener.close(() => resolve());
      for (const s of this.sockets) s.destroy();
    });
    this.agent.destroy();
    this.forwarding.pods.close();
    this.prober.stop();
    this.h2cPods.close();
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

  /**
   * A revision's ready pods, from the Endpoints of its Service (same name), to the activator: those
   * listed ready, and those listed not ready that answered the gateway's own probe (pod-probe.ts).
   */
  private refreshPods(ns: string, name: string): void {
    const rev = this.revisions.get(name, ns);
    if (!rev) return;
    const ep = this.endpoints.get(name, ns);
    const listed = (which: 'addresses' | 'notReadyAddresses'): PodAddress[] => (ep?.subsets ?? []).flatMap((s) => {
      const port = s.ports?.[0]?.port;
      return port === undefined ? [] : (s[which] ?? []).flatMap((a) => (a.ip ? [{ ip: a.ip, port }] : []));
    });
    const key = `${ns}/${name}`;
    const c = rev.spec?.containers?.[0];
    const port = userPort(rev as never);
    const probe = c && { probe: readinessProbe(rev as never), container: { ...c, ports: [{ name: 'user-port', containerPort: port }] }, port };
    const probed = this.prober.update(key, listed('notReadyAddresses'), probe, this.activator.waiting(key) > 0);
    this.activator.setPods(key, [...listed('addresses'), ...probed], gatewayPodCapacity(rev.metadata?.annotations, rev.spec?.containerConcurrency));
  }

  private refreshKey(key: string): void {
    const at = key.indexOf('/');
    this.refreshPods(key.slice(0, at), key.slice(at + 1));
  }

  /** The Route (and tag) a request's host names; undefined for a host no Route answers on. */
  private entryOf(hostHeader: string | undefined): { host: string; entry: HostEntry; route: Route } | { host: string; entry?: undefined; route?: undefined } {
    const host = requestHost(hostHeader) ?? '';
    const entry = host ? this.hosts.get(host) : undefined;
    const route = entry && this.routes.get(entry.route, entry.namespace);
    return entry && route ? { host, entry, route } : { host };
  }

  /** The revision one request to `route` goes to (the split drawn for it), with its timeouts; undefined when the Route has none. */
  private revisionFor(entry: HostEntry, route: Route): Omit<Target, 'pod' | 'cancelled' | 'originalHost'> & { revision: string; ns: string } | undefined {
    const revision = pickRevision(route, entry.tag, Math.random());
    if (!revision) return undefined;
    const ns = entry.namespace;
    const rev = this.revisions.get(revision, ns);
    const timeoutMs = (rev?.spec?.timeoutSeconds ?? DefaultTimeoutSeconds) * 1000;
    return { revision, ns, key: `${ns}/${revision}`, timeoutMs, holdMs: Math.min(timeoutMs, MaxHoldMs), h2c: speaksH2c(rev) };
  }

  /**
   * Where a request for `hostHeader` goes on the HTTP/1.1 forwarding path: undefined for a host no
   * Route answers on (the gateway's own paths, 404) and for a Route with a revision spoken to over
   * h2c — node:http's path serves those (deciding by the Route, not the revision drawn, keeps the split).
   */
  private fastRoute(hostHeader: string): Http1Target | { refused: string } | undefined {
    const { entry, route } = this.entryOf(hostHeader);
    if (!entry) return undefined;
    for (const t of route.status?.traffic ?? []) if (t.revisionName && speaksH2c(this.revisions.get(t.revisionName, entry.namespace))) return undefined;
    return this.revisionFor(entry, route) ?? { refused: `no ready endpoint for Route ${JSON.stringify(entry.route)}\n` };
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const arrived = performance.now();
    const hostHeader = authority(req.headers);
    const { host, entry, route } = this.entryOf(hostHeader);
    if (!entry) {
      if (req.method === 'GET' && this.own(req, res)) return;
      return answer(res, 404, `no Route answers for host ${JSON.stringify(host)}\n`);
    }
    const queue = prefersAsync(req.headers.prefer) ? this.opts.asyncQueue?.() : undefined;
    if (queue) return queueAsync(req, res, queue, { namespace: entry.namespace, name: entry.route, headers: { ...passed(req.headers), host: hostHeader } });
    const to = this.revisionFor(entry, route);
    if (!to) return answer(res, 503, `no ready endpoint for Route ${JSON.stringify(entry.route)}\n`);
    const { revision, ns } = to;
    const cancelled = (stop: () => void) => {
      res.once('close', stop);
      return () => res.off('close', stop);
    };
    void this.activator.acquire(to.key, to.holdMs, cancelled).then((got) => {
      if (got === 'gone') return;
      if (got === 'full') return answer(res, 503, `too many requests waiting for revision ${JSON.stringify(revision)}\n`);
      if (got === 'timeout') return answer(res, 503, `no ready endpoint for revision ${JSON.stringify(revision)}\n`);
      res.once('close', () => {
        this.coldStarts.answered(ns, revision);
        if (got.cold && res.writableFinished) this.coldStarts.observe(ns, revision, (performance.now() - arrived) / 1000);
      });
      this.forward(req, res, { ...to, pod: got.pod, originalHost: hostHeader!, cancelled });
    });
  }

  /** An HTTP/1.1 request asking for an upgrade (a websocket): routed as any request, then forwarded and piped (upgrade.ts). */
  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const { host, entry, route } = this.entryOf(req.headers.host);
    if (!entry) return answerOnSocket(socket, 404, `no Route answers for host ${JSON.stringify(host)}\n`);
    const to = this.revisionFor(entry, route);
    if (!to) return answerOnSocket(socket, 503, `no ready endpoint for Route ${JSON.stringify(entry.route)}\n`);
    const cancelled = (stop: () => void) => {
      socket.once('close', stop);
      return () => socket.off('close', stop);
    };
    void this.activator.acquire(to.key, to.holdMs, cancelled).then((got) => {
      if (got === 'gone') return;
      if (typeof got === 'string') return answerOnSocket(socket, 503, `no ready endpoint for revision ${JSON.stringify(to.revision)}\n`);
      const done = () => {
        this.activator.release(to.key, got.pod);
        this.coldStarts.answered(to.ns, to.revision);
      };
      forwardUpgrade(req, socket, head, { ip: got.pod.ip, port: got.pod.port, headers: forwardedHeaders(req, req.headers.host!), timeoutMs: to.timeoutMs }, done);
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
    const headers = forwardedHeaders(req, to.originalHost);
    let released = false;
    const release = () => {
      if (!released) this.activator.release(to.key, to.pod);
      released = true;
    };
    const { ip, port } = to.pod;
    const upstream: Writable = to.h2c
      ? this.h2cPods.request({ ip, port, method: req.method ?? 'GET', path: req.url ?? '/', authority: to.originalHost, headers: req.headers.te === 'trailers' ? { ...headers, te: 'trailers' } : headers })
      : request({ host: ip, port, method: req.method, path: req.url, headers, agent: this.agent });
    const timer = setTimeout(() => {
      upstream.destroy();
      answer(res, 504, 'request timeout\n');
    }, to.timeoutMs);
    timer.unref();
    upstream.on(to.h2c ? H2cResponse : 'response', (up: IncomingMessage) => {
      // HTTP/2 has no reason phrase.
      if (overHttp2(res)) res.writeHead(up.statusCode ?? 502, passed(up.headers));
      else res.writeHead(up.statusCode ?? 502, up.statusMessage, passed(up.headers));
      if (to.h2c && overHttp2(res)) up.on('trailers', (trailers: IncomingHttpHeaders) => res.addTrailers(passed(trailers) as Record<string, string>));
      up.pipe(res);
      up.on('end', () => (clearTimeout(timer), release()));
      up.on('error', () => res.destroy());
    });
    // A request with no body can be sent again, to another pod: this one may be going away (scaled down, its listener closed).
    const bodiless = overHttp2(req) ? req.stream.endAfterHeaders : !req.headers['transfer-encoding'] && (req.headers['content-length'] ?? '0') === '0';
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

interface Target {
  key: string;
  pod: PodSlot;
  timeoutMs: number;
  holdMs: number;
  originalHost: string;
  /** The revision's container port is named `h2c`: the pod is spoken to over HTTP/2 (Knative's rule). */
  h2c: boolean;
  cancelled: (stop: () => void) => () => void;
}

/**
 * A started gateway (what `serve`'s gateway part and `cluster-api gateway` run); a failed start
 * releases what it opened. `portFlag` names the flag that sets the port, for the error.
 */
export const startGateway = (opts: GatewayOptions, portFlag = '--gateway-port'): Promise<Gateway> =>
  startListener(new Gateway(opts), { what: 'the gateway', host: opts.host, port: opts.port, portFlag });
