/**
 * Serving certificates, as k3s makes them: on first start a private CA and a serving certificate for
 * the server's addresses, kept in the data directory and reused afterwards. kubectl never sends a
 * bearer token over plain HTTP, so TLS is what makes `KUBECONFIG=… kubectl get ns` work in one step.
 * Go's TLS (kubectl) ignores the CN and checks only subjectAltName, so every address goes in the SAN.
 */
import { type KeyObject, X509Certificate, createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type Forge from 'node-forge';

// Loaded only when a certificate must be made: forge is large, and every start after the first
// only reads PEM files, which Node's own X509Certificate checks.
let forgeModule: typeof Forge | undefined;
const forge = (): typeof Forge => (forgeModule ??= createRequire(import.meta.url)('node-forge') as typeof Forge);

export interface TlsMaterial {
  cert: string;
  key: string;
  /** The CA that signed `cert`, embedded in the generated kubeconfig; undefined when unknown (system roots). */
  ca?: string;
}

/** A PEM file that does not hold what its flag names: the message says which file and why, never its content. */
export class TlsFileError extends Error {
  override readonly name = 'TlsFileError';
}

const PemCertificate = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

function certificates(pem: string, file: string, flag: string): X509Certificate[] {
  const blocks = pem.match(PemCertificate) ?? [];
  if (blocks.length === 0) throw new TlsFileError(`${flag} ${file}: no PEM certificate in the file`);
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch (err) {
      throw new TlsFileError(`${flag} ${file}: certificate ${i + 1} cannot be read: ${(err as Error).message}`);
    }
  });
}

/** The self-signed certificate a chain ends in (the leaf itself if it is self-signed), if the file holds it. */
function chainRoot(chain: readonly X509Certificate[]): string | undefined {
  const last = chain.at(-1)!;
  return last.checkIssued(last) && last.verify(last.publicKey) ? last.toString() : undefined;
}

/**
 * A certificate made elsewhere (`--tls-cert-file`). The kubeconfig gets `--tls-ca-file` when given, else
 * the root the certificate file's chain ends in; with neither, kubectl falls back to the system roots,
 * which is right for a certificate from a public CA.
 */
export function loadTls(certFile: string, keyFile: string, caFile?: string): TlsMaterial {
  const cert = readFileSync(certFile, 'utf8');
  const chain = certificates(cert, certFile, '--tls-cert-file');
  const key = readFileSync(keyFile, 'utf8');
  if (!chain[0]!.checkPrivateKey(privateKeyOf(key, keyFile)))
    throw new TlsFileError(`--tls-private-key-file ${keyFile}: not the private key of the certificate in ${certFile}`);
  if (caFile === undefined) {
    const root = chainRoot(chain);
    return root ? { cert, key, ca: root } : { cert, key };
  }
  const ca = readFileSync(caFile, 'utf8');
  certificates(ca, caFile, '--tls-ca-file');
  return { cert, key, ca };
}

function privateKeyOf(pem: string, file: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (err) {
    throw new TlsFileError(`--tls-private-key-file ${file}: no private key can be read: ${(err as Error).message}`);
  }
}

const caYears = 10;
const servingYears = 1;
/** Regenerate the serving certificate this long before it expires (k3s renews within 90 days). */
const renewBeforeMs = 90 * 24 * 3600 * 1000;

const files = (dir: string) => ({
  caCert: join(dir, 'ca.crt'),
  caKey: join(dir, 'ca.key'),
  cert: join(dir, 'serving.crt'),
  key: join(dir, 'serving.key'),
});

/** The data dir's CA, created on first use. */
export function ensureCa(tlsDir: string): CertificateAuthority {
  mkdirSync(tlsDir, { recursive: true, mode: 0o700 });
  const f = files(tlsDir);
  if (!existsSync(f.caCert) || !existsSync(f.caKey)) {
    const ca = createCa();
    writeSecret(f.caKey, ca.key);
    writeFileSync(f.caCert, ca.cert, { mode: 0o644 });
  }
  return loadCa(tlsDir);
}

/** Load the data dir's CA and serving certificate, creating or renewing what is missing, stale or too narrow. */
export function ensureTls(tlsDir: string, hosts: readonly string[]): TlsMaterial {
  const f = files(tlsDir);
  const ca = ensureCa(tlsDir);
  if (!existsSync(f.cert) || !existsSync(f.key) || !certificateFits(readFileSync(f.cert, 'utf8'), hosts)) {
    const serving = createServingCert(ca, hosts);
    writeSecret(f.key, serving.key);
    writeFileSync(f.cert, serving.cert, { mode: 0o644 });
  }
  return { cert: readFileSync(f.cert, 'utf8'), key: readFileSync(f.key, 'utf8'), ca: ca.cert };
}

const writeSecret = (file: string, content: string): void => writeFileSync(file, content, { mode: 0o600 });

function certificateFits(pem: string, hosts: readonly string[]): boolean {
  try {
    const cert = new X509Certificate(pem);
    if (Date.parse(cert.validTo) - Date.now() < renewBeforeMs) return false;
    return hosts.every((h) => (isIP(h) ? cert.checkIP(h) : cert.checkHost(h, { subject: 'never' })) !== undefined);
  } catch {
    return false;
  }
}

