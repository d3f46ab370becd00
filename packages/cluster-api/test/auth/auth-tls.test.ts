/** serve() with a kube-apiserver token file and a brought-in serving certificate, over real TLS. */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { resolveConfig } from '../../src/config.js';
import { ensureTls, servingHosts } from '../../src/auth/tls.js';
import { serve, type Served } from '../../src/server.js';
import { tempDir } from '../support/helpers.js';

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
    // Authenticated, so discovery is theirs; listing namespaces is not, until an administrator binds it (403, not 401).
    for (const token of ['alice-token', 'bob-token']) {
      expect((await get(served.server.url, ca, '/api', token)).status).toBe(200);
      expect((await get(served.server.url, ca, '/api/v1/namespaces', token)).body.message).toBe(
        `namespaces is forbidden: User "${token.split('-')[0]}" cannot list resource "namespaces" in API group "" at the cluster scope`,
      );
    }
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

  it('does not generate an admin token or a serving certificate of its own', () => {
    expect(() => readFileSync(join(dir, 'data', 'admin.token'))).toThrow();
    expect(() => readFileSync(join(dir, 'data', 'tls', 'serving.crt'))).toThrow();
    // Only the CA that signs node and component certificates (the embedded node's kubelet server).
    expect(readFileSync(join(dir, 'data', 'tls', 'ca.crt'), 'utf8')).toMatch(/^-----BEGIN CERTIFICATE-----/);
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

describe('the kubeconfig of a brought-in certificate', () => {
  let dir: string;
  let own: ReturnType<typeof ensureTls>;
  const open: Served[] = [];

  beforeAll(() => {
    dir = tempDir();
    own = ensureTls(join(dir, 'own-pki'), servingHosts('127.0.0.1'));
    writeFileSync(join(dir, 'leaf.crt'), own.cert);
    writeFileSync(join(dir, 'full-chain.crt'), `${own.cert}${own.ca}`);
    writeFileSync(join(dir, 'ca.crt'), own.ca!);
    writeFileSync(join(dir, 'tls.key'), own.key);
    writeFileSync(join(dir, 'not-pem.crt'), 'this is no certificate\n');
    writeFileSync(join(dir, 'tokens.csv'), 'alice-token,alice,1001,system:masters\n');
  });
  afterAll(async () => {
    for (const s of open) await s.server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (name: string, files: { cert: string; key?: string; ca?: string }) => {
    const served = await serve(
      resolveConfig({
        port: 0,
        dataDir: join(dir, name),
        storage: 'memory:',
        tokenAuthFile: join(dir, 'tokens.csv'),
        tlsCertFile: join(dir, files.cert),
        tlsPrivateKeyFile: join(dir, files.key ?? 'tls.key'),
        ...(files.ca && { tlsCaFile: join(dir, files.ca) }),
      }),
      () => {},
    );
    open.push(served);
    return served;
  };

  /** What kubectl would do with the kubeconfig: trust only its CA, send its token. */
  const viaKubeconfig = async (served: Served) => {
    const kc = parse(readFileSync(served.kubeconfig!, 'utf8'));
    const ca = Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64').toString();
    return get(kc.clusters[0].cluster.server, ca, '/api/v1/namespaces', kc.users[0].user.token);
  };

  it('embeds the root a full-chain certificate file ends in', async () => {
    const served = await start('chain', { cert: 'full-chain.crt' });
    expect((await viaKubeconfig(served)).status).toBe(200);
  });

  it('embeds --tls-ca-file when given', async () => {
    const served = await start('ca-file', { cert: 'leaf.crt', ca: 'ca.crt' });
    expect((await viaKubeconfig(served)).status).toBe(200);
  });

  it('refuses a certificate file with no certificate, a key of another certificate and a CA file with none, naming the file', async () => {
    await expect(start('bad-cert', { cert: 'not-pem.crt' })).rejects.toThrow(/--tls-cert-file .*not-pem\.crt: no PEM certificate/);
    await expect(start('bad-ca', { cert: 'leaf.crt', ca: 'not-pem.crt' })).rejects.toThrow(/--tls-ca-file .*not-pem\.crt: no PEM certificate/);
    writeFileSync(join(dir, 'other.key'), ensureTls(join(dir, 'other-pki'), ['localhost']).key);
    await expect(start('bad-key', { cert: 'leaf.crt', key: 'other.key' })).rejects.toThrow(/not the private key of the certificate/);
    await expect(start('not-key', { cert: 'leaf.crt', key: 'not-pem.crt' })).rejects.toThrow(/--tls-private-key-file .*: no private key can be read/);
  });
});
