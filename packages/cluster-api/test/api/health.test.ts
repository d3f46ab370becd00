/**
 * /healthz, /livez and /readyz as kube-apiserver lists its checks: `?verbose`, `?exclude=`, one check
 * at `/readyz/<name>`, a failing check as `[-]… failed: reason withheld` with HTTP 500, readiness that
 * waits for the post-start hooks (bootstrap) and fails its `shutdown` check once the server drains.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/http/app.js';
import { apiServerHealth, PostStartHooks } from '../../src/http/health.js';
import { versionInfo } from '../../src/http/nonresource.js';
import { createRegistry } from '../../src/registry/index.js';
import { MemoryStorage } from '../../src/storage/memory/memory.js';
import { runKubectl, startKubectlServer, type KubectlServer } from '../support/helpers.js';

describe('health endpoints through kubectl', () => {
  let k: KubectlServer;
  const raw = (path: string) => runKubectl('kubectl', k.env, ['get', '--raw', path]);
  beforeAll(async () => {
    k = await startKubectlServer();
  });
  afterAll(() => k?.close());

  it('/readyz?verbose lists every check and passes', async () => {
    const r = await raw('/readyz?verbose');
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines.slice(0, 3)).toEqual(['[+]ping ok', '[+]log ok', '[+]etcd ok']);
    expect(lines).toContain('[+]poststarthook/bootstrap-controller ok');
    expect(lines).toContain('[+]poststarthook/rbac/bootstrap-roles ok');
    expect(lines).toContain('[+]poststarthook/scheduling/bootstrap-system-priority-classes ok');
    expect(lines.at(-2)).toBe('[+]shutdown ok');
    expect(lines.at(-1)).toBe('readyz check passed');
  });

  it('/livez?verbose and /healthz?verbose list theirs, without shutdown', async () => {
    for (const endpoint of ['livez', 'healthz']) {
      const r = await raw(`/${endpoint}?verbose`);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^\\[\\+\\]ping ok\\n\\[\\+\\]log ok\\n\\[\\+\\]etcd ok\\n[\\s\\S]*${endpoint} check passed\\n$`));
      expect(r.stdout).not.toContain('shutdown');
    }
    expect((await raw('/livez')).stdout).toBe('ok');
  });

  it('serves one check by name, 404 for an unknown one', async () => {
    expect((await raw('/readyz/etcd')).stdout).toBe('ok');
    expect((await raw('/livez/ping')).stdout).toBe('ok');
    expect((await raw('/readyz/poststarthook/rbac/bootstrap-roles')).stdout).toBe('ok');
    const missing = await raw('/readyz/no-such-check');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/NotFound|could not find/);
  });

  it('?exclude= skips checks and warns about names it does not know', async () => {
    const r = await raw('/readyz?verbose&exclude=etcd&exclude=log,bogus');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('[+]etcd excluded: ok\n');
    expect(r.stdout).toContain('[+]log excluded: ok\n');
    expect(r.stdout).toContain('warn: some health checks cannot be excluded: no matches for "bogus"\n');
    expect(r.stdout.endsWith('readyz check passed\n')).toBe(true);
  });
});

/** The pipeline over a real listener, with checks the test controls (a store that fails, a hook that waits, a drain). */
describe('failing checks', () => {
  let server: Server;
  let url: string;
  let healthy = true;
  let draining = false;
  let finishBootstrap!: () => void;
  const bootstrap = new Promise<void>((resolve) => (finishBootstrap = resolve));

  beforeAll(async () => {
    const storage = new MemoryStorage();
    const hooks = new PostStartHooks();
    void hooks.run('rbac/bootstrap-roles', () => bootstrap);
    // The reason a store gives must never reach a client.
    const store = { healthy: async () => (healthy ? { ok: true } : { ok: false, message: 'dial tcp 10.0.0.7:2379: connection refused' }) };
    const app = createApp({ registry: createRegistry(storage), health: apiServerHealth({ storage: store, hooks, shuttingDown: () => draining }), version: versionInfo('0.0.0') });
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const get = async (path: string) => {
    const res = await fetch(url + path);
    return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
  };

  it('is not ready until the post-start hooks have run', async () => {
    const before = await get('/readyz');
    expect(before.status).toBe(500);
    expect(before.text).toContain('[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n');
    expect(before.text.endsWith('readyz check failed\n')).toBe(true);
    finishBootstrap();
    await bootstrap;
    expect(await get('/readyz')).toMatchObject({ status: 200, text: 'ok', type: 'text/plain; charset=utf-8' });
  });

  it('a failing store fails every endpoint, its reason withheld', async () => {
    healthy = false;
    try {
      for (const endpoint of ['/readyz', '/livez', '/healthz']) {
        const r = await get(endpoint);
        expect(r.status, endpoint).toBe(500);
        expect(r.text).toContain('[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n');
        expect(r.text).not.toMatch(/10\.0\.0\.7|refused|2379/);
      }
      const one = await get('/readyz/etcd');
      expect(one).toMatchObject({ status: 500, text: 'internal server error: reason withheld\n' });
      // Excluding the failing check makes the rest pass.
      expect((await get('/readyz?exclude=etcd')).status).toBe(200);
    } finally {
      healthy = true;
    }
  });

  it('fails its shutdown check while the server drains, staying alive', async () => {
    draining = true;
    try {
      const r = await get('/readyz?verbose');
      expect(r.status).toBe(500);
      expect(r.text).toContain('[-]shutdown failed: reason withheld\n');
      expect((await get('/livez')).status).toBe(200);
    } finally {
      draining = false;
    }
  });
});
