/**
 * The parts `cluster-api serve` runs beside the API server, as k3s runs a kubelet and kube-scheduler in
 * its server process, each with an identity of its own: the scheduler through the in-process
 * ApiClient as `system:kube-scheduler` (authorized as over HTTP, no HTTP), the node agent over HTTPS
 * as `system:node:<name>` in `system:nodes` (a token known to this process only), so each behaves
 * as it would in a process of its own. The node's kubelet server gets a
 * certificate from the data directory's CA naming the node, and the API server a kubelet client
 * certificate (`kube-apiserver-kubelet-client`, system:masters) to reach it.
 */
import { imageGcPolicy } from '../node/image-gc.js';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { KubeClient, runWhileLeading } from '@func/kube-client';
import type { ApiClient } from '../client/interface.js';
import { leaseClient } from '../client/lease.js';
import type { ServeConfig } from '../config.js';
import type { UserInfo } from '../registry/rest.js';
import { ensureIssued, type CertificateAuthority } from '../auth/tls.js';
import { nodeCertificateRequest } from '../auth/node-credentials.js';
import { NodeAgent } from '../node/agent.js';
import { leaseHeartbeat } from '../node/heartbeat.js';
import type { KubeletClientTls } from '../node/kubelet-client.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { BrokerStartError } from '../broker/cluster/embedded.js';
import { GatewayUser } from '../serving/gateway/role.js';
import { RegistryUser } from '../image-registry/role.js';
import { part, type Part, type Running } from './part.js';
import { clusterDnsIP } from '../registry/kinds/kubernetes-service.js';

type Log = (e: Record<string, unknown>) => void;

/** Where the embedded parts reach the API server: known once it listens. */
export interface ApiEndpoint {
  url: string;
  ca?: string;
}

/**
 * A client of this very process's listening socket. A brought-in serving certificate whose CA is
 * unknown (kubectl would use the system roots) is not verified: the connection never leaves the process.
 */
export const embeddedClient = ({ url, ca }: ApiEndpoint, token: string, context = 'embedded') =>
  new KubeClient({ server: url, ca: ca ? Buffer.from(ca) : undefined, insecureSkipTlsVerify: !ca && url.startsWith('https:'), credentials: { token }, namespace: 'default', context, files: [] });

/**
 * The scheduler part, for `serve` and `cluster-api scheduler` alike. With `elect` (a store several
 * servers share: etcd), only the holder of the kube-system `kube-scheduler` Lease schedules, as
 * kube-scheduler's --leader-elect.
 */
export function schedulerPart(connect: () => ApiClient | Promise<ApiClient>, o: { elect: boolean; schedulerName?: string; log?: Log }): Part {
  return part('scheduler', async (ctx): Promise<Running> => {
    const client = await connect();
    const startScheduler = async (): Promise<Scheduler> => {
      const scheduler = new Scheduler({ client, schedulerName: o.schedulerName, log: o.log });
      await scheduler.start();
      return scheduler;
    };
    if (!o.elect) return startScheduler();
    return runWhileLeading(leaseClient(client), {
      namespace: 'kube-system', name: 'kube-scheduler', identity: `${hostname()}_${randomBytes(8).toString('hex')}`, releaseOnStop: true,
      onError: (err) => o.log?.({ level: 'warn', msg: 'scheduler leader election', error: (err as Error).message }),
    }, startScheduler, (err) => ctx.failed(err));
  }, { source: new URL('../scheduler/', import.meta.url) });
}

/** The node part: `start` makes and starts the agent (embedded, or `cluster-api node`'s runNode). */
export const nodePart = (start: () => Promise<Running>): Part => part('node', start, { source: new URL('../node/', import.meta.url) });

/** The broker part: `start` starts it (embedded, or `cluster-api broker`'s own); a start error (BrokerStartError) is for the operator to mend. */
export const brokerPart = (start: () => Promise<Running>): Part =>
  part('broker', start, { source: new URL('../broker/', import.meta.url), permanent: (err) => err instanceof BrokerStartError });

