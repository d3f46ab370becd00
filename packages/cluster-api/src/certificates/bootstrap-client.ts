/**
 * A node agent's TLS bootstrap, as the kubelet's `--bootstrap-kubeconfig`: when its kubeconfig is
 * missing (or its client certificate has expired), the agent makes an ECDSA P-256 key, posts a
 * CertificateSigningRequest for `system:node:<name>` in `system:nodes` to the signer
 * `kubernetes.io/kube-apiserver-client-kubelet` with the bootstrap credentials (a bootstrap token),
 * waits for the certificate (auto-approved by the csrapproving controller when the token may ask
 * for node client certificates), and writes the kubeconfig (mode 0600) with that key and
 * certificate, the server and CA taken from the bootstrap kubeconfig. The bootstrap credentials are
 * used for nothing else.
 */
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { KubeApiError, KubeClient, resourceType } from '@func/kube-client';
import { writeKubeconfig } from '../auth/credentials.js';
import { KubeletClient } from './signers.js';
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
    return new BootstrapError(`the bootstrap credentials may not request certificates (403 Forbidden): ${err.status.message ?? ''}`.trim());
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * Makes sure `kubeconfig` holds the node's own credentials, bootstrapping them when it does not;
 * answers whether it bootstrapped.
 */
export async function ensureNodeCredentials(req: BootstrapRequest): Promise<boolean> {
  if (usable(req.kubeconfig)) return false;
  const bootstrap = KubeClient.fromKubeconfig({ kubeconfig: req.bootstrapKubeconfig });
  try {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const request = createCsr(privateKey, { commonName: `system:node:${req.nodeName}`, organizations: ['system:nodes'] });
    const created = await bootstrap.create(Csrs, {
      metadata: { generateName: 'node-csr-' } as { generateName: string; name?: string },
      spec: { request: Buffer.from(request).toString('base64'), signerName: KubeletClient, usages: ['digital signature', 'client auth'] },
    }).catch((err: unknown) => { throw explain(err); });
    const name = created.metadata.name!;
    req.log?.({ level: 'info', msg: 'certificate signing request posted, waiting for its certificate', csr: name, node: req.nodeName });
    const certificate = await waitForCertificate(bootstrap, name, req.timeoutMs ?? 15 * 60_000);
    const { server, ca } = bootstrap.connection;
    writeKubeconfig(req.kubeconfig, {
      server, ca: ca?.toString(), name: req.nodeName,
      clientCert: certificate, clientKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    });
    req.log?.({ level: 'info', msg: 'client certificate issued, kubeconfig written', csr: name, kubeconfig: req.kubeconfig });
    return true;
  } finally {
    bootstrap.close();
  }
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
