/**
 * The ingress gateway (Knative's Kourier/Envoy and activator path, in one HTTP listener): a request
 * is routed by its Host to a Route (hosts.ts), to one of the Route's revisions — chosen per request
 * by the traffic percents, or the tag's revision on a tag host — and proxied to the revision's
 * Service (its loopback clusterIP, port 80, which the node's service proxy forwards to a ready
 * pod), streaming both bodies, with `X-Forwarded-For`/`-Host`/`-Proto` and the revision's
 * `timeoutSeconds`. An unknown host is 404 (as Knative's gateway answers); a request for a revision
 * with no ready endpoint is held until it has one (as Knative's activator holds it), at most 10 s or
 * the revision's timeout, then answered 503; a pod that cannot be reached 502, a timeout 504. Routes, revisions, their Services
 * and Endpoints, and DomainMappings (their domain a host of the Route they map), come from informers (the gateway is a client of the API like any other part).
 */
import { Agent, createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Informer, Resources, resourceType, type KubeClient, type KubeObject } from '@func/kube-client';
import { DefaultTimeoutSeconds, Label } from '../kinds.js';
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

type Revision = KubeObject & { spec?: { timeoutSeconds?: number } };
type Service = KubeObject & { spec?: { clusterIP?: string; ports?: { port: number }[] } };
type Endpoints = KubeObject & { subsets?: { addresses?: { ip?: string }[] }[] };

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

export class Gateway {
  private readonly routes: Informer<Route>;
  private readonly mappings: Informer<DomainMapping>;
  private readonly revisions: Informer<Revision>;
  private readonly services: Informer<Service>;
  private readonly endpoints: Informer<Endpoints>;
  private hosts = new Map<string, HostEntry>();
  /** Requests held for a revision with no ready endpoint, woken by every change of Endpoints. */
  private readonly held = new Set<() => void>();
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly agent = new Agent({ keepAlive: true });
  url = '';

  constructor(private readonly opts: GatewayOptions) {
    const onError = (err: unknown) => opts.log?.({ level: 'debug', msg: 'gateway watch', error: (err as Error)?.message });
    this.routes = new Informer<Route>(opts.kube, RouteType, { onError });
    this.mappings = new Informer<DomainMapping>(opts.kube, DomainMappingType, { onError });
    this.revisions = new Informer<Revision>(opts.kube, RevisionType, { onError });
    this.services = new Informer<Service>(opts.kube, Resources.services, { labelSelector: Label.revision, onError });
    this.endpoints = new Informer<Endpoints>(opts.kube, Resources.endpoints, { onError });
    const rebuild = () => this.rebuild();
    const wake = () => [...this.held].forEach((w) => w());
    this.endpoints.on('add', wake).on('update', wake);
    this.services.on('add', wake).on('update', wake);
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
    return [this.routes, this.mappings, this.revisions, this.services, this.endpoints];
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

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const host = requestHost(req.headers.host);
    const entry = host ? this.hosts.get(host) : undefined;
    const route = entry && this.routes.get(entry.route, entry.namespace);
    if (!entry || !route) return answer(res, 404, `no Route answers for host ${JSON.stringify(host ?? '')}\n`);
    const brokerUrl = prefersAsync(req.headers.prefer) ? this.opts.asyncBroker?.() : undefined;
    if (brokerUrl) return queueAsync(req, res, { brokerUrl, namespace: entry.namespace, name: entry.route, headers: passed(req.headers), agent: this.agent });
    const revision = pickRevision(route, entry.tag, Math.random());
    const ns = entry.namespace;
    if (!revision) return answer(res, 503, `no ready endpoint for Route ${JSON.stringify(entry.route)}\n`);
    const timeoutMs = (this.revisions.get(revision, ns)?.spec?.timeoutSeconds ?? DefaultTimeoutSeconds) * 1000;
    void this.whenReady(revision, ns, Math.min(timeoutMs, MaxHoldMs), res).then((svc) => {
      if (res.destroyed) return;
      if (!svc) return answer(res, 503, `no ready endpoint for revision ${JSON.stringify(revision)}\n`);
      this.forward(req, res, { host: svc.spec!.clusterIP!, port: svc.spec!.ports?.[0]?.port ?? 80, timeoutMs, originalHost: req.headers.host! });
    });
  }

