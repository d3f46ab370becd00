/**
 * Server errors over HTTP: a failing store answers 503 (unavailable) or 500 (anything else) with a
 * Status that names a request id and nothing of the failure itself; the failure goes to the log
 * under that id. The server keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { AdminUser } from '../../src/auth/credentials.js';
import { startServer, type ClusterApiServer } from '../../src/server.js';
import { StorageError } from '../../src/storage/errors.js';
import type { KeyValue, Storage } from '../../src/storage/interface.js';
import { MemoryStorage } from '../../src/storage/memory/memory.js';
import { openWatch, request, TestToken } from '../support/helpers.js';

/** What a failing backend says: addresses, paths and driver text a client must never see. */
const Secrets = ['10.1.2.3:2379', '/var/lib/cluster/state.db', 'SQLITE_CORRUPT'];

/** A memory store whose reads of one name fail as told (a Storage: its getNow may answer undefined, sending the read to get). */
const MemoryBase: new () => Storage = MemoryStorage;
class FailingStorage extends MemoryBase {
  failure: Error | undefined;
  override get(key: string): Promise<KeyValue | undefined> {
    return key.endsWith('/broken') && this.failure ? Promise.reject(this.failure) : super.get(key);
  }
  override getNow(key: string): KeyValue | null | undefined {
    return key.endsWith('/broken') && this.failure ? undefined : super.getNow?.(key);
  }
}

describe('server errors', () => {
  const storage = new FailingStorage();
  const logs: Record<string, unknown>[] = [];
  let server: ClusterApiServer;
  beforeAll(async () => {
    server = await startServer({ storage, authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])), log: (e) => logs.push(e), controllers: false });
  });
  afterAll(() => server.close());

  it.each([
    ['an unavailable store', new StorageError('Unavailable', '/registry/pods/default/broken', 'dial tcp 10.1.2.3:2379: connection refused'), 503, 'ServiceUnavailable'],
    ['anything else', new Error('SQLITE_CORRUPT: database disk image is malformed (/var/lib/cluster/state.db)'), 500, 'InternalError'],
  ])('%s: a Status with a request id, the cause only in the log', async (_, failure, code, reason) => {
    storage.failure = failure;
    logs.length = 0;
    const r = await request(server.url, 'GET', '/api/v1/namespaces/default/pods/broken', {});
    expect(r.status).toBe(code);
    expect(r.json).toMatchObject({ kind: 'Status', status: 'Failure', code, reason });
    for (const secret of Secrets) expect(r.text).not.toContain(secret);
    const requestId = r.headers.get('audit-id');
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.json.message).toContain(`request id ${requestId}`);
    expect(logs).toEqual([expect.objectContaining({ level: 'error', requestId, code, path: '/api/v1/namespaces/default/pods/broken', err: expect.stringContaining(failure.message) })]);
    storage.failure = undefined;
    expect((await request(server.url, 'GET', '/api/v1/namespaces/default/pods/broken', {})).status).toBe(404);
  });

  it('a client error is answered as it is and not logged', async () => {
    logs.length = 0;
    const r = await request(server.url, 'GET', '/api/v1/namespaces/default/pods/missing', {});
    expect([r.status, r.headers.get('audit-id'), r.json.message]).toEqual([404, null, 'pods "missing" not found']);
    expect(logs).toEqual([]);
  });

  it('a watch that ends on a server error says so in its ERROR event without the cause', async () => {
    const watch = await openWatch(server, '/api/v1/namespaces/default/pods?watch=true&resourceVersion=0');
    logs.length = 0;
    await storage.close();
    const event = await watch.next();
    expect(event).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 503, reason: 'ServiceUnavailable' } });
    expect(event.object.message).toMatch(/request id [0-9a-f-]{36}/);
    expect(JSON.stringify(event)).not.toContain('closed');
    // (The authorizer's RBAC cache warns that its own watches ended too.)
    expect(logs.filter((l) => l.level === 'error')).toEqual([expect.objectContaining({ level: 'error', code: 503, requestId: expect.any(String) })]);
    watch.close();
  });
});
