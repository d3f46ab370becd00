/**
 * A node agent's TLS bootstrap, as the kubelet's `--bootstrap-kubeconfig`: when its kubeconfig is
 * missing (or its client certificate has expired), the agent makes an ECDSA P-256 key, posts a
 * CertificateSigningRequest for `system:node:<name>` in `system:nodes` to the signer
 * `kubernetes.io/kube-apiserver-client-kubelet` with the bootstrap credentials (a bootstrap token),
 * waits for the certificate (auto-approved by the csrapproving controller when the token may ask
 * for node client certificates), and writes the kubeconfig (mode 0600) with that key and
 * certificate, the server and CA taken from the bootstrap kubeconfig. The bootstrap credentials are
 * used for nothing else. With serverTLSBootstrap (`--server-tls-bootstrap`) the kubelet server's
 * certificate is asked for the same way, from `kubernetes.io/kubelet-serving`.
 */
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { KubeApiError, KubeClient, resourceType } from '@func/kube-client';
import { writeKubeconfig } from '../auth/credentials.js';
import { KubeletClient, KubeletServing } from './signers.js';
import { createCsr } from './x509.js';

export class BootstrapError extends Error {
  override readonly name = 'BootstrapError';
}

const Csrs = resourceType('certificates.k8s.io/v1', 'CertificateSigningRequest', 'certificatesigningrequests', false);

interface CsrObject {
  metadata: { name?: string };
  status?: { certificate?: string; conditions?: { type?: string; reason?: string; message?: string }[] };
}

export interface BootstrapRequest {
  /** The kubeconfig with bootstrap credentials (`--bootstrap-kubeconfig`). */
  bootstrapKubeconfig: string;
  /** Where the node's own kubeconfig is (or will be) written (`--kubeconfig`). */
  kubeconfig: string;
  nodeName: string;
  /** Give up after this long without a certificate (default 15 minutes, as the kubelet). */
  timeoutMs?: number;
  log?: (entry: Record<string, unknown>) => void;
}

/** Whether `file` is a kubeconfig whose client certificate is still valid. */
function usable(file: string): boolean {
  if (!existsSync(file)) return false;
  try {
    const cert = KubeClient.fromKubeconfig({ kubeconfig: file }).connection.credentials.clientCert;
    return !cert || Date.parse(new X509Certificate(cert).validTo) > Date.now();
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a refusal from the API server means to whoever runs the node. */
function explain(err: unknown): Error {
  if (err instanceof KubeApiError && err.code === 401)
    return new BootstrapError('the API server refused the bootstrap credentials (401 Unauthorized): the bootstrap token is unknown, expired or not meant for authentication');
  if (err instanceof KubeApiError && err.code === 403)
    return new BootstrapError(`these credentials may not request certificates (403 Forbidden): ${err.status.message ?? ''}`.trim());
  return err instanceof Error ? err : new Error(String(err));
}

interface CertificateAsk {
  signerName: string;
  commonName: string;
  organizations: string[];
  usages: string[];
  hosts?: string[];
  timeoutMs: number;
  log?: BootstrapRequest['log'];
}

/** Posts a CSR for a new ECDSA P-256 key and waits for its certificate: the key and certificate as PEM. */
async function requestCertificate(client: KubeClient, ask: CertificateAsk): Promise<{ cert: string; key: string; csr: string }> {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const request = createCsr(privateKey, { commonName: ask.commonName, organizations: ask.organizations, hosts: ask.hosts });
  const created = await client.create(Csrs, {
    metadata: { generateName: ask.signerName === KubeletClient ? 'node-csr-' : 'csr-' } as { generateName: string; name?: string },
    spec: { request: Buffer.from(request).toString('base64'), signerName: ask.signerName, usages: ask.usages },
  }).catch((err: unknown) => { throw explain(err); });
  const name = created.metadata.name!;
  ask.log?.({ level: 'info', msg: 'certificate signing request posted, waiting for its certificate', csr: name, signerName: ask.signerName });
  const cert = await waitForCertificate(client, name, ask.timeoutMs);
  return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), csr: name };
}

/**
 * Makes sure `kubeconfig` holds the node's own credentials, bootstrapping them when it does not;
 * answers whether it bootstrapped.
 */
