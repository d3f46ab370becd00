/**
 * `cluster-api serve` as one ordered list of parts (ARCHITECTURE.md's local stack): api-server,
 * controller-manager, scheduler, node, registry, broker, gateway; `--disable <part>` leaves one out. Assembled here and
 * only here, run by the Supervisor (started in order, stopped in reverse, a failing part restarted or
 * the process ended with its name). A later part (activator, autoscaler) is one more
 * entry in `parts`. The API server installs the CRDs of the kinds its parts act on (serving/crds.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServeConfig } from '../config.js';
import { disabledParts } from '../config.js';
import { bridgeableCidr, reachableServiceCidr } from '../node/runtime/choose.js';
import { kubernetesServiceIP } from '../registry/kinds/kubernetes-service.js';
import type { Authenticator } from '../auth/authenticator.js';
import { loadTokenFile, tokenAuthenticator, withUsers } from '../auth/authenticator.js';
import { AdminUser, ensureAdminToken, firstToken, writeKubeconfig } from '../auth/credentials.js';
import { ensureCa, ensureTls, loadTls, servingHosts, type TlsMaterial } from '../auth/tls.js';
import { loadOrCreateSigningKey } from '../auth/service-account-tokens.js';
import { startEmbeddedBroker } from '../broker/cluster/embedded.js';
import type { ClusterBroker } from '../broker/cluster/start.js';
import { startInProcessControllerManager } from '../controllers/index.js';
import type { Registry } from '../registry/rest.js';
import { ensureFrontProxy } from '../aggregation/index.js';
import { openStorage } from '../storage/factory.js';
import { startServer, type ClusterApiServer, type StartOptions } from '../server.js';
import { ensureCreated, installBuiltinCrds } from '../serving/crds.js';
import { GatewayPolicy } from '../serving/gateway/role.js';
import { startGateway, type Gateway } from '../serving/gateway/gateway.js';
import { publishGatewayUrl } from '../serving/gateway/published.js';
import { BrokerIngressService, GatewayService, publishHostService } from './host-services.js';
import { RegistryPolicy } from '../image-registry/role.js';
import { startImageRegistry, uploadsDir, type ImageRegistry } from '../image-registry/registry.js';
import { publishRegistryHost } from '../image-registry/published.js';
import { brokerPart, gatewayPart, registryPart, embeddedClient, embeddedIdentities, nodePart, SchedulerUser, schedulerPart, startEmbeddedNode, type ApiEndpoint } from './embedded.js';
import { inProcessClient } from '../client/in-process.js';
import { part, type Part } from './part.js';
import { Supervisor } from './supervisor.js';

export interface Served {
  /** Its close() stops every part, in reverse order. */
  server: ClusterApiServer;
  /** The embedded node's container runtime (none without one). */
  containerRuntime?: string;
  /** Where the kubeconfig was written, if one was. */
  kubeconfig?: string;
  /** The embedded broker (`--broker`, the default), once started. */
  broker?: ClusterBroker;
  /** The ingress gateway, once started. */
  gateway?: Gateway;
  /** The OCI distribution registry, once started. */
  registry?: ImageRegistry;
  supervisor: Supervisor;
}

export interface ServeOptions extends Pick<StartOptions, 'podNetwork'> {
  /** Appended to the list, after the broker (what an embedding process brings). */
  parts?: readonly Part[];
  /** A part that cannot go on (default: logged only; cli.ts ends the process). */
  fatal?(message: string): void;
  /** Restart backoff (default 1 s doubling to 60 s). */
  backoffMs?: number;
}

type Log = NonNullable<StartOptions['log']>;

