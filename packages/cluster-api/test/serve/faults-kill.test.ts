/**
 * kill -9 of an API server in the middle of a write burst: every write that got a 2xx is there
 * afterwards, read through a fresh server on the same storage — for the embedded SQLite file and
 * for etcd (member data on disk, as in production).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServerProcess } from '../../testing/src/etcd-api-servers.js';
import { startEtcd, type EtcdCluster } from '../../testing/src/etcd-cluster.js';
import { pod } from '../support/helpers.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const storages: Record<string, () => Promise<string>> = {
  sqlite: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kill9-sqlite-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return `sqlite:${join(dir, 'state.db')}`;
  },
  etcd: async () => {
    const etcd: EtcdCluster = await startEtcd({ members: 1 });
    cleanups.push(() => etcd.stop());
    return etcd.url;
  },
};

/** Eight writers create pods as fast as they can until the server dies; returns the 201s. */
async function burstUntilKilled(api: ApiServerProcess, killAfter: number): Promise<string[]> {
  const acked: string[] = [];
  let dead = false;
  const writer = async (w: number) => {
    for (let i = 0; !dead; i++) {
      const name = `p-${w}-${i}`;
      const res = await api.request('POST', '/api/v1/namespaces/burst/pods', pod(name)).catch(() => undefined);
      if (!res) return;
      if (res.status === 201) acked.push(name);
    }
  };
  const writers = Array.from({ length: 8 }, (_, w) => writer(w));
  while (acked.length < killAfter) await new Promise((r) => setTimeout(r, 5));
  await api.kill();
  dead = true;
  await Promise.all(writers);
  return acked;
}

describe.each(Object.keys(storages))('kill -9 of the API server during a write burst (%s)', (backend) => {
  it('every acknowledged write is present afterwards', async () => {
    const storage = await storages[backend]!();
    const first = await startApiServer(storage);
    cleanups.push(() => first.stop());
    expect((await first.request('POST', '/api/v1/namespaces', { metadata: { name: 'burst' } })).status).toBe(201);
    const acked = await burstUntilKilled(first, 100);
    expect(first.child.signalCode).toBe('SIGKILL');
    const second = await startApiServer(storage);
    cleanups.push(() => second.stop());
    const list = await second.request('GET', '/api/v1/namespaces/burst/pods');
    expect(list.status).toBe(200);
    const present = new Set(list.json.items.map((p: any) => p.metadata.name));
    const lost = acked.filter((n) => !present.has(n));
    expect(lost).toEqual([]);
    expect(present.size).toBeGreaterThanOrEqual(acked.length);
  });
});
