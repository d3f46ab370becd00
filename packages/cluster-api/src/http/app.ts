/**
 * The request pipeline, top to bottom: split the URL → authenticate → impersonate → parse the path →
 * authorize → discovery, non-resource path or resource route → answer. Built once; per request it allocates only what the
 * request needs (principle 8). Any error leaves as a Status; nothing a client sends can throw past here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResourceDefinition } from '../registry/definition.js';
import type { Registry, UserInfo } from '../registry/rest.js';
import type { Upgrade } from '../registry/subresource.js';
import type { Authenticator } from '../auth/authenticator.js';
import { UnauthenticatedPaths } from '../auth/authenticator.js';
import { asksImpersonation, impersonate } from '../auth/impersonation.js';
import type { Authorizer } from '../registry/authorization.js';
import { authorizeRequest } from './authorize.js';
import { clientCertificateUser } from '../auth/x509.js';
import { Discovery } from './discovery.js';
import { serveResource } from './handlers.js';
import { negotiateOutput, type OutputFormat } from './negotiate.js';
import type { VersionInfo } from './nonresource.js';
import type { HealthChecks } from './health.js';
import { MetricsRegistry } from './prometheus.js';
import { RequestMetrics } from './request-metrics.js';
import type { Storage } from '../storage/interface.js';
import { serveNonResource } from './nonresource.js';
import { OpenApiV3 } from './openapi.js';
import { OpenApiV2 } from './openapi-v2.js';
import type { DiscoveryInfo, RequestInfo } from './request-info.js';
import { parseRequestInfo } from './request-info.js';
import { send, sendError } from './respond.js';
import { notFoundAt, resolve } from './router.js';
import { isPretty } from './query.js';
import { isApiError, methodNotSupported, pathNotFound, unauthorized } from '../api/errors.js';
import { serverErrorReporter, type ReportServerError } from './status.js';
import type { Aggregator } from '../aggregation/index.js';

export interface AppOptions {
  registry: Registry;
  /** Undefined: every request is anonymous (only for `--insecure-http` on loopback and tests). */
  authenticator?: Authenticator;
  /**
   * Asked about every authenticated request before its route is resolved (auth/authorizers.ts);
   * undefined: every authenticated request is allowed, as without authentication.
   */
  authorizer?: Authorizer;
  /** The checks of /healthz, /livez and /readyz (health.ts `apiServerHealth`). */
  health: HealthChecks;
  version: VersionInfo;
  /** Where the API server's request metrics are registered and /metrics reads; other parts may add theirs. */
  metrics?: MetricsRegistry;
  /** Counted per resource for apiserver_storage_objects when /metrics is scraped. */
  storage?: Pick<Storage, 'count'>;
  /** Structured log line for unexpected errors; never given headers, tokens or bodies. */
  log?: (entry: Record<string, unknown>) => void;
  /** Open watch streams are kept here while they run, so that shutdown can end them. */
  watches?: Set<ServerResponse>;
  /** The aggregation layer: remote APIServices' paths and the merged `/apis`. */
  aggregator?: Aggregator;
}

/** `upgrade`: the connection of a request that asked to switch protocols (upgrade.ts); the same pipeline serves it. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse, upgrade?: Upgrade) => void;

/** What the pipeline holds, built once; the documents derived from the definitions follow the registry. */
interface App {
  options: AppOptions;
  metrics: MetricsRegistry;
  requests: RequestMetrics;
  discovery: () => Discovery;
  openApiV2: () => OpenApiV2;
  openApiV3: () => OpenApiV3;
  report: ReportServerError;
}

/** A value derived from the registry's definitions, rebuilt on first use after one is added or removed. */
function perGeneration<T>(registry: Registry, build: (definitions: readonly ResourceDefinition[]) => T): () => T {
  let generation = -1;
  let value: T | undefined;
  return () => {
    if (generation !== registry.generation) (value = build(registry.definitions())), (generation = registry.generation);
    return value!;
  };
}

export function createApp(options: AppOptions): RequestHandler {
  const log = options.log ?? ((entry) => process.stderr.write(`${JSON.stringify(entry)}\n`));
  const metrics = options.metrics ?? new MetricsRegistry();
  const app: App = {
    options,
    metrics,
    requests: new RequestMetrics(metrics, options.registry, options.storage),
    discovery: perGeneration(options.registry, (defs) => new Discovery(defs)),
    openApiV2: perGeneration(options.registry, (defs) => new OpenApiV2(defs)),
    openApiV3: perGeneration(options.registry, (defs) => new OpenApiV3(defs)),
    report: serverErrorReporter(log),
  };
  const { report } = app;
  return (req, res, upgrade) => {
    const fail = (err: unknown): void => {
      const { format, pretty } = errorOutput(req, err);
      sendError(res, err, format, report(err, req), pretty);
    };
    try {
      handle(req, res, app, upgrade)?.catch(fail);
    } catch (err) {
      fail(err);
    }
  };
}

/**
 * A Status has a protobuf form, so an error answers in protobuf whenever the client prefers it; a 406
 * is JSON, as kube-apiserver writes it when no representation the client listed can be produced.
 */
