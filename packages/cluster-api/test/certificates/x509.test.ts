/**
 * PKCS#10 requests and issued certificates (src/certificates/x509.ts, der.ts, signers.ts) checked
 * against openssl: requests openssl makes are read (RSA and ECDSA, subject, every SAN type),
 * requests made here pass `openssl req -verify`, certificates issued here pass `openssl verify`
 * against the CA with the usages and lifetime asked; every malformed input is refused with a message.
 */
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCa, type CertificateAuthority } from '../../src/auth/tls.js';
import { KubeletClient, KubeletServing, KubeApiServerClient, sign, signerRefusal } from '../../src/certificates/signers.js';
import { CsrError, createCsr, parseCsr } from '../../src/certificates/x509.js';

const run = promisify(execFile);
let dir: string;
let ca: CertificateAuthority;
let n = 0;

async function openssl(key: string, subject: string, extra: string[] = []): Promise<string> {
  const out = join(dir, `r${n++}.csr`);
  await run('openssl', ['req', '-new', '-newkey', key, '-nodes', '-keyout', join(dir, `r${n}.key`), '-subj', subject, '-out', out, ...extra]);
  return readFileSync(out, 'utf8');
}

const pemBlock = (label: string, der: Buffer) => `-----BEGIN ${label}-----\n${der.toString('base64')}\n-----END ${label}-----\n`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'x509-'));
  ca = ensureCa(join(dir, 'tls'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('reading requests', () => {
  it('reads an openssl RSA request with every SAN type', async () => {
    const csr = parseCsr(await openssl('rsa:2048', '/O=a/O=b/CN=jane', ['-addext', 'subjectAltName=DNS:x.example,IP:10.0.0.1,IP:fd00::1,email:j@example.com,URI:spiffe://c/j']));
    expect(csr).toMatchObject({ commonName: 'jane', organizations: ['a', 'b'], dnsNames: ['x.example'], ipAddresses: ['10.0.0.1', 'fd00::1'], emailAddresses: ['j@example.com'], uris: ['spiffe://c/j'] });
    expect(csr.publicKey.asymmetricKeyType).toBe('rsa');
  });

  it('reads an openssl ECDSA P-384 request', async () => {
    const csr = parseCsr(await openssl('ec', '/O=system:nodes/CN=system:node:n1', ['-pkeyopt', 'ec_paramgen_curve:secp384r1', '-sha384']));
    expect(csr).toMatchObject({ commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: [], ipAddresses: [] });
  });

  it('makes requests openssl verifies', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const pem = createCsr(privateKey, { commonName: 'system:node:n2', organizations: ['system:nodes'], hosts: ['n2.example', '192.168.1.2', '::1'] });
    writeFileSync(join(dir, 'made.csr'), pem);
    const { stdout, stderr } = await run('openssl', ['req', '-in', join(dir, 'made.csr'), '-verify', '-noout', '-subject']);
    expect(`${stdout}${stderr}`).toMatch(/verify OK/i);
    expect(stdout).toMatch(/O\s*=\s*system:nodes, CN\s*=\s*system:node:n2/);
    expect(parseCsr(pem)).toMatchObject({ dnsNames: ['n2.example'], ipAddresses: ['192.168.1.2', '::1'] });
  });

  it('refuses malformed requests with a message', async () => {
    const good = await openssl('ec', '/CN=x', ['-pkeyopt', 'ec_paramgen_curve:prime256v1']);
    const der = Buffer.from(good.replace(/-----[^-]+-----/g, '').replace(/\s/g, ''), 'base64');
    const flipped = Buffer.from(der);
    flipped[flipped.length - 5]! ^= 0x01;
    const cases: [string, RegExp][] = [
      ['', /PEM block type must be CERTIFICATE REQUEST/],
      ['not pem at all', /PEM block type must be CERTIFICATE REQUEST/],
      [pemBlock('CERTIFICATE', der), /PEM block type must be CERTIFICATE REQUEST/],
      [pemBlock('CERTIFICATE REQUEST', Buffer.from([0x30, 0x82])), /asn1: structure error/],
      [pemBlock('CERTIFICATE REQUEST', Buffer.concat([der, Buffer.from([0])])), /asn1: structure error: trailing data/],
      [pemBlock('CERTIFICATE REQUEST', der.subarray(0, der.length - 10)), /asn1: structure error/],
      [pemBlock('CERTIFICATE REQUEST', Buffer.from([0x02, 0x01, 0x00])), /x509: malformed certificate request/],
      [pemBlock('CERTIFICATE REQUEST', flipped), /x509: ECDSA verification failure|asn1/],
    ];
    for (const [pem, message] of cases) {
      expect(() => parseCsr(pem), pem.slice(0, 40)).toThrow(CsrError);
      expect(() => parseCsr(pem)).toThrow(message);
    }
  });
});

describe('signing', () => {
  it('issues what openssl verifies against the CA, with the usages and lifetime asked, capped at the maximum', async () => {
    const csr = parseCsr(await openssl('rsa:2048', '/O=system:nodes/CN=system:node:w', ['-addext', 'subjectAltName=DNS:w.example,IP:10.1.1.1']));
    const now = Date.now();
    const pem = sign(csr, ca, ['digital signature', 'key encipherment', 'server auth'], 3600, undefined, now);
    writeFileSync(join(dir, 'w.crt'), pem);
    await run('openssl', ['verify', '-CAfile', join(dir, 'tls', 'ca.crt'), '-purpose', 'sslserver', join(dir, 'w.crt')]);
    const cert = new X509Certificate(pem);
    expect(cert.subject).toBe('O=system:nodes\nCN=system:node:w');
    expect(cert.subjectAltName).toBe('DNS:w.example, IP Address:10.1.1.1');
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(cert.ca).toBe(false);
    expect(Date.parse(cert.validTo)).toBe(Math.floor((now + 3600_000) / 1000) * 1000);
    expect(Date.parse(cert.validFrom)).toBe(Math.floor((now - 300_000) / 1000) * 1000);
    const capped = new X509Certificate(sign(csr, ca, ['client auth'], 10 * 365 * 24 * 3600, 7200, now));
    expect(Date.parse(capped.validTo)).toBe(Math.floor((now + 7200_000) / 1000) * 1000);
    const { stdout } = await run('openssl', ['x509', '-in', join(dir, 'w.crt'), '-noout', '-ext', 'keyUsage,basicConstraints']);
    expect(stdout).toMatch(/critical\s+Digital Signature, Key Encipherment/);
    expect(stdout).toMatch(/Basic Constraints: critical\s+CA:FALSE/);
  });

  it('applies each signer\'s restrictions with Kubernetes\' messages', async () => {
    const node = parseCsr(await openssl('ec', '/O=system:nodes/CN=system:node:k', ['-pkeyopt', 'ec_paramgen_curve:prime256v1']));
    const user = parseCsr(await openssl('ec', '/CN=jane', ['-pkeyopt', 'ec_paramgen_curve:prime256v1']));
    const wrongCn = parseCsr(await openssl('ec', '/O=system:nodes/CN=k', ['-pkeyopt', 'ec_paramgen_curve:prime256v1']));
    const withIp = parseCsr(await openssl('ec', '/O=system:nodes/CN=system:node:k', ['-pkeyopt', 'ec_paramgen_curve:prime256v1', '-addext', 'subjectAltName=IP:10.0.0.9']));
    expect(signerRefusal(KubeletClient, node, ['digital signature', 'client auth'])).toBeUndefined();
    expect(signerRefusal(KubeletClient, node, ['key encipherment', 'digital signature', 'client auth'])).toBeUndefined();
    expect(signerRefusal(KubeletClient, node, ['client auth'])).toBe('usages did not match [digital signature key encipherment client auth]');
    expect(signerRefusal(KubeletClient, user, ['digital signature', 'client auth'])).toBe('subject organization is not system:nodes');
    expect(signerRefusal(KubeletClient, wrongCn, ['digital signature', 'client auth'])).toBe('subject common name does not begin with system:node:');
    expect(signerRefusal(KubeletClient, withIp, ['digital signature', 'client auth'])).toBe('IP subjectAltNames are not allowed');
    expect(signerRefusal(KubeletServing, withIp, ['digital signature', 'server auth'])).toBeUndefined();
    expect(signerRefusal(KubeletServing, withIp, ['digital signature', 'client auth'])).toBe('usages did not match [digital signature key encipherment server auth]');
    expect(signerRefusal(KubeApiServerClient, user, ['client auth', 'digital signature'])).toBeUndefined();
    expect(signerRefusal(KubeApiServerClient, user, ['digital signature'])).toBe('missing required usage for client certificate: client auth');
    expect(signerRefusal(KubeApiServerClient, user, ['client auth', 'cert sign'])).toBe('invalid usage for client certificate: cert sign');
    expect(signerRefusal('example.com/other', user, ['client auth'])).toBe('unknown signer example.com/other');
  });
});
