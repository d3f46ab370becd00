/**
 * PKCS#10 certificate requests and the certificates a signer issues for them, on der.ts and Node's
 * crypto: a request is read as Go's x509.ParseCertificateRequest reads it (subject, subjectAltName
 * from the extensionRequest attribute, public key) and its signature checked; a certificate is
 * issued for the request's subject, key and names with the usages the CSR object asks for, signed by
 * the cluster CA (RSA or ECDSA), as kube-controller-manager's local signer does. RSA, ECDSA and
 * Ed25519 keys are accepted, so kubelets' ECDSA P-256 requests are signed as readily as openssl's RSA ones.
 */
import { X509Certificate, createPrivateKey, createPublicKey, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import {
  DerError, Tag, bitString, bool, contextTag, decodeOid, decodeString, explicit, integer, nullValue, octets, oid, readDer, sequence, set, time, tlv, utf8, type Der,
} from './der.js';
import type { CertificateRequest } from '../auth/tls.js';

export class CsrError extends Error {
  override readonly name = 'CsrError';
}

export interface ParsedCsr {
  commonName: string;
  organizations: string[];
  dnsNames: string[];
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
  /** The subject Name exactly as the request encodes it. */
  subject: Buffer;
  /** SubjectPublicKeyInfo as the request encodes it. */
  publicKeyInfo: Buffer;
  publicKey: KeyObject;
}

const Oids = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  extensionRequest: '1.2.840.113549.1.9.14',
  subjectAltName: '2.5.29.17',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  basicConstraints: '2.5.29.19',
  sha256WithRsa: '1.2.840.113549.1.1.11',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
} as const;

/** The signature algorithms a request may use, and the digest Node verifies each with (null: Ed25519). */
const SignatureAlgorithms: Record<string, string | null> = {
  '1.2.840.113549.1.1.11': 'sha256', '1.2.840.113549.1.1.12': 'sha384', '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.10045.4.3.2': 'sha256', '1.2.840.10045.4.3.3': 'sha384', '1.2.840.10045.4.3.4': 'sha512',
  '1.3.101.112': null,
};

const PemRequest = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([A-Za-z0-9+/=\r\n]+?)-----END \1-----/;

/** The DER of the first PEM block of `pem`, which must be a CERTIFICATE REQUEST (Kubernetes' ParseCSR wording). */
export function csrDer(pem: Buffer | string): Buffer {
  const m = PemRequest.exec(Buffer.isBuffer(pem) ? pem.toString('latin1') : pem);
  if (!m || m[1] !== 'CERTIFICATE REQUEST') throw new CsrError('PEM block type must be CERTIFICATE REQUEST');
  return Buffer.from(m[2]!.replace(/\s+/g, ''), 'base64');
}

const expect = (d: Der | undefined, tag: number, what: string): Der => {
  if (!d || d.tag !== tag) throw new CsrError(`x509: malformed ${what}`);
  return d;
};

/** CN and O of a Name (later values of a repeated CN win, as Go keeps the last). */
function readName(name: Der): { commonName: string; organizations: string[] } {
  let commonName = '';
  const organizations: string[] = [];
  for (const rdn of name.children) for (const atv of rdn.children) {
    const [type, value] = atv.children;
    if (!type || type.tag !== Tag.Oid || !value) throw new CsrError('x509: malformed subject');
    const id = decodeOid(type.content);
    if (id === Oids.commonName) commonName = decodeString(value);
    else if (id === Oids.organization) organizations.push(decodeString(value));
  }
  return { commonName, organizations };
}

function ipText(b: Buffer): string {
  if (b.length === 4) return [...b].join('.');
  if (b.length === 16) return (b.toString('hex').match(/.{4}/g) ?? []).map((g) => g.replace(/^0+(?=.)/, '')).join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
  throw new CsrError('x509: cannot parse IP address of length ' + b.length);
}

function readAltNames(value: Buffer, into: Pick<ParsedCsr, 'dnsNames' | 'ipAddresses' | 'emailAddresses' | 'uris'>): void {
  for (const name of readDer(value).children) {
    const text = name.content.toString('latin1');
    if (name.tag === contextTag(1, false)) into.emailAddresses.push(text);
    else if (name.tag === contextTag(2, false)) into.dnsNames.push(text);
    else if (name.tag === contextTag(6, false)) into.uris.push(text);
    else if (name.tag === contextTag(7, false)) into.ipAddresses.push(ipText(name.content));
  }
}

/**
 * A PEM certificate request, parsed and its signature checked. Throws CsrError with Go's wording
 * for what Kubernetes' validation would refuse.
 */
