/**
 * `cluster-api serve --storage etcd://… --etcd-cafile … --etcd-certfile … --etcd-keyfile …` against
 * an etcd that requires client certificates, and the start-up errors of those flags.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer } from '../../testing/src/etcd-api-servers.js';
import { startEtcd, type EtcdCluster } from '../../testing/src/etcd-cluster.js';
import { makeTestPki, type TestPki } from '../../src/storage/testing/etcd-pki.js';

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

describe('serve on etcd over TLS', () => {
  it('with --etcd-cafile, --etcd-certfile and --etcd-keyfile it serves and stores', async () => {
    const api = await startApiServer(etcd.url, ['--etcd-cafile', pki.ca, '--etcd-certfile', pki.clientCert, '--etcd-keyfile', pki.clientKey]);
    try {
      expect((await api.request('POST', '/api/v1/namespaces', { metadata: { name: 'tls' } })).status).toBe(201);
      expect((await api.request('GET', '/api/v1/namespaces/tls')).json.metadata.name).toBe('tls');
      expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
    } finally {
      await api.stop();
    }
  });

  it.concurrent.each([
    ['without a client certificate, start-up fails naming etcd', [], /cluster-api serve exited 1: .*cluster-api: .*etcd/s],
    ['a certfile without a keyfile', ['--etcd-certfile', '/x.pem'], /--etcd-certfile and --etcd-keyfile must be given together/],
    ['a missing CA file', ['--etcd-cafile', '/nonexistent/ca.pem'], /--etcd-cafile \/nonexistent\/ca.pem: ENOENT/],
  ])('%s', async (_, args, message) => {
    await expect(startApiServer(etcd.url, args)).rejects.toThrow(message);
  });
});
