/**
 * The built-in signers (kube-controller-manager's csrsigning controller) and what each signs: the
 * restrictions on a request's subject, names and usages per signerName, in Kubernetes' words (a
 * request that breaks them gets a Failed condition with that message), and the certificate's
 * lifetime: `spec.expirationSeconds` when given, capped by the signing duration and the CA's own end.
 */
import { X509Certificate } from 'node:crypto';
import { issueFor, type CertificateAuthorityKeys, type ParsedCsr } from './x509.js';

export const KubeApiServerClient = 'kubernetes.io/kube-apiserver-client';
export const KubeletClient = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KubeletServing = 'kubernetes.io/kubelet-serving';
export const LegacyUnknown = 'kubernetes.io/legacy-unknown';

/** The signers this server signs for. */
export const BuiltInSigners: readonly string[] = [KubeApiServerClient, KubeletClient, KubeletServing];

/** kube-controller-manager's --cluster-signing-duration default (one year). */
export const MaxSigningSeconds = 365 * 24 * 3600;
/** Certificates start this long before they are issued, for clocks a little behind (csrsigning's backdate). */
const BackdateMs = 5 * 60_000;

const sameSet = (a: readonly string[], b: readonly string[]): boolean => new Set(a).size === new Set(b).size && b.every((u) => a.includes(u)) && a.every((u) => b.includes(u));

const usagesMatch = (usages: readonly string[], accepted: readonly (readonly string[])[]): string | undefined =>
  accepted.some((set) => sameSet(usages, set)) ? undefined : `usages did not match [${accepted[0]!.join(' ')}]`;

/** What a node's own certificate must be, client or serving (ValidateKubeletClientCSR / ValidateKubeletServingCSR). */
function nodeSubject(csr: ParsedCsr): string | undefined {
  if (csr.organizations.length !== 1 || csr.organizations[0] !== 'system:nodes') return 'subject organization is not system:nodes';
  return undefined;
}

const notSystemNode = (csr: ParsedCsr) => (csr.commonName.startsWith('system:node:') ? undefined : 'subject common name does not begin with system:node:');

/** Why a request is no kubelet client certificate request, or undefined when it is one. */
export function kubeletClientRefusal(csr: ParsedCsr, usages: readonly string[]): string | undefined {
  return nodeSubject(csr)
    ?? (csr.dnsNames.length ? 'DNS subjectAltNames are not allowed' : undefined)
    ?? (csr.emailAddresses.length ? 'Email subjectAltNames are not allowed' : undefined)
    ?? (csr.ipAddresses.length ? 'IP subjectAltNames are not allowed' : undefined)
    ?? (csr.uris.length ? 'URI subjectAltNames are not allowed' : undefined)
    ?? notSystemNode(csr)
    ?? usagesMatch(usages, [['digital signature', 'key encipherment', 'client auth'], ['digital signature', 'client auth']]);
}

/** Why a request is no kubelet serving certificate request, or undefined when it is one. */
export function kubeletServingRefusal(csr: ParsedCsr, usages: readonly string[]): string | undefined {
  return nodeSubject(csr)
    ?? (csr.dnsNames.length === 0 && csr.ipAddresses.length === 0 ? 'DNS or IP subjectAltName is required' : undefined)
    ?? (csr.emailAddresses.length ? 'Email subjectAltNames are not allowed' : undefined)
    ?? (csr.uris.length ? 'URI subjectAltNames are not allowed' : undefined)
    ?? notSystemNode(csr)
    ?? usagesMatch(usages, [['digital signature', 'key encipherment', 'server auth'], ['digital signature', 'server auth']]);
}

/** validAPIServerClientUsages: client auth required; digital signature and key encipherment allowed. */
function apiServerClientRefusal(_csr: ParsedCsr, usages: readonly string[]): string | undefined {
  const other = usages.find((u) => u !== 'digital signature' && u !== 'key encipherment' && u !== 'client auth');
  if (other) return `invalid usage for client certificate: ${other}`;
  return usages.includes('client auth') ? undefined : 'missing required usage for client certificate: client auth';
}

const Refusals: Record<string, (csr: ParsedCsr, usages: readonly string[]) => string | undefined> = {
  [KubeApiServerClient]: apiServerClientRefusal,
  [KubeletClient]: kubeletClientRefusal,
  [KubeletServing]: kubeletServingRefusal,
};

/** Why `signerName` will not sign this request (the Failed condition's message), or undefined. */
export const signerRefusal = (signerName: string, csr: ParsedCsr, usages: readonly string[]): string | undefined =>
  Refusals[signerName]?.(csr, usages) ?? (Refusals[signerName] ? undefined : `unknown signer ${signerName}`);

/**
 * The certificate for an approved request: valid from a little before now for `expirationSeconds`
 * (at most `maxSeconds`), never past the CA's own end.
 */
export function sign(csr: ParsedCsr, ca: CertificateAuthorityKeys, usages: readonly string[], expirationSeconds: number | undefined, maxSeconds = MaxSigningSeconds, now = Date.now()): string {
  const seconds = Math.min(expirationSeconds ?? maxSeconds, maxSeconds);
  const caEnd = Date.parse(new X509Certificate(ca.cert).validTo);
  const notAfter = new Date(Math.min(now + seconds * 1000, caEnd));
  return issueFor(csr, ca, { usages, notBefore: new Date(now - BackdateMs), notAfter });
}
