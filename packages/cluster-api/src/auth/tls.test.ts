import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ensureAdminToken, kubeconfigYaml } from './credentials.js';
import { ensureTls, servingHosts } from './tls.js';

const dir = mkdtempSync(join(tmpdir(), 'cluster-api-tls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('ensureTls', () => {
  const tlsDir = join(dir, 'tls');
  const first = ensureTls(tlsDir, servingHosts('127.0.0.1'));

  it('makes a CA and a serving certificate for the server addresses, keys 0600', () => {
    const ca = new X509Certificate(first.ca!);
    const cert = new X509Certificate(first.cert);
    expect(ca.ca).toBe(true);
    expect(cert.ca).toBe(false);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.checkHost('localhost')).toBe('localhost');
    expect(cert.subjectAltName).toContain('IP Address:0:0:0:0:0:0:0:1');
    for (const f of ['ca.key', 'serving.key']) expect(statSync(join(tlsDir, f)).mode & 0o777).toBe(0o600);
  });

  it('reuses what it made, and renews the serving cert (same CA) for a new address', () => {
    expect(ensureTls(tlsDir, servingHosts('127.0.0.1'))).toEqual(first);
    const wider = ensureTls(tlsDir, servingHosts('10.1.2.3'));
    expect(wider.ca).toBe(first.ca);
    expect(wider.cert).not.toBe(first.cert);
    expect(new X509Certificate(wider.cert).checkIP('10.1.2.3')).toBe('10.1.2.3');
  });

  it('replaces a corrupt serving certificate instead of failing', () => {
    writeFileSync(join(tlsDir, 'serving.crt'), 'not a certificate');
    expect(new X509Certificate(ensureTls(tlsDir, servingHosts('127.0.0.1')).cert).checkIP('127.0.0.1')).toBe('127.0.0.1');
  });

  it('names loopback always and the bind address when it is specific', () => {
    expect(servingHosts('0.0.0.0')).toEqual(['localhost', '127.0.0.1', '::1']);
    expect(servingHosts('192.168.1.5')).toContain('192.168.1.5');
  });
});

describe('credentials', () => {
  it('creates the admin token once, 0600, and reuses it', () => {
    const file = join(dir, 'admin.token');
    const token = ensureAdminToken(file);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(ensureAdminToken(file)).toBe(token);
    expect(readFileSync(file, 'utf8').trim()).toBe(token);
  });

  it('writes a kubeconfig with the CA embedded and the namespace default', () => {
    const doc = parse(kubeconfigYaml({ server: 'https://127.0.0.1:6443', token: 't', ca: 'PEM' }));
    expect(doc).toMatchObject({
      kind: 'Config',
      'current-context': 'cluster-api',
      clusters: [{ name: 'cluster-api', cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': Buffer.from('PEM').toString('base64') } }],
      users: [{ user: { token: 't' } }],
      contexts: [{ name: 'cluster-api', context: { cluster: 'cluster-api', namespace: 'default' } }],
    });
  });
});
