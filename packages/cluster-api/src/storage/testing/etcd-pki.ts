/**
 * A throwaway PKI for TLS tests of the etcd backend, made with the `openssl` command: a CA, a server
 * certificate for 127.0.0.1 signed by it, a client certificate signed by it, and an unrelated CA.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPki {
  readonly dir: string;
  readonly ca: string;
  readonly otherCa: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
  remove(): void;
}

export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'etcd-pki-'));
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  for (const ca of ['ca', 'other-ca']) {
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${ca}.key`, '-out', `${ca}.pem`, '-days', '1', '-subj', `/CN=${ca}`);
  }
  for (const who of ['server', 'client']) {
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${who}.key`, '-out', `${who}.csr`, '-subj', `/CN=${who}`);
    openssl('x509', '-req', '-in', `${who}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${who}.pem`, '-days', '1', '-extfile', 'ext.cnf');
  }
  const f = (name: string) => join(dir, name);
  return {
    dir,
    ca: f('ca.pem'),
    otherCa: f('other-ca.pem'),
    serverCert: f('server.pem'),
    serverKey: f('server.key'),
    clientCert: f('client.pem'),
    clientKey: f('client.key'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
