/**
 * `cluster-api migrate --from sqlite:… --to etcd://…` as a user runs it: every object arrives with
 * its content (uid, creationTimestamp, labels, spec, status…) and a new resourceVersion; a second run
 * copies nothing; bad input fails clearly without touching the target.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServerProcess } from '../../testing/src/etcd-api-servers.js';
import { startEtcd, type EtcdCluster } from '../../testing/src/etcd-cluster.js';
import { pod } from '../support/helpers.js';

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'migrate-'));
const sqlite = `sqlite:${join(dir, 'state.db')}`;
const machine = join(dir, 'data');
let etcd: EtcdCluster;
let onEtcd: ApiServerProcess | undefined;
/** What the SQLite-backed server served, by path. */
const before = new Map<string, any>();
const paths = [
  '/api/v1/namespaces/mig',
  ...Array.from({ length: 30 }, (_, i) => `/api/v1/namespaces/mig/pods/p${i}`),
  '/api/v1/namespaces/mig/secrets/s1',
  '/api/v1/namespaces/mig/serviceaccounts/sa1',
];

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [cli, 'migrate', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

beforeAll(async () => {
  const src = await startApiServer(sqlite, [], { dataDir: machine });
  try {
    expect((await src.request('POST', '/api/v1/namespaces', { metadata: { name: 'mig', labels: { team: 'a' } } })).status).toBe(201);
    for (let i = 0; i < 30; i++) expect((await src.request('POST', '/api/v1/namespaces/mig/pods', pod(`p${i}`, { i: String(i) }))).status).toBe(201);
    await src.request('POST', '/api/v1/namespaces/mig/secrets', { metadata: { name: 's1' }, data: { k: Buffer.from('v').toString('base64') } });
    await src.request('POST', '/api/v1/namespaces/mig/serviceaccounts', { metadata: { name: 'sa1' } });
    for (const p of paths) {
      const got = await src.request('GET', p);
      expect(got.status, p).toBe(200);
      before.set(p, got.json);
    }
  } finally {
    await src.stop();
  }
  etcd = await startEtcd({ members: 1, dataRoot: existsSync('/dev/shm') ? '/dev/shm' : undefined });
});

afterAll(async () => {
  await onEtcd?.stop();
  await etcd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const withoutRv = (o: any) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });

describe('cluster-api migrate', () => {
  it('copies every object from SQLite to etcd with its content and a new resourceVersion', async () => {
    const res = await run(['--from', sqlite, '--to', etcd.url]);
    expect(res.code, res.stderr).toBe(0);
    const result = JSON.parse(res.stdout);
    // 30 pods, a secret, a service account, 5 namespaces (4 system + mig), plus what serve creates itself.
    expect(result.copied).toBeGreaterThanOrEqual(37);
    expect(result.skipped).toBe(0);
    // The same machine's data dir: the target server keeps the front-proxy CA the source published
    // (extension-apiserver-authentication), as a server moved to etcd on one machine does.
    onEtcd = await startApiServer(etcd.url, [], { dataDir: machine });
    for (const p of paths) {
      const now = await onEtcd.request('GET', p);
      expect(now.status, p).toBe(200);
      expect(withoutRv(now.json)).toEqual(withoutRv(before.get(p)));
      expect(now.json.metadata.resourceVersion).toMatch(/^\d+$/);
    }
    const pods = await onEtcd.request('GET', '/api/v1/namespaces/mig/pods?labelSelector=i%3D7');
    expect(pods.json.items.map((x: any) => x.metadata.name)).toEqual(['p7']);
  });

  it('a second run copies nothing and changes nothing', async () => {
    const rv = (await onEtcd!.request('GET', '/api/v1/namespaces/mig/pods/p0')).json.metadata.resourceVersion;
    const res = await run(['--from', sqlite, '--to', etcd.url]);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ copied: 0 });
    expect((await onEtcd!.request('GET', '/api/v1/namespaces/mig/pods/p0')).json.metadata.resourceVersion).toBe(rv);
  });

  it('an object changed in the target stops the run; nothing is overwritten', async () => {
    const p1 = (await onEtcd!.request('GET', '/api/v1/namespaces/mig/pods/p1')).json;
    const changed = await onEtcd!.request('PUT', '/api/v1/namespaces/mig/pods/p1', { ...p1, metadata: { ...p1.metadata, labels: { changed: 'yes' } } });
    expect(changed.status).toBe(200);
    const res = await run(['--from', sqlite, '--to', etcd.url]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/\/registry\/pods\/mig\/p1 already exists in the target with different content/);
    expect((await onEtcd!.request('GET', '/api/v1/namespaces/mig/pods/p1')).json.metadata.labels).toEqual({ changed: 'yes' });
  });

  it.concurrent.each([
    ['no --to', ['--from', sqlite], 2, /Missing required argument: to/],
    ['a malformed etcd URL', ['--from', sqlite, '--to', 'etcd://'], 1, /invalid etcd storage URL .*no endpoints/],
    ['an unknown scheme', ['--from', sqlite, '--to', 'mysql://x'], 1, /unknown scheme/],
    ['a missing SQLite source', ['--from', `sqlite:${join(dir, 'nope.db')}`, '--to', 'memory:'], 1, /nope\.db: no such file/],
    ['the same storage twice', ['--from', sqlite, '--to', sqlite], 1, /same storage/],
    ['a certfile without a keyfile', ['--from', sqlite, '--to', 'etcd://127.0.0.1:1', '--etcd-certfile', '/x.pem'], 1, /--etcd-certfile and --etcd-keyfile/],
  ])('%s fails clearly', async (_, args, code, message) => {
    const res = await run(args);
    expect(res.code).toBe(code);
    expect(res.stderr).toMatch(message);
    expect(existsSync(join(dir, 'nope.db'))).toBe(false);
  });
});
