/**
 * Real storage failures over HTTP: a SQLite file that is full (SQLITE_FULL, "database or disk is
 * full") and an etcd that refuses connections (ECONNREFUSED with its address). The client reads a 503
 * it can act on (retry: retryAfterSeconds and Retry-After, as kube-apiserver writes them) and a
 * request id; the lower layer's text stays in the log under that id.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { AdminUser } from '../../src/auth/credentials.js';
import { startServer, type ClusterApiServer } from '../../src/server.js';
import { openStorage } from '../../src/storage/factory.js';
import { SqliteStorage } from '../../src/storage/sqlite/sqlite.js';
import { startEtcd, type EtcdCluster } from '../../testing/src/etcd-cluster.js';
import { pod, request, tempDir, TestToken, type Reply } from '../support/helpers.js';

const servers: ClusterApiServer[] = [];
let etcd: EtcdCluster | undefined;
afterAll(async () => {
  for (const s of servers) await s.close().catch(() => undefined);
  await etcd?.stop();
});

async function start(storage: Awaited<ReturnType<typeof openStorage>>, logs: Record<string, unknown>[]): Promise<ClusterApiServer> {
  const server = await startServer({ storage, authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])), log: (e) => logs.push(e), controllers: false });
  servers.push(server);
  return server;
}

/** A 503 that says what to do and nothing of `secrets`; its request id finds the cause in the log. */
function expectActionable503(r: Reply, logs: Record<string, unknown>[], secrets: RegExp): void {
  expect(r.status, r.text).toBe(503);
  expect(r.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'ServiceUnavailable', code: 503, details: { retryAfterSeconds: 1 } });
  expect(Object.keys(r.json)).toEqual(['kind', 'apiVersion', 'metadata', 'status', 'message', 'reason', 'details', 'code']);
  expect(r.headers.get('retry-after')).toBe('1');
  expect(r.text).not.toMatch(secrets);
  const id = r.headers.get('audit-id');
  expect(r.json.message).toBe(`the storage backend is unavailable; try again later (request id ${id})`);
  const entry = logs.find((l) => l.requestId === id);
  expect(entry).toMatchObject({ level: 'error', code: 503 });
  expect(String(entry!.err)).toMatch(secrets);
}

describe('storage failures reach clients as actionable 503s, their text only in the log', () => {
  it('SQLite: database or disk is full', async () => {
    const logs: Record<string, unknown>[] = [];
    const storage = SqliteStorage.open(join(tempDir(), 'state.db'));
    const server = await start(storage, logs);
    const call = (method: string, path: string, body?: unknown) => request(server.url, method, path, { body, token: TestToken });
    expect((await call('POST', '/api/v1/namespaces', { metadata: { name: 'full' } })).status).toBe(201);
    const db = (storage as unknown as { db: BetterSqlite3.Database }).db;
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
    const big = { ...pod('big'), metadata: { name: 'big', annotations: { fill: 'x'.repeat(200 * 1024) } } };
    expectActionable503(await call('POST', '/api/v1/namespaces/full/pods', big), logs, /disk is full|SQLITE_FULL/);
    db.pragma('max_page_count = 1073741823');
    expect((await call('POST', '/api/v1/namespaces/full/pods', big)).status).toBe(201);
  });

  it('etcd: connection refused', async () => {
    etcd = await startEtcd({ members: 1, dataRoot: '/dev/shm' });
    const logs: Record<string, unknown>[] = [];
    const server = await start(await openStorage(etcd.url, { etcd: { requestTimeoutMs: 2_000 } }), logs);
    const call = (method: string, path: string, body?: unknown) => request(server.url, method, path, { body, token: TestToken });
    expect((await call('POST', '/api/v1/namespaces', { metadata: { name: 'gone' } })).status).toBe(201);
    await etcd.kill(0);
    const port = etcd.members[0]!.clientPort;
    const secrets = new RegExp(`ECONNREFUSED|127\\.0\\.0\\.1:${port}|No connection established|etcd`);
    expectActionable503(await call('GET', '/api/v1/namespaces/gone'), logs, secrets);
    expectActionable503(await call('POST', '/api/v1/namespaces/gone/pods', pod('p')), logs, secrets);
    await etcd.restart(0);
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
      if ((await call('GET', '/api/v1/namespaces/gone')).status === 200) return;
    }
    throw new Error('the API did not recover after etcd came back');
  }, 60_000);
});
