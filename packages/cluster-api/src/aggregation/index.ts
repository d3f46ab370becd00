/**
 * The aggregation layer (kube-aggregator inside this server): APIServices kept for the local group
 * versions (local.ts), each remote one checked for availability (availability.ts) on every change and
 * every `checkIntervalMs`, requests under a remote group version proxied to its backend (proxy.ts),
 * `/apis` and `/apis/<remote group>` answered with the remote groups merged (discovery.ts), and the
 * `kube-system/extension-apiserver-authentication` ConfigMap published (front-proxy.ts). The request
 * pipeline asks `serve()` after authorization; undefined means the request is not the aggregator's.
 */
import type { KubeObject } from '../api/meta.js';
import { backendUnavailable, isApiError } from '../api/errors.js';
import { Caches, type ObjectCache } from '../controllers/cache.js';
import { SystemContext } from '../controllers/shared.js';
import type { PodNetwork } from '../registry/definition.js';
import type { Registry, ResourceStore, UserInfo } from '../registry/rest.js';
import { arr, obj, spec, status, str } from '../registry/kinds/common.js';
import { timestamp } from '../registry/generic/meta.js';
import { negotiateOutput } from '../http/negotiate.js';
import { send } from '../http/respond.js';
import { isPretty } from '../http/query.js';
import type { Incoming } from '../http/app.js';
import type { RequestInfo } from '../http/request-info.js';
import { checkAvailability, withAvailability } from './availability.js';
import { locateBackend } from './backend.js';
import { mergedGroupList } from './discovery.js';
import type { APIGroup } from '../http/discovery.js';
import { authenticationConfigMap, type FrontProxy } from './front-proxy.js';
import { AutomanagedLabel, isLocal, localApiServices, syncLocal } from './local.js';
import { proxyToBackend } from './proxy.js';

export { ensureFrontProxy, type FrontProxy } from './front-proxy.js';

export interface AggregatorOptions {
  registry: Registry;
  /** The front proxy's CA and client certificate; absent: backends are reached without a client certificate. */
  frontProxy?: FrontProxy;
  /** The CA client certificates of this server chain to (the ConfigMap's `client-ca-file`). */
  clientCa?: string;
  /** How pods behind a Service are reached. */
  podNetwork?: PodNetwork;
  /** How often every APIService is checked again; default 10 s. */
  checkIntervalMs?: number;
  log?: (entry: Record<string, unknown>) => void;
}

/** One request, as the pipeline hands it over once authenticated. */
export interface Exchange extends Incoming {
  user: UserInfo | undefined;
  /** The local `/apis` document. */
  localGroups(): { groups: APIGroup[] };
}

const GroupVersionPath = /^\/apis\/([^/]+)\/([^/]+)(?:\/|$)/;

export class Aggregator {
  private readonly store?: ResourceStore;
  private cache?: ObjectCache;
  private readonly caches: Caches;
  /** Services and Endpoints, watched so that an APIService is checked again as soon as its backend's change. */
  private readonly backends: ObjectCache[] = [];
  private readonly services;
  /** The APIServices naming a Service, kept as the cache changes: every request under /apis looks here. */
  private remote: KubeObject[] = [];
  private timer?: NodeJS.Timeout;
  private generation = -1;
  private readonly checking = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private stopped = false;
  /** Ends the discovery checks in flight when the server stops. */
  private readonly stopping = new AbortController();

  constructor(private readonly options: AggregatorOptions) {
    // A registry without APIServices (a test's own) has nothing to aggregate.
    this.store = options.registry.find('apiregistration.k8s.io', 'v1', 'apiservices');
    // The API server's own caches, read as the server itself (the registry is a client of that shape).
    this.caches = new Caches(options.registry, options.log);
    this.services = { find: options.registry.find.bind(options.registry), podNetwork: options.podNetwork };
  }

