import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEtcdEndpoints } from './etcd-client.js';
import { EtcdStorage } from './etcd.js';
import { isStorageError } from './errors.js';
import { openStorage } from './factory.js';
import { freePort, startEtcd, type EtcdCluster } from './testing/etcd-cluster.js';
import { Recorder, expectError } from './testing/suite-helpers.js';

const enc = (s: string) => new TextEncoder().encode(s);

describe('etcd endpoints', () => {
  it.each([
    ['//127.0.0.1:2379', ['127.0.0.1:2379']],
    ['//a.example:2379,b.example:32379,[::1]:2379', ['a.example:2379', 'b.example:32379', '[::1]:2379']],
    ['//etcd-0:2379/', ['etcd-0:2379']],
  ])('%s', (location, endpoints) => {
    expect(parseEtcdEndpoints(location)).toEqual(endpoints);
  });

  it.each([
    ['', /expected etcd:\/\/host:port/],
    ['//', /no endpoints/],
    ['//host', /"host" is not host:port/],
    ['//host:0', /is not host:port/],
    ['//host:2379,,other:2379', /"" is not host:port/],
    ['//user@host:2379', /is not host:port/],
    ['//host:2379/path', /is not host:port/],
  ])('%j is InvalidArgument', (location, message) => {
    let err: unknown;
    try {
      parseEtcdEndpoints(location);
    } catch (e) {
      err = e;
    }
    expect(isStorageError(err, 'InvalidArgument')).toBe(true);
    expect((err as Error).message).toMatch(message);
  });
});

describe('etcd TLS options', () => {
  it.each([
    ['a missing CA file', { caFile: '/nonexistent/ca.pem' }, /--etcd-cafile \/nonexistent\/ca.pem: ENOENT/],
    ['a certfile without a keyfile', { certFile: '/x.pem' }, /--etcd-certfile and --etcd-keyfile must be given together/],
    ['a missing key file', { certFile: fileURLToPath(import.meta.url), keyFile: '/nonexistent/key.pem' }, /--etcd-keyfile .*ENOENT/],
  ])('%s is InvalidArgument before anything connects', async (_, etcd, message) => {
    const err = await openStorage('etcd://127.0.0.1:2379', { etcd, compaction: false }).catch((e: unknown) => e);
    expect(isStorageError(err, 'InvalidArgument')).toBe(true);
    expect((err as Error).message).toMatch(message);
  });
});

describe('an etcd nobody answers on', () => {
  it('every call fails with Unavailable within its bound; healthy says why; a watch waits and closes cleanly', async () => {
    const port = await freePort();
    const s = new EtcdStorage(`//127.0.0.1:${port}`, { requestTimeoutMs: 1_500 });
    try {
      await expectError(s.get('/registry/pods/ns/a'), 'Unavailable');
      await expectError(s.create('/registry/pods/ns/a', enc('x')), 'Unavailable');
      await expectError(s.list({ prefix: '/registry/pods/' }), 'Unavailable');
      await expectError(s.currentRevision(), 'Unavailable');
      expect(await s.healthy()).toMatchObject({ ok: false, message: expect.stringMatching(/etcd/) });
      const rec = new Recorder(s, { key: '/registry/pods/', prefix: true, afterRevision: 5 });
      await new Promise((r) => setTimeout(r, 300));
      expect(rec.error).toBeUndefined();
      rec.watch.close();
    } finally {
      await s.close();
    }
  });
});

describe('etcd over TLS with client certificates', () => {
  let dir: string;
  let etcd: EtcdCluster;
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

  /** A CA, a server certificate for 127.0.0.1, and a client certificate; plus an unrelated CA. */
  function makePki(): void {
    writeFileSync(file('ext.cnf'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
    for (const ca of ['ca', 'other-ca']) {
      openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${ca}.key`, '-out', `${ca}.pem`, '-days', '1', '-subj', `/CN=${ca}`);
    }
    for (const who of ['server', 'client']) {
      openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${who}.key`, '-out', `${who}.csr`, '-subj', `/CN=${who}`);
      openssl('x509', '-req', '-in', `${who}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${who}.pem`, '-days', '1', '-extfile', 'ext.cnf');
    }
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'etcd-tls-'));
    makePki();
    etcd = await startEtcd({ members: 1, tls: { certFile: file('server.pem'), keyFile: file('server.key'), caFile: file('ca.pem') } });
  });
  afterAll(async () => {
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('with the CA and a client certificate, reads and writes work', async () => {
    const s = await openStorage(etcd.url, { compaction: false, etcd: { caFile: file('ca.pem'), certFile: file('client.pem'), keyFile: file('client.key') } });
    try {
      const kv = await s.create('/registry/pods/tls/a', enc('secure'));
      expect(new TextDecoder().decode((await s.get('/registry/pods/tls/a'))!.value)).toBe('secure');
      expect(kv.modRevision).toBeGreaterThan(0);
    } finally {
      await s.close();
    }
  });

  it.each([
    ['no client certificate', () => ({ caFile: file('ca.pem') })],
    ['a CA that did not sign the server', () => ({ caFile: file('other-ca.pem'), certFile: file('client.pem'), keyFile: file('client.key') })],
  ])('with %s, calls fail with Unavailable', async (_, tls) => {
    const s = await openStorage(etcd.url, { compaction: false, etcd: { ...tls(), requestTimeoutMs: 2_000 } });
    try {
      await expectError(s.get('/registry/pods/tls/a'), 'Unavailable');
    } finally {
      await s.close();
    }
  });
});
