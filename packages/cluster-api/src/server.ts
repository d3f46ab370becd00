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
import { loadTokenFile, tokenAuthenticator } from './auth/authenticator.js';
import { AdminUser, ensureAdminToken, firstToken, writeKubeconfig } from './auth/credentials.js';
import { versionInfo } from './http/nonresource.js';
import type { TlsMaterial } from './auth/tls.js';
import { ensureTls, loadTls, servingHosts } from './auth/tls.js';
import { ServiceAccountTokens, ephemeralSigningKey, loadOrCreateSigningKey, withServiceAccountTokens } from './auth/service-account-tokens.js';
import type { Registry } from './registry/rest.js';
import type { PodNetwork } from './registry/definition.js';
import { createRegistry, ensureSystemNamespaces, ensureSystemPriorityClasses } from './registry/index.js';
import { startControllers } from './controllers/index.js';
import { openStorage } from './storage/factory.js';
import type { Storage } from './storage/interface.js';

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
  /** Run the garbage collector, namespace controller and pod reaper (default true). */
  controllers?: boolean;
  /** How pods' ports are reached (the node agent provides it); absent: port-forward and the proxies cannot reach pods. */
  podNetwork?: PodNetwork;
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
  const registry =
    options.registry ??
    createRegistry(storage, {
      tokenIssuer: tokens,
      rootCa: options.tls?.ca,
      reviewToken: async (token, audiences) => authenticator?.review(token, audiences),
      podNetwork: options.podNetwork,
    });
  authenticator = options.authenticator && withServiceAccountTokens(options.authenticator, tokens, registry);
  await ensureSystemNamespaces(registry);
  await ensureSystemPriorityClasses(registry);
  const watches = new Set<ServerResponse>();
  const handler = createApp({
    registry,
    authenticator,
    ready: () => storage.healthy(),
    version: versionInfo(packageVersion),
    log: options.log,
    watches,
  });
  const server: Server = options.tls ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, handler) : createHttpServer(handler);
  server.keepAliveTimeout = 65_000;
  const taken = new Set<Duplex>();
  server.on('upgrade', upgradeListener(handler, taken));
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => (server.off('error', reject), resolve()));
  });
  const port = (server.address() as AddressInfo).port;
  // Only once listening: a port in use leaves no controllers running against a store the caller will close.
  const controllers = options.controllers === false ? undefined : startControllers(registry, { log: options.log });
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  let closing: Promise<void> | undefined;
  return {
    url: `${options.tls ? 'https' : 'http'}://${urlHost}:${port}`,
    port,
    close: () => (closing ??= (controllers?.stop() ?? Promise.resolve()).then(() => shutdown(server, watches, taken, storage))),
  };
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
  server: ClusterApiServer;
  /** Where the kubeconfig was written, if one was. */
  kubeconfig?: string;
}

/** Everything `cluster-api serve` does before it waits for a signal; `parts` are what an embedding process brings (the node agent's pod network). */
export async function serve(config: ServeConfig, log?: StartOptions['log'], parts: Pick<StartOptions, 'podNetwork'> = {}): Promise<Served> {
  const { authenticator, token } = credentials(config);
  const tls = config.insecureHttp ? undefined : tlsMaterial(config);
  // Kept in the data dir, as the CA is: service account tokens outlive a restart.
  const serviceAccountKey = loadOrCreateSigningKey(join(config.dataDir, 'service-account.key'));
  const storage = await openStorage(config.storage, { etcd: { caFile: config.etcdCafile, certFile: config.etcdCertfile, keyFile: config.etcdKeyfile } });
  let server: ClusterApiServer;
  try {
    server = await startServer({ storage, authenticator, tls, host: config.bindAddress, port: config.port, log, serviceAccountKey: () => serviceAccountKey, ...parts });
  } catch (err) {
    await storage.close();
    throw err;
  }
  if (!token) return { server };
  writeKubeconfig(config.kubeconfigOut, { server: server.url, token, ca: tls?.ca });
  return { server, kubeconfig: config.kubeconfigOut };
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
