/**
 * Credentials for a node agent on another machine, minted by the server that holds the CA (the step
 * k3s' join token and kubeadm's TLS bootstrap automate): a kubeconfig whose client certificate names
 * the node as kube-apiserver's Node authorizer expects (CN `system:node:<name>`, O `system:nodes`).
 * The same certificate serves the agent's kubelet server (it names the node's addresses too), so
 * the API server can check that the agent it reaches is that node.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { kubeconfigYaml } from './credentials.js';
import { issueCertificate, loadCa } from './tls.js';

export interface NodeCredentialsRequest {
  dataDir: string;
  name: string;
  /** The node's addresses (its kubelet server's SANs); the name is always one. */
  addresses: readonly string[];
  /** The API server's URL as the node reaches it; default the data dir's kubeconfig's. */
  server?: string;
}

export class NodeCredentialsError extends Error {
  override readonly name = 'NodeCredentialsError';
}

/** The certificate request of a node: client and server at once. */
export const nodeCertificateRequest = (name: string, hosts: readonly string[]) =>
  ({ commonName: `system:node:${name}`, organizations: ['system:nodes'], hosts: [...new Set([name, ...hosts])], usages: ['client', 'server'] as const });

const NodeName = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export function nodeKubeconfig(req: NodeCredentialsRequest): string {
  if (!NodeName.test(req.name)) throw new NodeCredentialsError(`--name ${JSON.stringify(req.name)} is not a valid node name (a DNS-1123 subdomain)`);
  const tls = join(req.dataDir, 'tls');
  if (!existsSync(join(tls, 'ca.key'))) throw new NodeCredentialsError(`${tls} holds no CA key: run this where \`cluster-api serve\` keeps its data (--data-dir)`);
  const ca = loadCa(tls);
  const server = req.server ?? serverOf(join(req.dataDir, 'kubeconfig.yaml'));
  const { cert, key } = issueCertificate(ca, nodeCertificateRequest(req.name, req.addresses));
  // The agent verifies the API server with it, and the API server's kubelet client certificate (this
  // CA's): both CAs when a brought-in serving certificate chains to another.
  const serving = servingCaOf(join(req.dataDir, 'kubeconfig.yaml'));
  const bundle = serving && serving.trim() !== ca.cert.trim() ? `${serving.trim()}\n${ca.cert}` : ca.cert;
  return kubeconfigYaml({ server, clientCert: cert, clientKey: key, ca: bundle, name: req.name });
}

function readKubeconfig(file: string): { clusters?: { cluster?: Record<string, string> }[] } | undefined {
  return existsSync(file) ? (parse(readFileSync(file, 'utf8')) as { clusters?: { cluster?: Record<string, string> }[] }) : undefined;
}

function serverOf(file: string): string {
  const server = readKubeconfig(file)?.clusters?.[0]?.cluster?.server;
  if (!server) throw new NodeCredentialsError(`no server URL: pass --server (${file} names none)`);
  return server;
}

/** The CA the API server's certificate chains to, as the admin kubeconfig embeds it. */
function servingCaOf(file: string): string | undefined {
  const data = readKubeconfig(file)?.clusters?.[0]?.cluster?.['certificate-authority-data'];
  return data ? Buffer.from(data, 'base64').toString('utf8') : undefined;
}
