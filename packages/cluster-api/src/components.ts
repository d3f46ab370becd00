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
import { KubeClient } from '@func/kube-client';
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

const client = (server: string, ca: string | undefined, token: string) =>
  new KubeClient({ server, ca: ca ? Buffer.from(ca) : undefined, insecureSkipTlsVerify: false, credentials: { token }, namespace: 'default', context: 'embedded', files: [] });

export function components(config: ServeConfig, ca: CertificateAuthority): Components {
  const tlsDir = join(config.dataDir, 'tls');
  const nodeToken = randomBytes(32).toString('base64url');
  const schedulerToken = randomBytes(32).toString('base64url');
  const users = new Map<string, UserInfo>();
  if (!config.disableAgent) users.set(nodeToken, { name: `system:node:${config.nodeName}`, uid: '', groups: ['system:nodes'] });
  if (!config.disableScheduler) users.set(schedulerToken, { name: 'system:kube-scheduler', uid: '', groups: [] });
  const apiClient = ensureIssued(tlsDir, 'kubelet-client', ca, { commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'], usages: ['client'] });
  let agent: NodeAgent | undefined;
  let scheduler: Scheduler | undefined;
  return {
    users,
    kubeletClient: { ...apiClient, ca: ca.cert },
    async start(server, serverCa, log) {
      if (!config.disableScheduler) {
        scheduler = new Scheduler({ kube: client(server, serverCa, schedulerToken), log });
        await scheduler.start();
      }
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