/** Node's native key generation: forge's own is pure JavaScript and takes seconds. */
function rsaKeyPair(): { publicKey: Forge.pki.rsa.PublicKey; privateKey: Forge.pki.rsa.PrivateKey } {
  const pair = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKey: forge().pki.publicKeyFromPem(pair.publicKey), privateKey: forge().pki.privateKeyFromPem(pair.privateKey) as Forge.pki.rsa.PrivateKey };
}

function newCertificate(publicKey: Forge.pki.PublicKey, years: number): Forge.pki.Certificate {
  const cert = forge().pki.createCertificate();
  cert.publicKey = publicKey;
  // Positive 128-bit serial: the high bit cleared so DER does not read it as negative.
  const serial = randomBytes(16);
  serial[0]! &= 0x7f;
  cert.serialNumber = serial.toString('hex');
  const now = new Date();
  cert.validity.notBefore = new Date(now.getTime() - 60_000);
  cert.validity.notAfter = new Date(now.getTime() + years * 365 * 24 * 3600 * 1000);
  return cert;
}

/** UTF8String, not forge's default PrintableString, which may not hold `@` (Go's x509 refuses it). */
const commonName = (value: string) => ({ name: 'commonName', value, valueTagClass: forge().asn1.Type.UTF8 as unknown as Forge.asn1.Class });

function createCa(): { cert: string; key: string } {
  const keys = rsaKeyPair();
  const cert = newCertificate(keys.publicKey, caYears);
  const subject = [commonName(`cluster-api-ca@${Math.floor(Date.now() / 1000)}`)];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge().md.sha256.create());
  return { cert: forge().pki.certificateToPem(cert), key: forge().pki.privateKeyToPem(keys.privateKey) };
}

function createServingCert(ca: CertificateAuthority, hosts: readonly string[]): { cert: string; key: string } {
  return issueCertificate(ca, { commonName: 'cluster-api', hosts, usages: ['server'] });
}

/** The data directory's CA, which signs node, scheduler and kubelet-client certificates too. */
export interface CertificateAuthority {
  cert: string;
  key: string;
}

export const loadCa = (tlsDir: string): CertificateAuthority => {
  const f = files(tlsDir);
  return { cert: readFileSync(f.caCert, 'utf8'), key: readFileSync(f.caKey, 'utf8') };
};

export interface CertificateRequest {
  /** The subject's CN: the user name, for a client certificate. */
  commonName: string;
  /** The subject's O entries: the user's groups, for a client certificate. */
  organizations?: readonly string[];
  /** DNS names and IP addresses (subjectAltName), for a serving certificate. */
  hosts?: readonly string[];
  usages: readonly ('client' | 'server')[];
  years?: number;
}

/**
 * A certificate signed by `ca`: client certificates name their user as kube-apiserver's x509
 * authenticator reads it (CN = user, O = groups), serving ones their addresses in the SAN.
 */
export function issueCertificate(ca: CertificateAuthority, req: CertificateRequest): { cert: string; key: string } {
  const caCert = forge().pki.certificateFromPem(ca.cert);
  const caKey = forge().pki.privateKeyFromPem(ca.key);
  const keys = rsaKeyPair();
  const cert = newCertificate(keys.publicKey, req.years ?? servingYears);
  cert.setSubject([...(req.organizations ?? []).map((o) => ({ name: 'organizationName', value: o, valueTagClass: forge().asn1.Type.UTF8 as unknown as Forge.asn1.Class })), commonName(req.commonName)]);
  cert.setIssuer(caCert.subject.attributes);
  const hosts = req.hosts ?? [];
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: req.usages.includes('server'), clientAuth: req.usages.includes('client') },
    ...(hosts.length ? [{ name: 'subjectAltName', altNames: hosts.map((h) => (isIP(h) ? { type: 7, ip: h } : { type: 2, value: h })) }] : []),
  ]);
  cert.sign(caKey, forge().md.sha256.create());
  return { cert: forge().pki.certificateToPem(cert), key: forge().pki.privateKeyToPem(keys.privateKey) };
}

/**
 * A certificate the CA issued, kept in `<tlsDir>/<name>.crt|.key` and issued again when missing,
 * near its end, or not naming every host asked for.
 */
export function ensureIssued(tlsDir: string, name: string, ca: CertificateAuthority, req: CertificateRequest): { cert: string; key: string } {
  const cert = join(tlsDir, `${name}.crt`);
  const key = join(tlsDir, `${name}.key`);
  if (!existsSync(cert) || !existsSync(key) || !certificateFits(readFileSync(cert, 'utf8'), req.hosts ?? [])) {
    const issued = issueCertificate(ca, req);
    writeSecret(key, issued.key);
    writeFileSync(cert, issued.cert, { mode: 0o644 });
  }
  return { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') };
}

/** The addresses a serving certificate names: loopback always, plus the bind address when it is a real one. */
export function servingHosts(bindAddress: string): string[] {
  const hosts = ['localhost', '127.0.0.1', '::1'];
  if (bindAddress && bindAddress !== '0.0.0.0' && bindAddress !== '::' && !hosts.includes(bindAddress)) hosts.push(bindAddress);
  return hosts;
}