/** Everything `cluster-api serve` does before it waits for a signal. */
export async function serve(asked: ServeConfig, log?: Log, options: ServeOptions = {}): Promise<Served> {
  const config = withRuntime(asked);
  const { authenticator, token } = credentials(config);
  const tls = config.insecureHttp ? undefined : tlsMaterial(config);
  // The CA that signs node and component certificates; with a brought-in serving certificate too.
  const ca = ensureCa(join(config.dataDir, 'tls'));
  const off = disabledParts(config);
  const enabled = (name: string) => !off.has(name);
  const ids = embeddedIdentities(config, ca, enabled);
  // Kept in the data dir, as the CA is: service account tokens outlive a restart.
  const serviceAccountKey = loadOrCreateSigningKey(join(config.dataDir, 'service-account.key'));
  if (config.authorizationMode.includes('AlwaysAllow'))
    log?.({ level: 'warn', msg: '--authorization-mode AlwaysAllow: every authenticated user may do anything; RBAC objects are kept but not enforced' });

  let api: Awaited<ReturnType<typeof startServer>> | undefined;
  let broker: ClusterBroker | undefined;
  let gateway: Gateway | undefined;
  let imageRegistry: ImageRegistry | undefined;
  const endpoint = (): ApiEndpoint => ({ url: api!.url, ca: tls?.ca });
  const parts: Part[] = [
    part('api-server', async () => {
      const storage = await openStorage(config.storage, { etcd: { caFile: config.etcdCafile, certFile: config.etcdCertfile, keyFile: config.etcdKeyfile } });
      try {
        api = await startServer({
          storage, authenticator: withUsers(authenticator, ids.users), tls, host: config.bindAddress, port: config.port, log, serviceAccountKey: () => serviceAccountKey,
          controllers: config.controllers, controllerManager: false, authorization: config.authorizationMode,
          clientCa: tls ? ca.cert : undefined, kubeletClient: ids.kubeletClient, frontProxy: ensureFrontProxy(join(config.dataDir, 'tls')),
          bootstrapTokenAuth: config.enableBootstrapTokenAuth,
          serviceClusterIpRange: config.serviceClusterIpRange, runtimeConfig: config.runtimeConfig, kubernetesService: kubernetesService(config),
          ...(options.podNetwork && { podNetwork: options.podNetwork }),
        });
      } catch (err) {
        await storage.close();
        throw err;
      }
      await installBuiltinCrds(api.registry, { eventing: enabled('broker') && token !== undefined });
      await ensureCreated(api.registry, 'rbac.authorization.k8s.io', 'clusterroles', GatewayPolicy.clusterRoles);
      await ensureCreated(api.registry, 'rbac.authorization.k8s.io', 'clusterrolebindings', GatewayPolicy.clusterRoleBindings);
      await ensureCreated(api.registry, 'rbac.authorization.k8s.io', 'clusterrolebindings', RegistryPolicy.clusterRoleBindings);
      if (token) writeKubeconfig(config.kubeconfigOut, { server: api.url, token, ca: tls?.ca });
      const started = api;
      return { stop: () => started.close() };
    }, { restartable: false }),
    part('controller-manager', async () => startInProcessControllerManager(api!.registry, api!.authorizer, {
      log, controllers: config.controllers, signing: ca, apiServerUrl: api!.url, gatewayUrl: () => gateway?.url,
      nodes: { clusterCidr: config.clusterCidr, nodeCidrMaskSize: config.nodeCidrMaskSize, gracePeriodMs: config.nodeMonitorGracePeriod * 1000 },
      ...(config.storage.startsWith('etcd') && { leaderElection: { leaseDurationSeconds: config.leaderElectLeaseDuration } }),
    }), { source: new URL('../controllers/', import.meta.url) }),
    schedulerPart(() => inProcessClient(api!.registry, api!.authorizer, SchedulerUser), { elect: config.storage.startsWith('etcd'), log }),
    nodePart(() => startEmbeddedNode(config, ca, endpoint(), ids.nodeToken, log)),
    // The registry serves the node's image store (a push is the store) and asks the API about tokens as system:image-registry;
    // its address is published in kube-public/local-registry-hosting (KEP-1755).
    registryPart(async () => {
      imageRegistry = await startImageRegistry({ kube: embeddedClient(endpoint(), ids.registryToken, 'registry'), layout: join(config.dataDir, 'images'), uploads: uploadsDir(config.dataDir), host: config.bindAddress, port: config.registryPort, log });
      await publishRegistryHost(api!.registry, imageRegistry.host, config.containerRuntime !== 'oci').catch((err: Error) => log?.({ level: 'warn', msg: 'registry address not published', error: err.message }));
      return imageRegistry;
    }),
    // The broker acts with the admin's credentials (it grants itself its own identity): none without a kubeconfig.
    ...(token ? [brokerPart(async () => {
      broker = await startEmbeddedBroker({
        apiUrl: api!.url, ca: tls?.ca, token, log,
        store: config.brokerStore, port: config.brokerPort, host: config.brokerBindAddress, advertiseAddress: config.brokerAdvertiseAddress,
        gatewayUrl: () => gateway?.url,
      });
      // Pods with network namespaces of their own reach its ingress by name, as Knative's broker-ingress.
      if (kubernetesService(config)) await publishHostService(api!.registry, { ...BrokerIngressService, component: 'broker-ingress', host: config.brokerBindAddress, port: Number(new URL(broker.broker.url).port) })
        .catch((err: Error) => log?.({ level: 'warn', msg: 'broker-ingress Service not published', error: err.message }));
      return broker;
    })] : []),
    // The gateway reads Routes, Revisions, DomainMappings, Services and Endpoints as system:serving-gateway.
    // Its address is published in knative-serving/config-gateway for clients that only have the kubeconfig.
    gatewayPart(async () => {
      gateway = await startGateway({ kube: embeddedClient(endpoint(), ids.gatewayToken, 'gateway'), host: config.bindAddress, port: config.gatewayPort, log, asyncQueue: () => broker?.broker.invocations });
      await publishGatewayUrl(api!.registry, gateway.url).catch((err: Error) => log?.({ level: 'warn', msg: 'gateway address not published', error: err.message }));
      // Pods with network namespaces of their own reach it by name (a Route's cluster-local name points there).
      if (kubernetesService(config)) await publishHostService(api!.registry, { ...GatewayService, component: 'gateway', host: config.bindAddress, port: Number(new URL(gateway.url).port) })
        .catch((err: Error) => log?.({ level: 'warn', msg: 'gateway Service not published', error: err.message }));
      return gateway;
    }),
    ...(options.parts ?? []),
  ].filter((p) => enabled(p.name));
  const supervisor = new Supervisor(parts, {
    log, backoffMs: options.backoffMs,
    fatal: options.fatal ?? ((message) => log?.({ level: 'error', msg: 'part cannot go on', error: message })),
  });
  await supervisor.start();
  const { url, port } = api!;
  let closing: Promise<void> | undefined;
  return {
    server: { url, port, close: () => (closing ??= supervisor.stop()) },
    ...(token && { kubeconfig: config.kubeconfigOut }),
    ...(broker && { broker }),
    ...(gateway && { gateway }),
    ...(imageRegistry && { registry: imageRegistry }),
    supervisor,
    containerRuntime: config.disableAgent ? undefined : config.containerRuntime,
  };
}

