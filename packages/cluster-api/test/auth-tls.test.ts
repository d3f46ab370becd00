/** serve() with a kube-apiserver token file and a brought-in serving certificate, over real TLS. */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { resolveConfig } from '../src/config.js';
import { ensureTls, servingHosts } from '../src/http/tls.js';
import { serve, type Served } from '../src/server.js';
import { tempDir } from './helpers.js';

function get(url: string, ca: string, path: string, token?: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    const req = request(`${url}${path}`, { ca, headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: text.startsWith('{') ? JSON.parse(text) : text }));
    });
    req.once('error', reject);
    req.end();
  });
}

describe('token file and own TLS certificate', () => {
  let dir: string;
  let served: Served;
  let ca: string;

  beforeAll(async () => {
    dir = tempDir();
    // A certificate made elsewhere (another CA directory), brought in with --tls-cert-file.
    const own = ensureTls(join(dir, 'own-pki'), servingHosts('127.0.0.1'));
    ca = own.ca!;
    writeFileSync(join(dir, 'tls.crt'), own.cert);
    writeFileSync(join(dir, 'tls.key'), own.key);
    writeFileSync(join(dir, 'tokens.csv'), 'alice-token,alice,1001,"dev,ops"\nbob-token,bob,1002\n');
    served = await serve(
      resolveConfig({
        port: 0,
        dataDir: join(dir, 'data'),
        storage: 'memory:',
        tokenAuthFile: join(dir, 'tokens.csv'),
        tlsCertFile: join(dir, 'tls.crt'),
        tlsPrivateKeyFile: join(dir, 'tls.key'),
      }),
      () => {},
    );
  });
  afterAll(async () => {
    await served?.server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the brought-in certificate and accepts every user of the token file', async () => {
    for (const token of ['alice-token', 'bob-token']) expect((await get(served.server.url, ca, '/api/v1/namespaces', token)).status).toBe(200);
  });

  it('refuses unknown, missing and malformed tokens with a 401 Status, but not on health probes', async () => {
    for (const token of [undefined, 'carol-token', 'alice-token,alice']) {
      const r = await get(served.server.url, ca, '/api/v1/namespaces', token);
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    }
    expect((await get(served.server.url, ca, '/readyz')).body).toBe('ok');
  });

  it('writes a kubeconfig for the first user, with no CA when the certificate is brought in', () => {
    const kc = parse(readFileSync(served.kubeconfig!, 'utf8'));
    expect(kc.users[0].user.token).toBe('alice-token');
    expect(kc.clusters[0].cluster.server).toBe(served.server.url);
    expect(kc.clusters[0].cluster['certificate-authority-data']).toBeUndefined();
  });

  it('does not generate an admin token or certificates of its own', () => {
    expect(() => readFileSync(join(dir, 'data', 'admin.token'))).toThrow();
    expect(() => readFileSync(join(dir, 'data', 'tls', 'ca.crt'))).toThrow();
  });
});

describe('start-up failure', () => {
  it('reports a port in use and releases what it opened', async () => {
    const dir = tempDir();
    const first = await serve(resolveConfig({ port: 0, dataDir: join(dir, 'a'), storage: 'memory:', insecureHttp: true }), () => {});
    try {
      const port = Number(new URL(first.server.url).port);
      const second = serve(resolveConfig({ port, dataDir: join(dir, 'b'), storage: `sqlite:${join(dir, 'b', 'state.db')}`, insecureHttp: true }), () => {});
      await expect(second).rejects.toMatchObject({ code: 'EADDRINUSE' });
      // The SQLite file was closed: a new server can open it (it holds an exclusive lock while open).
      const third = await serve(resolveConfig({ port: 0, dataDir: join(dir, 'b'), storage: `sqlite:${join(dir, 'b', 'state.db')}`, insecureHttp: true }), () => {});
      await third.server.close();
    } finally {
      await first.server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
