/**
 * The listening server: plain node:http / node:https around the one request handler (http/app.ts).
 * `serve()` (serve/index.ts: what `cluster-api serve` runs, as a list of parts) is re-exported here.
 */
import type { KeyObject } from 'node:crypto';
import { createServer as createHttpServer, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { createRequire } from 'node:module';
import { createApp } from './http/app.js';
import { upgradeListener } from './http/upgrade.js';
import type { Authenticator } from './auth/authenticator.js';
import { versionInfo } from './http/nonresource.js';
import type { CertificateAuthority, TlsMaterial } from './auth/tls.js';
import { ServiceAccountTokens, ephemeralSigningKey, withServiceAccountTokens } from './auth/service-account-tokens.js';
import { withBootstrapTokens } from './auth/bootstrap-tokens.js';
import { apiServerHealth, PostStartHooks } from './http/health.js';
import type { MetricsRegistry } from './http/prometheus.js';
import type { Registry } from './registry/rest.js';
import type { PodNetwork } from './registry/definition.js';
import { ensureClusterDnsService, ensureKubernetesService } from './registry/kinds/kubernetes-service.js';
import { createRegistry, ensureSystemNamespaces, ensureSystemPriorityClasses } from './registry/index.js';
import { settleAggregation } from './controllers/clusterrole-aggregation/aggregation.js';
import { buildAuthorizer, type AuthorizationMode, type AuthorizerChain } from './auth/authorizers.js';
import { reconcileBootstrapPolicy } from './auth/bootstrap/reconcile.js';
import { NodeGraph } from './auth/node-graph.js';
import { PolicyCache } from './auth/policy-cache.js';
import type { AuthorizerSource } from './client/in-process.js';
import { startControllers, type ControllersOptions } from './controllers/index.js';
import { KubeletClient, kubeletPodNetwork, type KubeletClientTls } from './node/kubelet-client.js';
import { ResourceMetrics } from './metrics/scraper.js';
import { SystemContext } from './controllers/shared.js';
import type { Storage } from './storage/interface.js';
import { Aggregator, type FrontProxy } from './aggregation/index.js';

export interface StartOptions {
  storage: Storage;
  /** Default: every kind over `storage`. */
  registry?: Registry;
  /** Undefined serves anonymous requests: for loopback plain HTTP and tests only. */
  authenticator?: Authenticator;
  /** `ca`: what clients verify the certificate with (kubeconfig, token Secrets' `ca.crt`). */
  tls?: Pick<TlsMaterial, 'cert' | 'key' | 'ca'>;
  /** Signs ServiceAccount tokens; default: a key made for this process on first use (tokens die with it). */
  serviceAccountKey?: () => KeyObject;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  log?: (entry: Record<string, unknown>) => void;
  /** Run the built-in controllers (default true); a list: kube-controller-manager's --controllers words. */
  controllers?: boolean | readonly string[];
  /** kube-apiserver's `--authorization-mode`, in order (default Node,RBAC); system:masters is always allowed. */
  authorization?: readonly AuthorizationMode[];
  /** Run the controller manager in this process (default true); false: only the API server's own loops run here. */
  controllerManager?: boolean;
  /** Elect the controller manager's leader on the `kube-system/kube-controller-manager` Lease (API servers sharing etcd). */
  leaderElection?: ControllersOptions['leaderElection'];
  /** Node IPAM and node lifecycle settings (pod CIDRs, grace period). */
  nodeControllers?: ControllersOptions['nodes'];
  /** PEM of the CA whose client certificates authenticate (x509: CN user, O groups); absent: none do. */
  clientCa?: string;
  /** Bootstrap token Secrets in kube-system authenticate (kube-apiserver's --enable-bootstrap-token-auth). */
  bootstrapTokenAuth?: boolean;
  /** The CA the csrsigning controller signs approved CertificateSigningRequests with; absent: none are signed. */
  clusterSigning?: CertificateAuthority;
  /** The API server's own certificate for node agents, and the CA their certificates chain to. */
  kubeletClient?: KubeletClientTls;
  /** How pods' ports are reached (the node agent provides it); absent: port-forward and the proxies cannot reach pods. */
  podNetwork?: PodNetwork;
  /** Where Service clusterIPs come from (kube-apiserver's --service-cluster-ip-range); default 10.96.0.0/12. */
  serviceClusterIpRange?: string;
  /** Keep the `kubernetes` Service of `default` (first address of the range, Endpoints: this server), as kube-apiserver does; pods reach the API through it. The cluster DNS's `kube-system/kube-dns` Service (the range's tenth address) is kept with it. */
  kubernetesService?: boolean;
  /** kube-apiserver's --runtime-config (`apps/v1beta1=false,…`); default: every built-in group version served. */
  runtimeConfig?: string;
  /** The aggregation layer's front-proxy credentials (`--proxy-client-cert-file`, `--requestheader-client-ca-file`). */
  frontProxy?: FrontProxy;
  /** The horizontal pod autoscaler's settings (kube-controller-manager's --horizontal-pod-autoscaler-*). */
  horizontalPodAutoscaler?: ControllersOptions['horizontalPodAutoscaler'];
  /** How often the metrics API scrapes the node agents (metrics-server's --metric-resolution; default 15 s). */
  metricResolutionMs?: number;
  /** The registry /metrics serves (a new one by default): parts running beside the API server add their metrics to it. */
  metrics?: MetricsRegistry;
}

export interface ClusterApiServer {
  /** `https://127.0.0.1:6443` (or http:// when started without TLS). */
  readonly url: string;
  readonly port: number;
  /** Stop listening, end watches, let in-flight requests finish (≤ 5 s), then close storage. */
  close(): Promise<void>;
}

const packageVersion = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

/** In-flight requests get this long after close() before their connections are cut. */
const drainMs = 5000;

/** The server, and the registry it serves (what the controller-manager part runs against in-process). */
export async function startServer(options: StartOptions): Promise<ClusterApiServer & { registry: Registry; authorizer: AuthorizerSource }> {
  const { storage } = options;
  const tokens = new ServiceAccountTokens(options.serviceAccountKey ?? ephemeralSigningKey);
  let authenticator: Authenticator | undefined;
  let authorizer: AuthorizerChain | undefined;
  const kubeletClient = options.kubeletClient && new KubeletClient(options.kubeletClient);
  // The pod network dials through the node agents, which it finds through the registry made here.
  let created: Registry | undefined;
  const nodes = () => created?.find('', 'v1', 'nodes');
  const podNetwork = options.podNetwork ?? (kubeletClient && kubeletPodNetwork(kubeletClient, async (name) => nodes()?.get({}, name)));
  // The metrics API's scraper reaches the node agents as pods/log does; it scrapes once asked.
  const resourceMetrics = kubeletClient && new ResourceMetrics({ kubelet: kubeletClient, nodes: async () => (await nodes()?.list(SystemContext, {}))?.items ?? [], resolutionMs: options.metricResolutionMs, log: options.log });
  const registry =
    options.registry ??
    (created = createRegistry(storage, {
      tokenIssuer: tokens,
      rootCa: options.tls?.ca,
      reviewToken: async (token, audiences) => authenticator?.review(token, audiences),
      authorizer: () => authorizer,
      kubelet: kubeletClient,
      serviceClusterIpRange: options.serviceClusterIpRange,
      runtimeConfig: options.runtimeConfig,
      podNetwork,
      resourceMetrics,
    }));
  authenticator = options.authenticator && withServiceAccountTokens(options.authenticator, tokens, registry);
  if (authenticator && options.bootstrapTokenAuth) authenticator = withBootstrapTokens(authenticator, registry);
  const hooks = new PostStartHooks();
  await hooks.run('bootstrap-controller', () => ensureSystemNamespaces(registry));
  const policy = await hooks.run('rbac/bootstrap-roles', () => authorizationReady(registry, options.log));
  await hooks.run('scheduling/bootstrap-system-priority-classes', () => ensureSystemPriorityClasses(registry));
  const modes = options.authorization ?? ['Node', 'RBAC'];
  const nodeGraph = modes.includes('Node') ? new NodeGraph().start(registry) : undefined;
  authorizer = buildAuthorizer(modes, { policy, nodes: nodeGraph });
  const aggregator = new Aggregator({ registry, frontProxy: options.frontProxy, clientCa: options.clientCa, podNetwork, log: options.log });
  await aggregator.start();
  const watches = new Set<ServerResponse>();
  // Set once close() is called: /readyz then fails its `shutdown` check while requests drain.
  let closing: Promise<void> | undefined;
  const handler = createApp({
    aggregator,
    registry,
    authenticator,
    authorizer,
    health: apiServerHealth({ storage, hooks, shuttingDown: () => closing !== undefined }),
    version: versionInfo(packageVersion),
    metrics: options.metrics,
    storage,
    log: options.log,
    watches,
  });
  // A client certificate is asked for, never required: token users connect as before.
  const clientAuth = options.clientCa ? { ca: options.clientCa, requestCert: true, rejectUnauthorized: false } : {};
  const server: Server = options.tls ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key, ...clientAuth }, handler) : createHttpServer(handler);
  server.keepAliveTimeout = 65_000;
  const taken = new Set<Duplex>();
  server.on('upgrade', upgradeListener(handler, taken));
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => (server.off('error', reject), resolve()));
  }).catch(async (err: unknown) => {
    await aggregator.stop();
    policy.close();
    nodeGraph?.stop();
    throw err;
  });
  const port = (server.address() as AddressInfo).port;
  // Only once listening: a port in use leaves no controllers running against a store the caller will close.
  const words = Array.isArray(options.controllers) ? options.controllers : undefined;
  const controllers = options.controllers === false ? undefined : startControllers(registry, () => authorizer, {
    log: options.log, controllers: words, nodes: options.nodeControllers, horizontalPodAutoscaler: options.horizontalPodAutoscaler, signing: options.clusterSigning, controllerManager: options.controllerManager, leaderElection: options.leaderElection,
  });
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  if (options.kubernetesService) {
    await ensureKubernetesService(registry, options.serviceClusterIpRange, host === '0.0.0.0' ? '127.0.0.1' : host, port)
      .catch((err: Error) => options.log?.({ level: 'warn', msg: 'the kubernetes Service is not kept', error: err.message }));
    await ensureClusterDnsService(registry, options.serviceClusterIpRange)
      .catch((err: Error) => options.log?.({ level: 'warn', msg: 'the kube-dns Service is not kept', error: err.message }));
  }
  return {
    url: `${options.tls ? 'https' : 'http'}://${urlHost}:${port}`,
    port,
    registry,
    authorizer: () => authorizer,
    close: () => (closing ??= (controllers?.stop() ?? Promise.resolve()).then(() => (resourceMetrics?.stop(), aggregator.stop())).then(() => (policy.close(), nodeGraph?.stop(), shutdown(server, watches, taken, storage)))),
  };
}