/** kube-scheduler's identity, bound to its bootstrap role `system:kube-scheduler`. */
export const SchedulerUser: UserInfo = { name: 'system:kube-scheduler', uid: '', groups: ['system:authenticated'] };

/** The gateway part: `start` starts the ingress gateway; its port in use is for the operator to mend (a permanent failure). */
export const gatewayPart = (start: () => Promise<Running>): Part => part('gateway', start, { source: new URL('../serving/gateway/', import.meta.url) });

/** The registry part: `start` starts the OCI distribution registry; its port in use is for the operator to mend. */
export const registryPart = (start: () => Promise<Running>): Part => part('registry', start, { source: new URL('../image-registry/', import.meta.url) });

/** The identities of the embedded node, gateway and registry, for the API server's authenticator, and the kubelet client certificate. */
export interface EmbeddedIdentities {
  users: Map<string, UserInfo>;
  kubeletClient: KubeletClientTls;
  nodeToken: string;
  /** The gateway's (system:serving-gateway, serving/gateway/role.ts). */
  gatewayToken: string;
  /** The registry's (system:image-registry, image-registry/role.ts). */
  registryToken: string;
}

export function embeddedIdentities(config: ServeConfig, ca: CertificateAuthority, enabled: (name: string) => boolean): EmbeddedIdentities {
  const tlsDir = join(config.dataDir, 'tls');
  const nodeToken = randomBytes(32).toString('base64url');
  const gatewayToken = randomBytes(32).toString('base64url');
  const registryToken = randomBytes(32).toString('base64url');
  const users = new Map<string, UserInfo>();
  if (enabled('node')) users.set(nodeToken, { name: `system:node:${config.nodeName}`, uid: '', groups: ['system:nodes'] });
  if (enabled('gateway')) users.set(gatewayToken, { name: GatewayUser, uid: '', groups: [] });
  if (enabled('registry')) users.set(registryToken, { name: RegistryUser, uid: '', groups: [] });
  const apiClient = ensureIssued(tlsDir, 'kubelet-client', ca, { commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'], usages: ['client'] });
  return { users, kubeletClient: { ...apiClient, ca: ca.cert }, nodeToken, gatewayToken, registryToken };
}

/** The node agent `serve` embeds, over the data directory. */
export async function startEmbeddedNode(config: ServeConfig, ca: CertificateAuthority, api: ApiEndpoint, token: string, log?: Log): Promise<NodeAgent> {
  const serving = ensureIssued(join(config.dataDir, 'tls'), `node-${config.nodeName}`, ca, nodeCertificateRequest(config.nodeName, ['127.0.0.1', 'localhost']));
  const agent = new NodeAgent({
    kube: embeddedClient(api, token), name: config.nodeName, dataDir: join(config.dataDir, 'agent'), images: join(config.dataDir, 'images'),
    simulate: config.simulate, containerRuntime: config.containerRuntime, maxPods: config.maxPods, networkMode: config.podNetwork, rootCa: api.ca, log,
    logLimits: { maxBytes: config.containerLogMaxSize, maxFiles: config.containerLogMaxFiles }, kubeReserved: config.kubeReserved, imageGc: imageGcPolicy(config), ociSandboxPool: config.ociSandboxPool,
    // Where the server keeps the kube-dns Service (serve/index.ts: oci nodes), the node answers on it.
    ...(config.containerRuntime === 'oci' && { clusterDns: clusterDnsIP(config.serviceClusterIpRange) }),
    heartbeat: leaseHeartbeat(config.nodeLeaseDurationSeconds),
    server: { ...serving, ca: ca.cert, port: config.kubeletPort },
  });
  try {
    await agent.start();
  } catch (err) {
    await agent.stop().catch(() => undefined);
    throw err;
  }
  return agent;
}