  /** Local APIServices registered and checked, the ConfigMap published; then checks run on changes and on a timer. */
  async start(): Promise<void> {
    if (!this.store) return;
    await this.publishAuthentication();
    this.cache = this.caches.of(this.store);
    this.cache.on((type, o) => {
      this.remote = this.cache!.list().filter((x) => !isLocal(x));
      // A Local one deleted or changed is put back (a pass that finds nothing to do writes nothing).
      if (obj(o.metadata.labels)[AutomanagedLabel]) this.schedule('sync');
      if (type !== 'DELETED') this.schedule(o.metadata.name);
    });
    await this.cache.synced;
    this.remote = this.cache.list().filter((x) => !isLocal(x));
    for (const plural of ['services', 'endpoints']) {
      const store = this.options.registry.find('', 'v1', plural);
      if (!store) continue;
      const backend = this.caches.of(store);
      backend.on((_type, o) => this.backendChanged(o));
      this.backends.push(backend);
    }
    await this.sync();
    // Local ones at once; a remote backend is not waited for (kube-apiserver starts before its extension servers answer).
    await Promise.all(this.cache.list().filter(isLocal).map((o) => this.check(o.metadata.name!)));
    for (const o of this.cache.list()) if (!isLocal(o)) this.schedule(o.metadata.name);
    this.timer = setInterval(() => this.tick(), this.options.checkIntervalMs ?? 10_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    clearInterval(this.timer);
    this.caches.stop();
    await Promise.all(this.checking.values());
  }

  /** The pipeline's hook: a promise when the request is the aggregator's, else undefined. */
  serve(info: RequestInfo, exchange: Exchange): Promise<void> | undefined {
    if (!this.cache || !exchange.path.startsWith('/apis')) return undefined;
    if (this.generation !== this.options.registry.generation) this.schedule('sync');
    const { remote } = this;
    if (remote.length === 0) return undefined;
    if (info.type === 'discovery' && (exchange.method === 'GET' || exchange.method === 'HEAD')) {
      if (info.document === 'groupList') return this.answer(exchange, mergedGroupList(exchange.localGroups(), remote));
      // A group with a remote version: its versions from both sides, as in `/apis`.
      if (info.document === 'group' && remote.some((o) => str(spec(o).group) === info.group)) {
        return this.answer(exchange, mergedGroupList(exchange.localGroups(), remote).groups.find((g) => g.name === info.group)!);
      }
    }
    const m = GroupVersionPath.exec(exchange.path);
    if (!m) return undefined;
    const apiService = remote.find((o) => str(spec(o).group) === m[1] && str(spec(o).version) === m[2]);
    if (!apiService) return undefined;
    return this.proxy(exchange, apiService);
  }

  private async answer({ req, res, query }: Exchange, doc: object): Promise<void> {
    const output = negotiateOutput(req.headers.accept);
    send(res, 200, doc, output.format === 'yaml' ? 'yaml' : 'json', isPretty(query, req.headers['user-agent']) || output.pretty);
  }

  /** kube-aggregator answers 503 for an APIService that is not Available, without trying its backend. */
  private async proxy(exchange: Exchange, apiService: KubeObject): Promise<void> {
    const available = arr(status(apiService).conditions).map(obj).find((c) => c.type === 'Available');
    if (available?.status !== 'True') throw backendUnavailable('service unavailable');
    const located = await locateBackend(apiService, this.services, this.options.frontProxy);
    if ('unavailable' in located) throw backendUnavailable('service unavailable');
    return proxyToBackend(exchange.req, exchange.res, exchange.path, exchange.user, located.backend, exchange.upgrade);
  }

  /** kube-aggregator's availability controller queues the APIServices whose Service or Endpoints changed. */
  private backendChanged(o: KubeObject): void {
    for (const apiService of this.cache!.list()) {
      const ref = obj(spec(apiService).service);
      if (str(ref.namespace) === o.metadata.namespace && str(ref.name) === o.metadata.name) this.schedule(apiService.metadata.name);
    }
  }

  private tick(): void {
    this.remote = this.cache!.list().filter((x) => !isLocal(x));
    if (this.generation !== this.options.registry.generation) this.schedule('sync');
    for (const o of this.cache!.list()) if (!isLocal(o)) this.schedule(o.metadata.name);
  }

  /** One pass per key at a time, run once more when asked for meanwhile; `sync` re-registers the local APIServices. */
  private schedule(key: string | undefined): void {
    if (!key || this.stopped) return;
    if (this.checking.has(key)) return void this.again.add(key);
    const run = (key === 'sync' ? this.sync() : this.check(key))
      .catch((err: unknown) => this.options.log?.({ level: 'error', msg: 'aggregation: pass failed', key, error: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        this.checking.delete(key);
        if (this.again.delete(key)) this.schedule(key);
      });
    this.checking.set(key, run);
  }

  private async sync(): Promise<void> {
    this.generation = this.options.registry.generation;
    await syncLocal(this.store!, localApiServices(this.options.registry.definitions()), this.cache!.list());
  }

  private async check(name: string): Promise<void> {
    const apiService = this.cache!.get(undefined, name);
    if (!apiService) return;
    const found = await checkAvailability(apiService, this.services, this.options.frontProxy, this.stopping.signal);
    const status = withAvailability(apiService, found, timestamp());
    if (!status || this.stopped) return;
    try {
      const written = await this.store!.update(SystemContext, name, { ...apiService, status }, 'status');
      this.cache!.observe(written.object);
    } catch (err) {
      // Changed meanwhile (409) or gone (404): its watch event brings the next check.
      if (!isApiError(err) || (err.code !== 409 && err.code !== 404)) throw err;
    }
  }

  private async publishAuthentication(): Promise<void> {
    const store = this.options.registry.find('', 'v1', 'configmaps');
    if (!store) return;
    const wanted = authenticationConfigMap(this.options.frontProxy, this.options.clientCa);
    const ctx = { ...SystemContext, namespace: 'kube-system' };
    const found = await store.get(ctx, wanted.metadata.name!).catch(() => undefined);
    if (!found) await store.create(ctx, wanted);
    else if (JSON.stringify(found.data) !== JSON.stringify(wanted.data)) await store.update(ctx, wanted.metadata.name!, { ...found, data: wanted.data });
  }
}
