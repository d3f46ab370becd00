/**
 * What `cluster-api serve` runs beside the API server, as k3s runs a kubelet and kube-scheduler in
 * its server process: the scheduler and a node agent, each a client of the API over HTTPS with an
 * identity of its own (`system:kube-scheduler`, `system:node:<name>` in `system:nodes`; tokens known
 * to this process only), so they behave exactly as they would in processes of their own. The node's
 * kubelet server gets a certificate from the data directory's CA naming the node, and the API
 * server a kubelet client certificate (`kube-apiserver-kubelet-client`, system:masters) to reach it.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { KubeClient, LeaderElector } from '@func/kube-client';
import type { ServeConfig } from './config.js';
import type { UserInfo } from './registry/rest.js';
import { ensureIssued, type CertificateAuthority } from './auth/tls.js';
import { nodeCertificateRequest } from './auth/node-credentials.js';
import { NodeAgent } from './node/agent.js';
import { leaseHeartbeat } from './node/heartbeat.js';
import type { KubeletClientTls } from './node/kubelet-client.js';
import { Scheduler } from './scheduler/scheduler.js';

export interface Components {
  /** Tokens of the embedded components, for the API server's authenticator. */
  users: Map<string, UserInfo>;
  kubeletClient: KubeletClientTls;
  /** Starts them against the listening server. */
  start(server: string, ca: string | undefined, log?: (e: Record<string, unknown>) => void): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A client of this very process's listening socket. A brought-in serving certificate whose CA is
 * unknown (kubectl would use the system roots) is not verified: the connection never leaves the process.
 */
const client = (server: string, ca: string | undefined, token: string) =>
  new KubeClient({ server, ca: ca ? Buffer.from(ca) : undefined, insecureSkipTlsVerify: !ca && server.startsWith('https:'), credentials: { token }, namespace: 'default', context: 'embedded', files: [] });

/**
 * The scheduler; on a store several servers share (etcd), only the one holding the kube-system
 * `kube-scheduler` Lease schedules, as kube-scheduler's --leader-elect. (On SQLite there is one.)
 */
async function startScheduler(kube: KubeClient, elect: boolean, log?: (e: Record<string, unknown>) => void): Promise<{ stop(): Promise<void> }> {
  if (!elect) {
    const scheduler = new Scheduler({ kube, log });
    await scheduler.start();
    return scheduler;
  }
  let running: Promise<Scheduler> | undefined;
  const stopRunning = async () => {
    const was = running;
    running = undefined;
    await (await was)?.stop();
  };
  const elector = new LeaderElector(kube, {
    namespace: 'kube-system', name: 'kube-scheduler', identity: `${hostname()}_${randomBytes(8).toString('hex')}`, releaseOnStop: true,
    onStartedLeading: () => void (running = (async () => {
      const scheduler = new Scheduler({ kube, log });
      await scheduler.start();
      return scheduler;
    })()),
    onStoppedLeading: () => void stopRunning(),
    onError: (err) => log?.({ level: 'warn', msg: 'scheduler leader election', error: (err as Error).message }),
  }).start();
  return { stop: async () => (await elector.stop(), await stopRunning()) };
}

export function components(config: ServeConfig, ca: CertificateAuthority): Components {
  const tlsDir = join(config.dataDir, 'tls');
  const nodeToken = randomBytes(32).toString('base64url');
  const schedulerToken = randomBytes(32).toString('base64url');
  const users = new Map<string, UserInfo>();
  if (!config.disableAgent) users.set(nodeToken, { name: `system:node:${config.nodeName}`, uid: '', groups: ['system:nodes'] });
  if (!config.disableScheduler) users.set(schedulerToken, { name: 'system:kube-scheduler', uid: '', groups: [] });
  const apiClient = ensureIssued(tlsDir, 'kubelet-client', ca, { commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'], usages: ['client'] });
  let agent: NodeAgent | undefined;
  let scheduler: { stop(): Promise<void> } | undefined;
  return {
    users,
    kubeletClient: { ...apiClient, ca: ca.cert },
    async start(server, serverCa, log) {
      if (!config.disableScheduler) scheduler = await startScheduler(client(server, serverCa, schedulerToken), config.storage.startsWith('etcd'), log);
      if (!config.disableAgent) {
        const serving = ensureIssued(tlsDir, `node-${config.nodeName}`, ca, nodeCertificateRequest(config.nodeName, ['127.0.0.1', 'localhost']));
        agent = new NodeAgent({
          kube: client(server, serverCa, nodeToken), name: config.nodeName, dataDir: join(config.dataDir, 'agent'), images: join(config.dataDir, 'images'),
          simulate: config.simulate, maxPods: config.maxPods, networkMode: config.podNetwork, rootCa: serverCa, log,
          heartbeat: leaseHeartbeat(config.nodeLeaseDurationSeconds),
          server: { ...serving, ca: ca.cert, port: config.kubeletPort },
        });
        await agent.start();
      }
    },
    async stop() {
      await agent?.stop();
      await scheduler?.stop();
    },
  };
}