export async function ensureNodeCredentials(req: BootstrapRequest): Promise<boolean> {
  if (usable(req.kubeconfig)) return false;
  const bootstrap = KubeClient.fromKubeconfig({ kubeconfig: req.bootstrapKubeconfig });
  try {
    const { cert, key, csr } = await requestCertificate(bootstrap, {
      signerName: KubeletClient, commonName: `system:node:${req.nodeName}`, organizations: ['system:nodes'],
      usages: ['digital signature', 'client auth'], timeoutMs: req.timeoutMs ?? 15 * 60_000, log: req.log,
    });
    const { server, ca } = bootstrap.connection;
    writeKubeconfig(req.kubeconfig, { server, ca: ca?.toString(), name: req.nodeName, clientCert: cert, clientKey: key });
    req.log?.({ level: 'info', msg: 'client certificate issued, kubeconfig written', csr, kubeconfig: req.kubeconfig });
    return true;
  } finally {
    bootstrap.close();
  }
}

export interface ServingRequest {
  /** The node's own client (it asks as system:node:<name>). */
  client: KubeClient;
  nodeName: string;
  /** The node's addresses, named in the certificate with its name. */
  addresses: readonly string[];
  /** Where the certificate and key are kept (`kubelet-server.crt`, `.key`). */
  dir: string;
  timeoutMs?: number;
  log?: BootstrapRequest['log'];
}

/** A kept serving certificate that is still valid and names every host. */
function keptServing(certFile: string, keyFile: string, hosts: readonly string[]): { cert: Buffer; key: Buffer } | undefined {
  if (!existsSync(certFile) || !existsSync(keyFile)) return undefined;
  try {
    const cert = readFileSync(certFile);
    const x = new X509Certificate(cert);
    const names = hosts.every((h) => (isIP(h) ? x.checkIP(h) : x.checkHost(h, { subject: 'never' })) !== undefined);
    return names && Date.parse(x.validTo) > Date.now() ? { cert, key: readFileSync(keyFile) } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The kubelet's serverTLSBootstrap: the kubelet server's certificate from the signer
 * `kubernetes.io/kubelet-serving`, asked for with the node's own credentials and kept in `dir`.
 * Nothing approves such requests on its own (a node must not name addresses it does not have):
 * the node waits until an administrator runs `kubectl certificate approve`.
 */
export async function ensureServingCertificate(req: ServingRequest): Promise<{ cert: Buffer; key: Buffer }> {
  const hosts = [...new Set([req.nodeName, ...req.addresses])];
  const certFile = join(req.dir, 'kubelet-server.crt');
  const keyFile = join(req.dir, 'kubelet-server.key');
  const kept = keptServing(certFile, keyFile, hosts);
  if (kept) return kept;
  const { cert, key, csr } = await requestCertificate(req.client, {
    signerName: KubeletServing, commonName: `system:node:${req.nodeName}`, organizations: ['system:nodes'], hosts,
    usages: ['digital signature', 'server auth'], timeoutMs: req.timeoutMs ?? 24 * 3600_000, log: req.log,
  });
  mkdirSync(req.dir, { recursive: true, mode: 0o700 });
  writeFileSync(keyFile, key, { mode: 0o600 });
  writeFileSync(certFile, cert, { mode: 0o644 });
  req.log?.({ level: 'info', msg: 'serving certificate issued', csr, cert: certFile });
  return { cert: Buffer.from(cert), key: Buffer.from(key) };
}

async function waitForCertificate(client: KubeClient, name: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
    const csr = await client.get<CsrObject>(Csrs, name).catch((err: unknown) => { throw explain(err); });
    const refused = csr.status?.conditions?.find((c) => c.type === 'Denied' || c.type === 'Failed');
    if (refused) throw new BootstrapError(`certificate signing request ${name} was ${refused.type === 'Denied' ? 'denied' : 'not signed'}: ${refused.message || refused.reason || refused.type}`);
    if (csr.status?.certificate) return Buffer.from(csr.status.certificate, 'base64').toString('utf8');
    if (Date.now() >= deadline) throw new BootstrapError(`certificate signing request ${name} was not issued in ${Math.round(timeoutMs / 1000)} s (approve it with: kubectl certificate approve ${name})`);
    await sleep(delay);
  }
}