export function parseCsr(pem: Buffer | string): ParsedCsr {
  const der = csrDer(pem);
  try {
    const top = expect(readDer(der), Tag.Sequence, 'certificate request');
    const [info, algorithm, signature] = top.children;
    const [version, subject, spki, attributes] = expect(info, Tag.Sequence, 'certificate request').children;
    expect(version, Tag.Integer, 'version');
    expect(subject, Tag.Sequence, 'subject');
    expect(spki, Tag.Sequence, 'public key');
    let publicKey: KeyObject;
    try {
      publicKey = createPublicKey({ key: spki!.bytes, format: 'der', type: 'spki' });
    } catch {
      throw new CsrError('x509: unsupported public key');
    }
    const algOid = decodeOid(expect(expect(algorithm, Tag.Sequence, 'signature algorithm').children[0], Tag.Oid, 'signature algorithm').content);
    if (!(algOid in SignatureAlgorithms)) throw new CsrError('x509: cannot verify signature: algorithm unimplemented');
    const sig = expect(signature, Tag.BitString, 'signature').content.subarray(1);
    let good = false;
    try {
      good = verify(SignatureAlgorithms[algOid]!, info!.bytes, publicKey, sig);
    } catch {
      good = false;
    }
    if (!good) throw new CsrError(publicKey.asymmetricKeyType === 'ec' ? 'x509: ECDSA verification failure' : 'crypto/rsa: verification error');
    const parsed: ParsedCsr = { ...readName(subject!), dnsNames: [], ipAddresses: [], emailAddresses: [], uris: [], subject: subject!.bytes, publicKeyInfo: spki!.bytes, publicKey };
    for (const attribute of attributes?.tag === contextTag(0, true) ? attributes.children : []) {
      const [type, values] = attribute.children;
      if (!type || decodeOid(type.content) !== Oids.extensionRequest) continue;
      for (const extensions of values?.children ?? []) for (const ext of extensions.children) {
        const id = ext.children[0] && decodeOid(ext.children[0].content);
        if (id === Oids.subjectAltName) readAltNames(ext.children.at(-1)!.content, parsed);
      }
    }
    return parsed;
  } catch (err) {
    if (err instanceof DerError) throw new CsrError(`asn1: structure error: ${err.message}`);
    throw err;
  }
}

const name = (commonName: string, organizations: readonly string[]): Buffer =>
  sequence(...organizations.map((o) => set(sequence(oid(Oids.organization), utf8(o)))), set(sequence(oid(Oids.commonName), utf8(commonName))));

/** The signature algorithm identifier for a key (RSA: sha256WithRSAEncryption with NULL; EC: ecdsa-with-SHA256). */
function algorithmOf(key: KeyObject): Buffer {
  if (key.asymmetricKeyType === 'rsa') return sequence(oid(Oids.sha256WithRsa), nullValue());
  if (key.asymmetricKeyType === 'ec') return sequence(oid(Oids.ecdsaWithSha256));
  throw new CsrError(`signing with ${key.asymmetricKeyType} keys is not supported`);
}

const signed = (body: Buffer, key: KeyObject): Buffer => sequence(body, algorithmOf(key), bitString(sign('sha256', body, key)));

const pem = (label: string, der: Buffer): string => `-----BEGIN ${label}-----\n${der.toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END ${label}-----\n`;

/** Who a request names: CN, O entries and the subjectAltName's DNS names and IP addresses. */
export type RequestSubject = Pick<CertificateRequest, 'commonName' | 'organizations' | 'hosts'>;

/** GeneralNames of DNS names ([2]) and IP addresses ([7]). */
const generalNames = (hosts: readonly string[]): Buffer[] => hosts.map((h) =>
  isIP(h) ? tlv(contextTag(7, false), isIP(h) === 4 ? Buffer.from(h.split('.').map(Number)) : ipv6Bytes(h)) : tlv(contextTag(2, false), Buffer.from(h, 'latin1')));

function ipv6Bytes(address: string): Buffer {
  const [head, tail = ''] = address.split('::');
  const groups = (s: string) => (s ? s.split(':') : []);
  const h = groups(head!);
  const t = address.includes('::') ? groups(tail) : [];
  const all = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return Buffer.from(all.map((g) => g.padStart(4, '0')).join(''), 'hex');
}

