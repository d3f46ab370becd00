/**
 * `cluster-api node`: a node agent in a process of its own, joining an API server by kubeconfig
 * (typically one `cluster-api node-credentials` minted). Its kubelet server uses the kubeconfig's
 * client certificate, which node credentials issue for serving too, and trusts the kubeconfig's CA
 * for the API server's client certificate. With `--bootstrap-kubeconfig` it first obtains that
 * kubeconfig by TLS bootstrap (certificates/bootstrap-client.ts) when it does not exist yet; such a
 * certificate is for clients only, so the kubelet server then needs --tls-cert-file, or
 * --server-tls-bootstrap to ask for one from kubernetes.io/kubelet-serving.
 */
import { imageGcPolicy } from './image-gc.js';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeClient } from '@func/kube-client';
import { ensureNodeCredentials, ensureServingCertificate } from '../certificates/bootstrap-client.js';
import { NodeAgent } from './agent.js';
import { chooseContainerRuntime } from './runtime/choose.js';
import { leaseHeartbeat } from './heartbeat.js';
import { defaultNodeName, nodeNameOf, type NodeConfig } from './config.js';

/** Whether a certificate may serve TLS (no extended key usage, or server auth among them). */
const serves = (pem: Buffer): boolean => {
  const purposes = new X509Certificate(pem).keyUsage;
  return !purposes || purposes.includes('1.3.6.1.5.5.7.3.1');
};

export async function runNode(config: NodeConfig, log: (entry: Record<string, unknown>) => void): Promise<NodeAgent> {
  if (config.bootstrapKubeconfig)
    await ensureNodeCredentials({ bootstrapKubeconfig: config.bootstrapKubeconfig, kubeconfig: config.kubeconfig!, nodeName: config.name || defaultNodeName(), log });
  const kube = KubeClient.fromKubeconfig({ kubeconfig: config.kubeconfig, context: config.context });
  const creds = kube.connection.credentials;
  const name = config.name || nodeNameOf(creds.clientCert) || defaultNodeName();
  const serving = config.serverTlsBootstrap
    ? await ensureServingCertificate({ client: kube, nodeName: name, addresses: [config.address], dir: join(config.dataDir, 'pki'), log })
    : undefined;
  // A client-only certificate (a TLS-bootstrapped one) cannot serve the kubelet server.
  const cert = serving?.cert ?? (config.tlsCertFile ? readFileSync(config.tlsCertFile) : creds.clientCert && serves(creds.clientCert) ? creds.clientCert : undefined);
  const key = serving?.key ?? (config.tlsPrivateKeyFile ? readFileSync(config.tlsPrivateKeyFile) : cert && creds.clientKey);
  const ca = kube.connection.ca;
  if (!cert || !key || !ca) log({ level: 'warn', msg: 'no certificate for the kubelet server (the kubeconfig has no client certificate that may serve, as a TLS-bootstrapped one, and no --tls-cert-file was given): logs and tunnels to this node are unavailable', node: name });
  // oci only when asked: a node joining a cluster cannot know before it registers whether the pod CIDR it will be given can be bridged.
  const containerRuntime = config.containerRuntime && chooseContainerRuntime(config.containerRuntime).runtime;
  const agent = new NodeAgent({
    kube, name, dataDir: config.dataDir, images: config.images, simulate: config.simulate, hostIP: config.address, containerRuntime,
    networkMode: config.podNetwork, maxPods: config.maxPods, rootCa: ca?.toString(), log,
    logLimits: { maxBytes: config.containerLogMaxSize, maxFiles: config.containerLogMaxFiles }, ociSandboxPool: config.ociSandboxPool,
    imageGc: imageGcPolicy(config),
    clusterDns: config.clusterDns, clusterDomain: config.clusterDomain, kubeReserved: config.kubeReserved,
    heartbeat: leaseHeartbeat(config.nodeLeaseDurationSeconds),
    ...(cert && key && ca ? { server: { cert, key, ca, host: config.address, port: config.kubeletPort } } : {}),
  });
  await agent.start();
  return agent;
}