  /** The revision's Service once it has a ready endpoint, waiting up to `holdMs` (as Knative's activator holds a request); undefined if none by then. */
  private whenReady(revision: string, ns: string, holdMs: number, res: ServerResponse): Promise<Service | undefined> {
    const now = (): Service | undefined => {
      const svc = this.services.get(revision, ns);
      const ready = (this.endpoints.get(revision, ns)?.subsets ?? []).some((s) => (s.addresses ?? []).length > 0);
      return svc?.spec?.clusterIP && svc.spec.clusterIP !== 'None' && ready ? svc : undefined;
    };
    const found = now();
    if (found || holdMs <= 0) return Promise.resolve(found);
    return new Promise((resolve) => {
      const done = (svc: Service | undefined) => {
        clearTimeout(timer);
        this.held.delete(check);
        res.off('close', gone);
        resolve(svc);
      };
      const check = () => {
        const svc = now();
        if (svc) done(svc);
      };
      const gone = () => done(undefined);
      const timer = setTimeout(() => done(undefined), holdMs);
      timer.unref();
      this.held.add(check);
      res.once('close', gone);
    });
  }

  private forward(req: IncomingMessage, res: ServerResponse, to: { host: string; port: number; timeoutMs: number; originalHost: string }, attempt = 1): void {
    const remote = req.socket.remoteAddress ?? '';
    const prior = req.headers['x-forwarded-for'];
    const headers: IncomingHttpHeaders = {
      ...passed(req.headers),
      'x-forwarded-for': prior ? `${String(prior)}, ${remote}` : remote,
      'x-forwarded-host': String(req.headers['x-forwarded-host'] ?? to.originalHost),
      'x-forwarded-proto': String(req.headers['x-forwarded-proto'] ?? 'http'),
    };
    const upstream = request({ host: to.host, port: to.port, method: req.method, path: req.url, headers, agent: this.agent });
    const timer = setTimeout(() => {
      upstream.destroy();
      answer(res, 504, 'request timeout\n');
    }, to.timeoutMs);
    timer.unref();
    upstream.on('response', (up) => {
      res.writeHead(up.statusCode ?? 502, up.statusMessage, passed(up.headers));
      up.pipe(res);
      up.on('end', () => clearTimeout(timer));
      up.on('error', () => res.destroy());
    });
    // A request with no body can be sent again: the node's service proxy may not know a new endpoint yet.
    const bodiless = !req.headers['transfer-encoding'] && (req.headers['content-length'] ?? '0') === '0';
    upstream.on('error', () => {
      clearTimeout(timer);
      if (res.writableEnded) return;
      if (res.headersSent || res.destroyed) return void res.destroy();
      if (bodiless && attempt < RetryAttempts) return void setTimeout(() => this.forward(req, res, to, attempt + 1), RetryDelayMs * attempt).unref();
      answer(res, 502, 'the revision could not be reached\n');
    });
    // The client went away: so does the upstream request.
    res.on('close', () => {
      clearTimeout(timer);
      if (!res.writableFinished) upstream.destroy();
    });
    if (bodiless) upstream.end();
    else req.pipe(upstream);
  }
}

/**
 * A started gateway (what `serve`'s gateway part and `cluster-api gateway` run); a failed start
 * releases what it opened. `portFlag` names the flag that sets the port, for the error.
 */
export const startGateway = (opts: GatewayOptions, portFlag = '--gateway-port'): Promise<Gateway> =>
  startListener(new Gateway(opts), { what: 'the gateway', host: opts.host, port: opts.port, portFlag });