const errorOutput = (req: IncomingMessage, err: unknown): { format: OutputFormat; pretty: boolean } => {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  const pretty = isPretty(new URLSearchParams(q < 0 ? '' : url.slice(q + 1)), req.headers['user-agent']);
  if (isApiError(err) && err.code === 406) return { format: 'json', pretty };
  try {
    const output = negotiateOutput(req.headers.accept, true);
    return { format: output.format, pretty: pretty || output.pretty === true };
  } catch {
    return { format: 'json', pretty };
  }
};

/**
 * Synchronous until something has to wait (a JWT lookup, a request body, a storage read not at hand):
 * every promise an answer does not need costs a turn of the microtask queue.
 */
function handle(req: IncomingMessage, res: ServerResponse, app: App, upgrade: Upgrade | undefined): void | Promise<void> {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  const method = req.method ?? 'GET';
  const found = authenticate(req, path, app.options.authenticator);
  const exchange = { req, res, path, query, method, upgrade };
  if (found instanceof Promise) return found.then((user) => route(exchange, actingAs(req, user, app.options.authorizer), app));
  return route(exchange, actingAs(req, found, app.options.authorizer), app);
}

/** The requester, or whom it impersonates (Impersonate-* headers, once allowed). */
const actingAs = (req: IncomingMessage, user: UserInfo | undefined, authorizer: Authorizer | undefined): UserInfo | undefined =>
  user && authorizer && asksImpersonation(req) ? impersonate(req, user, authorizer) : user;

/** One request as it came in, before authentication. */
export interface Incoming {
  req: IncomingMessage;
  res: ServerResponse;
  path: string;
  query: URLSearchParams;
  method: string;
  upgrade?: Upgrade;
}

/**
 * Every request, upgrades included, is routed here. Authorization belongs between parsing the path
 * and serving it: `info` names verb, group, resource, subresource (`portforward`, `proxy`), namespace
 * and name (`web:8080` for a proxy, as kube-apiserver authorizes it), so one check covers the
 * streaming paths too.
 */
function route(incoming: Incoming, user: UserInfo | undefined, app: App): void | Promise<void> {
  const { req, res, path, query, method, upgrade } = incoming;
  const info = parseRequestInfo(method, path, query);
  // Upgraded connections are left out: their response may never close as an HTTP exchange does.
  if (!upgrade) app.requests.begin(req, res, info, method, query);
  const authorizer = app.options.authorizer;
  const checked = user && authorizer ? authorizeRequest(authorizer, user, info, method, path, query) : undefined;
  return checked ? checked.then(() => serve(incoming, info, user, app)) : serve(incoming, info, user, app);
}

/** An authorized request: an aggregated API's, a resource route, a discovery document or a non-resource path. */
function serve({ req, res, path, query, method, upgrade }: Incoming, info: RequestInfo, user: UserInfo | undefined, app: App): void | Promise<void> {
  const { options } = app;
  const aggregated = options.aggregator?.serve(info, { req, res, path, query, method, user, upgrade, localGroups: () => app.discovery().groupList() });
  if (aggregated) return aggregated;
  if (info.type === 'resource') {
    return serveResource(resolve(options.registry, info), { req, res, query, user, watches: options.watches, report: app.report, upgrade });
  }
  // Under /api and /apis/{group} nothing but resources and discovery documents is served.
  if (info.type === 'nonResource' && /^\/apis?(\/|$)/.test(path)) throw notFoundAt(options.registry, path);
  if (method !== 'GET' && method !== 'HEAD') throw info.type === 'discovery' ? methodNotSupported() : pathNotFound();
  if (info.type === 'nonResource') return serveNonResource(req, res, path, query, { ...options, metrics: app.metrics, openApiV2: app.openApiV2(), openApiV3: app.openApiV3() });
  const doc = discoveryDocument(app.discovery(), info, req);
  if (!doc) throw notFoundAt(options.registry, path);
  const output = negotiateOutput(req.headers.accept);
  send(res, 200, doc, output.format === 'yaml' ? 'yaml' : 'json', isPretty(query, req.headers['user-agent']) || output.pretty);
}

/**
 * A verified client certificate first (kube-apiserver's x509 authenticator comes before tokens), then
 * the token: synchronous for the token file's users (the common case, no promise made); a service
 * account token is looked up.
 */
function authenticate(req: IncomingMessage, path: string, authenticator: Authenticator | undefined): UserInfo | undefined | Promise<UserInfo | undefined> {
  if (!authenticator) return undefined;
  const certified = clientCertificateUser(req.socket);
  if (certified) return certified;
  const found = authenticator.authenticate(req.headers.authorization);
  return found instanceof Promise ? found.then((user) => admitted(user, path)) : admitted(found, path);
}

/** No user: 401, except on the health probes. */
function admitted(user: UserInfo | undefined, path: string): UserInfo | undefined {
  if (!user && !UnauthenticatedPaths.has(path)) throw unauthorized();
  return user;
}

function discoveryDocument(discovery: Discovery, info: DiscoveryInfo, req: IncomingMessage): object | undefined {
  return info.document === 'apiVersions'
    ? discovery.apiVersions(`${req.socket.localAddress ?? '127.0.0.1'}:${req.socket.localPort ?? 0}`)
    : info.document === 'groupList'
      ? discovery.groupList()
      : info.document === 'group'
        ? discovery.group(info.group!)
        : discovery.resourceList(info.group!, info.version!);
}
