import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEtcdEndpoints } from './client.js';
import { EtcdStorage } from './etcd.js';
import { isStorageError } from '../errors.js';
import { openStorage } from '../factory.js';
import { freePort, startEtcd, type EtcdCluster } from '../../../testing/src/etcd-cluster.js';
import { makeTestPki, type TestPki } from '../testing/etcd-pki.js';
import { Recorder, expectError } from '../testing/suite-helpers.js';

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
  let pki: TestPki;
  let etcd: EtcdCluster;

  beforeAll(async () => {
    pki = makeTestPki();
    etcd = await startEtcd({ members: 1, tls: { certFile: pki.serverCert, keyFile: pki.serverKey, caFile: pki.ca } });
  });
  afterAll(async () => {
    await etcd?.stop();
    pki?.remove();
  });

  it('with the CA and a client certificate, reads and writes work', async () => {
    const s = await openStorage(etcd.url, { compaction: false, etcd: { caFile: pki.ca, certFile: pki.clientCert, keyFile: pki.clientKey } });
    try {
      const kv = await s.create('/registry/pods/tls/a', enc('secure'));
      expect(new TextDecoder().decode((await s.get('/registry/pods/tls/a'))!.value)).toBe('secure');
      expect(kv.modRevision).toBeGreaterThan(0);
    } finally {
      await s.close();
    }
  });

  it.each([
    ['no client certificate', () => ({ caFile: pki.ca })],
    ['a CA that did not sign the server', () => ({ caFile: pki.otherCa, certFile: pki.clientCert, keyFile: pki.clientKey })],
  ])('with %s, calls fail with Unavailable', async (_, tls) => {
    const s = await openStorage(etcd.url, { compaction: false, etcd: { ...tls(), requestTimeoutMs: 2_000 } });
    try {
      await expectError(s.get('/registry/pods/tls/a'), 'Unavailable');
    } finally {
      await s.close();
    }
  });
});
