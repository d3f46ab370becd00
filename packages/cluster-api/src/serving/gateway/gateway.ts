/**
 * The ingress gateway (Knative's Kourier/Envoy and activator path, in one HTTP listener): a request
 * is routed by its Host to a Route (hosts.ts), to one of the Route's revisions — chosen per request
 * by the traffic percents, or the tag's revision on a tag host — and proxied to the revision's
 * Service (its loopback clusterIP, port 80, which the node's service proxy forwards to a ready
 * pod), streaming both bodies, with `X-Forwarded-For`/`-Host`/`-Proto` and the revision's
 * `timeoutSeconds`. An unknown host is 404 (as Knative's gateway answers), a revision with no ready
 * endpoint 503, a pod that cannot be reached 502, a timeout 504. Routes, revisions, their Services
 * and Endpoints, and DomainMappings (their domain a host of the Route they map), come from informers (the gateway is a client of the API like any other part).
 */
import { Agent, createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Informer, Resources, resourceType, type KubeClient, type KubeObject } from '@func/kube-client';
import { DefaultTimeoutSeconds, Label } from '../kinds.js';
import { hostsOf, mappedHost, pickRevision, requestHost, type DomainMapping, type HostEntry, type Route } from './hosts.js';

export interface GatewayOptions {
  kube: KubeClient;
  host: string;
  /** 0 picks a free one. */
  port: number;
  log?: (entry: Record<string, unknown>) => void;
}

type Revision = KubeObject & { spec?: { timeoutSeconds?: number } };
type Service = KubeObject & { spec?: { clusterIP?: string; ports?: { port: number }[] } };
type Endpoints = KubeObject & { subsets?: { addresses?: { ip?: string }[] }[] };

const RouteType = resourceType('serving.knative.dev/v1', 'Route', 'routes');
const RevisionType = resourceType('serving.knative.dev/v1', 'Revision', 'revisions');
const DomainMappingType = resourceType('serving.knative.dev/v1beta1', 'DomainMapping', 'domainmappings');

/** Connection-scoped headers a proxy does not pass on (RFC 9110 §7.6.1). */
const HopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

const passed = (headers: IncomingHttpHeaders): IncomingHttpHeaders => {
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
    const revision = pickRevision(route, entry.tag, Math.random());
    const ns = entry.namespace;
    const svc = revision ? this.services.get(revision, ns) : undefined;
    const ready = revision ? (this.endpoints.get(revision, ns)?.subsets ?? []).some((s) => (s.addresses ?? []).length > 0) : false;
    if (!revision || !svc?.spec?.clusterIP || svc.spec.clusterIP === 'None' || !ready)
      return answer(res, 503, `no ready endpoint for ${revision ? `revision ${JSON.stringify(revision)}` : `Route ${JSON.stringify(entry.route)}`}\n`);
    const timeoutMs = (this.revisions.get(revision, ns)?.spec?.timeoutSeconds ?? DefaultTimeoutSeconds) * 1000;
    this.forward(req, res, { host: svc.spec.clusterIP, port: svc.spec.ports?.[0]?.port ?? 80, timeoutMs, originalHost: req.headers.host! });
  }

  private forward(req: IncomingMessage, res: ServerResponse, to: { host: string; port: number; timeoutMs: number; originalHost: string }): void {
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
    upstream.on('error', () => {
      clearTimeout(timer);
      if (!res.writableEnded) answer(res, 502, 'the revision could not be reached\n');
    });
    // The client went away: so does the upstream request.
    res.on('close', () => {
      clearTimeout(timer);
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }
}