/**
 * Before the first request (after the system namespaces): the bootstrap RBAC policy (created, or reconciled
 * on a restart), aggregated ClusterRoles filled, and the authorizer's cache of it all loaded.
 */
async function authorizationReady(registry: Registry, log: StartOptions['log']): Promise<PolicyCache> {
  await reconcileBootstrapPolicy(registry);
  await settleAggregation(registry);
  const policy = new PolicyCache(registry, log);
  await policy.ready;
  return policy;
}

async function shutdown(server: Server, watches: Set<ServerResponse>, taken: Set<Duplex>, storage: Storage): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Watches never finish on their own: end them so clients re-watch, as kube-apiserver does on shutdown.
  for (const res of [...watches]) res.end();
  // Nor do port-forwards and proxied upgrades; they would hold server.close() open.
  for (const socket of [...taken]) socket.destroy();
  // Keep-alive sockets turn idle as their last response ends: close them as they do, cut the rest later.
  const idle = setInterval(() => server.closeIdleConnections(), 50);
  const cut = setTimeout(() => server.closeAllConnections(), drainMs);
  server.closeIdleConnections();
  await closed;
  clearInterval(idle);
  clearTimeout(cut);
  await storage.close();
}

export { serve, type Served, type ServeOptions } from './serve/index.js';