/** A PEM CERTIFICATE REQUEST for `subject`, signed with `key` (what a kubelet posts). */
export function createCsr(key: KeyObject, subject: RequestSubject): string {
  const hosts = subject.hosts ?? [];
  const extensions = hosts.length
    ? [sequence(oid(Oids.extensionRequest), set(sequence(sequence(oid(Oids.subjectAltName), octets(sequence(...generalNames(hosts)))))))]
    : [];
  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  const info = sequence(integer(0), name(subject.commonName, subject.organizations ?? []), spki, tlv(contextTag(0, true), Buffer.concat(extensions)));
  return pem('CERTIFICATE REQUEST', signed(info, key));
}

/** Kubernetes' KeyUsage names: the keyUsage bit each sets. */
const KeyUsageBits: Record<string, number> = {
  signing: 0, 'digital signature': 0, 'content commitment': 1, 'key encipherment': 2, 'data encipherment': 3,
  'key agreement': 4, 'cert sign': 5, 'crl sign': 6, 'encipher only': 7, 'decipher only': 8,
};

/** Kubernetes' KeyUsage names: the extendedKeyUsage purpose each adds. */
const ExtKeyUsageOids: Record<string, string> = {
  any: '2.5.29.37.0', 'server auth': '1.3.6.1.5.5.7.3.1', 'client auth': '1.3.6.1.5.5.7.3.2', 'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4', 's/mime': '1.3.6.1.5.5.7.3.4', 'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6', 'ipsec user': '1.3.6.1.5.5.7.3.7', timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9', 'microsoft sgc': '1.3.6.1.4.1.311.10.3.3', 'netscape sgc': '2.16.840.1.113730.4.1',
};

/** Every usage a CertificateSigningRequest may name (`spec.usages`). */
export const KeyUsages: readonly string[] = [...Object.keys(KeyUsageBits), ...Object.keys(ExtKeyUsageOids)].sort();

function keyUsageBits(bits: readonly number[]): Buffer {
  const bytes = Buffer.alloc(2);
  for (const b of bits) bytes[b >> 3]! |= 0x80 >> (b & 7);
  const used = bytes[1] ? bytes : bytes.subarray(0, 1);
  const last = used[used.length - 1]!;
  let unused = 0;
  while (unused < 7 && last && !(last & (1 << unused))) unused++;
  return bitString(last ? used : Buffer.alloc(0), last ? unused : 0);
}

const extension = (id: string, critical: boolean, value: Buffer): Buffer => sequence(oid(id), ...(critical ? [bool(true)] : []), octets(value));

export interface CertificateAuthorityKeys {
  /** PEM. */
  cert: string;
  /** PEM. */
  key: string;
}

export interface Issue {
  usages: readonly string[];
  notBefore: Date;
  notAfter: Date;
}

/** The subject Name of a certificate, as it encodes it (the issuer of what it signs). */
function subjectOf(cert: X509Certificate): Buffer {
  const tbs = readDer(cert.raw).children[0]!;
  const offset = tbs.children[0]!.tag === contextTag(0, true) ? 1 : 0;
  return tbs.children[offset + 4]!.bytes;
}

/** A PEM certificate for the request, signed by `ca`, with the request's subject, key and names. */
export function issueFor(csr: ParsedCsr, ca: CertificateAuthorityKeys, issue: Issue): string {
  const caCert = new X509Certificate(ca.cert);
  const caKey = createPrivateKey(ca.key);
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40;
  const bits = [...new Set(issue.usages.map((u) => KeyUsageBits[u]).filter((b): b is number => b !== undefined))];
  const purposes = [...new Set(issue.usages.map((u) => ExtKeyUsageOids[u]).filter((o): o is string => o !== undefined))];
  const sans = [
    ...csr.emailAddresses.map((e) => tlv(contextTag(1, false), Buffer.from(e, 'latin1'))),
    ...generalNames([...csr.dnsNames, ...csr.ipAddresses]),
    ...csr.uris.map((u) => tlv(contextTag(6, false), Buffer.from(u, 'latin1'))),
  ];
  const extensions = [
    ...(bits.length ? [extension(Oids.keyUsage, true, keyUsageBits(bits))] : []),
    ...(purposes.length ? [extension(Oids.extKeyUsage, false, sequence(...purposes.map(oid)))] : []),
    extension(Oids.basicConstraints, true, sequence()),
    ...(sans.length ? [extension(Oids.subjectAltName, false, sequence(...sans))] : []),
  ];
  const tbs = sequence(
    explicit(0, integer(2)),
    integer(serial),
    algorithmOf(caKey),
    subjectOf(caCert),
    sequence(time(issue.notBefore), time(issue.notAfter)),
    csr.subject,
    csr.publicKeyInfo,
    explicit(3, sequence(...extensions)),
  );
  return pem('CERTIFICATE', signed(tbs, caKey));
}

export { DerError, readDer };
