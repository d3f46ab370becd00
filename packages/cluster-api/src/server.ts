/**
 * The listening server: plain node:http / node:https around the one request handler (http/app.ts),
 * and `serve()`, which does what `cluster-api serve` does on start — open storage, make sure TLS
 * material and credentials exist, listen, write the kubeconfig.
 */
import type { KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type { ServeConfig } from './config.js';
import { createApp } from './http/app.js';
import { upgradeListener } from './http/upgrade.js';
import type { Authenticator } from './auth/authenticator.js';
import { loadTokenFile, tokenAuthenticator, withUsers } from './auth/authenticator.js';
import { AdminUser, ensureAdminToken, firstToken, writeKubeconfig } from './auth/credentials.js';
import { versionInfo } from './http/nonresource.js';
import type { TlsMaterial } from './auth/tls.js';
import { ensureCa, ensureTls, loadTls, servingHosts } from './auth/tls.js';
import { components } from './components.js';
import { ServiceAccountTokens, ephemeralSigningKey, loadOrCreateSigningKey, withServiceAccountTokens } from './auth/service-account-tokens.js';
import type { Registry } from './registry/rest.js';
import type { PodNetwork } from './registry/definition.js';
import { createRegistry, ensureSystemNamespaces, ensureSystemPriorityClasses } from './registry/index.js';
import { settleAggregation } from './controllers/cluster-role-aggregation.js';
import { buildAuthorizer, type AuthorizationMode, type AuthorizerChain } from './auth/authorizers.js';
import { reconcileBootstrapPolicy } from './auth/bootstrap/reconcile.js';
import { NodeGraph } from './auth/node-graph.js';
import { PolicyCache } from './auth/policy-cache.js';
import { startControllers, type ControllersOptions } from './controllers/index.js';
import { KubeletClient, kubeletPodNetwork, type KubeletClientTls } from './node/kubelet-client.js';
import { openStorage } from './storage/factory.js';
import type { Storage } from './storage/interface.js';
import { startEmbeddedBroker } from './broker/cluster/embedded.js';
import type { ClusterBroker } from './broker/cluster/start.js';
import { Aggregator, ensureFrontProxy, type FrontProxy } from './aggregation/index.js';

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
  /** Node IPAM and node lifecycle settings (pod CIDRs, grace period). */
  nodeControllers?: ControllersOptions['nodes'];
  /** PEM of the CA whose client certificates authenticate (x509: CN user, O groups); absent: none do. */
  clientCa?: string;
  /** The API server's own certificate for node agents, and the CA their certificates chain to. */
  kubeletClient?: KubeletClientTls;
  /** How pods' ports are reached (the node agent provides it); absent: port-forward and the proxies cannot reach pods. */
  podNetwork?: PodNetwork;
  /** Where Service clusterIPs come from (kube-apiserver's --service-cluster-ip-range); default 10.96.0.0/12. */
  serviceClusterIpRange?: string;
  /** kube-apiserver's --runtime-config (`apps/v1beta1=false,…`); default: every built-in group version served. */
  runtimeConfig?: string;
  /** The aggregation layer's front-proxy credentials (`--proxy-client-cert-file`, `--requestheader-client-ca-file`). */
  frontProxy?: FrontProxy;
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

export async function startServer(options: StartOptions): Promise<ClusterApiServer> {
  const { storage } = options;
  const tokens = new ServiceAccountTokens(options.serviceAccountKey ?? ephemeralSigningKey);
  let authenticator: Authenticator | undefined;
  let authorizer: AuthorizerChain | undefined;
  const kubeletClient = options.kubeletClient && new KubeletClient(options.kubeletClient);
  // The pod network dials through the node agents, which it finds through the registry made here.
  let created: Registry | undefined;
  const nodes = () => created?.find('', 'v1', 'nodes');
  const podNetwork = options.podNetwork ?? (kubeletClient && kubeletPodNetwork(kubeletClient, async (name) => nodes()?.get({}, name)));
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
    }));
  authenticator = options.authenticator && withServiceAccountTokens(options.authenticator, tokens, registry);
  const policy = await authorizationReady(registry, options.log);
  await ensureSystemPriorityClasses(registry);
  const modes = options.authorization ?? ['Node', 'RBAC'];
  const nodeGraph = modes.includes('Node') ? new NodeGraph().start(registry) : undefined;
  authorizer = buildAuthorizer(modes, { policy, nodes: nodeGraph });
  const aggregator = new Aggregator({ registry, frontProxy: options.frontProxy, clientCa: options.clientCa, podNetwork, log: options.log });
  await aggregator.start();
  const watches = new Set<ServerResponse>();
  const handler = createApp({
    aggregator,
    registry,
    authenticator,
    authorizer,
    ready: () => storage.healthy(),
    version: versionInfo(packageVersion),
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
  const controllers = options.controllers === false ? undefined : startControllers(registry, { log: options.log, controllers: words, nodes: options.nodeControllers });
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  let closing: Promise<void> | undefined;
  return {
    url: `${options.tls ? 'https' : 'http'}://${urlHost}:${port}`,
    port,
    close: () => (closing ??= (controllers?.stop() ?? Promise.resolve()).then(() => aggregator.stop()).then(() => (policy.close(), nodeGraph?.stop(), shutdown(server, watches, taken, storage)))),
  };
}

/**
 * Before the first request: the system namespaces, the bootstrap RBAC policy (created, or reconciled
 * on a restart), aggregated ClusterRoles filled, and the authorizer's cache of it all loaded.
 */
async function authorizationReady(registry: Registry, log: StartOptions['log']): Promise<PolicyCache> {
  await ensureSystemNamespaces(registry);
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

export interface Served {
  /** Its close() stops the broker first. */
  server: ClusterApiServer;
  /** Where the kubeconfig was written, if one was. */
  kubeconfig?: string;
  /** The embedded broker (`--broker`, the default). */
  broker?: ClusterBroker;
}

/** Everything `cluster-api serve` does before it waits for a signal; `parts` are what an embedding process brings (the node agent's pod network). */
export async function serve(config: ServeConfig, log?: StartOptions['log'], parts: Pick<StartOptions, 'podNetwork'> = {}): Promise<Served> {
  const { authenticator, token } = credentials(config);
  const tls = config.insecureHttp ? undefined : tlsMaterial(config);
  // The CA that signs node and component certificates; with a brought-in serving certificate too.
  const ca = ensureCa(join(config.dataDir, 'tls'));
  const embedded = components(config, ca);
  // Kept in the data dir, as the CA is: service account tokens outlive a restart.
  const serviceAccountKey = loadOrCreateSigningKey(join(config.dataDir, 'service-account.key'));
  const storage = await openStorage(config.storage, { etcd: { caFile: config.etcdCafile, certFile: config.etcdCertfile, keyFile: config.etcdKeyfile } });
  if (config.authorizationMode.includes('AlwaysAllow'))
    log?.({ level: 'warn', msg: '--authorization-mode AlwaysAllow: every authenticated user may do anything; RBAC objects are kept but not enforced' });
  let server: ClusterApiServer;
  try {
    server = await startServer({
      storage, authenticator: withUsers(authenticator, embedded.users), tls, host: config.bindAddress, port: config.port, log, serviceAccountKey: () => serviceAccountKey,
      controllers: config.controllers, authorization: config.authorizationMode,
      clientCa: tls ? ca.cert : undefined, kubeletClient: embedded.kubeletClient, frontProxy: ensureFrontProxy(join(config.dataDir, 'tls')),
      serviceClusterIpRange: config.serviceClusterIpRange, runtimeConfig: config.runtimeConfig,
      nodeControllers: { clusterCidr: config.clusterCidr, nodeCidrMaskSize: config.nodeCidrMaskSize, gracePeriodMs: config.nodeMonitorGracePeriod * 1000 },
      ...parts,
    });
  } catch (err) {
    await storage.close();
    throw err;
  }
  try {
    await embedded.start(server.url, tls?.ca, log);
  } catch (err) {
    await embedded.stop();
    await server.close();
    throw err;
  }
  const api = server;
  const stopApi = () => embedded.stop().then(() => api.close());
  let closing: Promise<void> | undefined;
  const whole: ClusterApiServer = { url: api.url, port: api.port, close: () => (closing ??= stopApi()) };
  if (!token) return { server: whole };
  writeKubeconfig(config.kubeconfigOut, { server: api.url, token, ca: tls?.ca });
  if (!config.broker) return { server: whole, kubeconfig: config.kubeconfigOut };
  let broker: ClusterBroker;
  try {
    broker = await startEmbeddedBroker({
      apiUrl: api.url, ca: tls?.ca, token, log,
      store: config.brokerStore, port: config.brokerPort, host: config.brokerBindAddress, advertiseAddress: config.brokerAdvertiseAddress,
    });
  } catch (err) {
    await stopApi();
    throw err;
  }
  const close = () => (closing ??= broker.stop().finally(stopApi));
  return { server: { ...whole, close }, kubeconfig: config.kubeconfigOut, broker };
}

function credentials(config: ServeConfig): { authenticator: Authenticator; token?: string } {
  if (config.tokenAuthFile)
    return { authenticator: loadTokenFile(config.tokenAuthFile), token: firstToken(readFileSync(config.tokenAuthFile, 'utf8')) };
  const token = ensureAdminToken(join(config.dataDir, 'admin.token'));
  return { authenticator: tokenAuthenticator(new Map([[token, AdminUser]])), token };
}

function tlsMaterial(config: ServeConfig): TlsMaterial {
  if (config.tlsCertFile && config.tlsPrivateKeyFile)
    return loadTls(config.tlsCertFile, config.tlsPrivateKeyFile, config.tlsCaFile);
  return ensureTls(join(config.dataDir, 'tls'), servingHosts(config.bindAddress));
}
