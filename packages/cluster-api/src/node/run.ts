/**
 * `cluster-api node`: a node agent in a process of its own, joining an API server by kubeconfig
 * (typically one `cluster-api node-credentials` minted). Its kubelet server uses the kubeconfig's
 * client certificate, which node credentials issue for serving too, and trusts the kubeconfig's CA
 * for the API server's client certificate.
 */
import { readFileSync } from 'node:fs';
import { KubeClient } from '@func/kube-client';
import { NodeAgent } from './agent.js';
import { leaseHeartbeat } from './heartbeat.js';
import { defaultNodeName, nodeNameOf, type NodeConfig } from './config.js';

export async function runNode(config: NodeConfig, log: (entry: Record<string, unknown>) => void): Promise<NodeAgent> {
  const kube = KubeClient.fromKubeconfig({ kubeconfig: config.kubeconfig, context: config.context });
  const creds = kube.connection.credentials;
  const name = config.name || nodeNameOf(creds.clientCert) || defaultNodeName();
  const cert = config.tlsCertFile ? readFileSync(config.tlsCertFile) : creds.clientCert;
  const key = config.tlsPrivateKeyFile ? readFileSync(config.tlsPrivateKeyFile) : creds.clientKey;
  const ca = kube.connection.ca;
  if (!cert || !key || !ca) log({ level: 'warn', msg: 'no certificate for the kubelet server (the kubeconfig has no client certificate and no --tls-cert-file was given): logs and tunnels to this node are unavailable', node: name });
  const agent = new NodeAgent({
    kube, name, dataDir: config.dataDir, images: config.images, simulate: config.simulate, hostIP: config.address,
    networkMode: config.podNetwork, maxPods: config.maxPods, rootCa: ca?.toString(), log,
    heartbeat: leaseHeartbeat(config.nodeLeaseDurationSeconds),
    ...(cert && key && ca ? { server: { cert, key, ca, host: config.address, port: config.kubeletPort } } : {}),
  });
  await agent.start();
  return agent;
}