/**
 * An oci node needs a pod CIDR it can bridge and Service clusterIPs its pods can reach (both outside
 * loopback); `cluster-api serve` chose the runtime (node/runtime/choose.ts); embedders that choose none get processes.
 */
function withRuntime(config: ServeConfig): ServeConfig {
  const runtime = config.containerRuntime ?? 'process';
  if (runtime !== 'oci') return { ...config, containerRuntime: runtime };
  const clusterCidr = bridgeableCidr(config.clusterCidr, config.dataDir);
  return { ...config, containerRuntime: runtime, clusterCidr, serviceClusterIpRange: reachableServiceCidr(config.serviceClusterIpRange, clusterCidr, config.dataDir) };
}

/** The names of the `kubernetes` Service the serving certificate holds beside its clusterIP, as kube-apiserver's. */
const KubernetesServiceNames = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'];

/** Pods reach the API through the `kubernetes` Service where they have network namespaces of their own, with a node agent to serve it. */
const kubernetesService = (config: ServeConfig): boolean => config.containerRuntime === 'oci' && !config.disableAgent;

function credentials(config: ServeConfig): { authenticator: Authenticator; token?: string } {
  if (config.tokenAuthFile)
    return { authenticator: loadTokenFile(config.tokenAuthFile), token: firstToken(readFileSync(config.tokenAuthFile, 'utf8')) };
  const token = ensureAdminToken(join(config.dataDir, 'admin.token'));
  return { authenticator: tokenAuthenticator(new Map([[token, AdminUser]])), token };
}

function tlsMaterial(config: ServeConfig): TlsMaterial {
  if (config.tlsCertFile && config.tlsPrivateKeyFile)
    return loadTls(config.tlsCertFile, config.tlsPrivateKeyFile, config.tlsCaFile);
  const service = kubernetesService(config) ? [kubernetesServiceIP(config.serviceClusterIpRange), ...KubernetesServiceNames] : [];
  return ensureTls(join(config.dataDir, 'tls'), [...servingHosts(config.bindAddress), ...service]);
}
