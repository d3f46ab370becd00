/**
 * Faults of a real 3-member etcd cluster under a running `cluster-api serve` (loopback, disk data):
 * losing one member (the leader) and losing quorum. Clients behave as informers do: they retry a
 * 503 after its retryAfterSeconds, and a watch that ends is resumed or relisted — so "no event is
 * missed" means every acknowledged write reaches the watcher.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWatch, startApiServer, type ApiServerProcess, type WatchStream } from '../../testing/src/etcd-api-servers.js';
import { startEtcd, type EtcdCluster } from '../../testing/src/etcd-cluster.js';
import { pod } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

const NS = '/api/v1/namespaces/faults/pods';
let etcd: EtcdCluster;
let api: ApiServerProcess;
const refusals: { status: number; json: any }[] = [];

beforeAll(async () => {
  etcd = await startEtcd({ members: 3 });
  api = await startApiServer(etcd.url);
  expect((await api.request('POST', '/api/v1/namespaces', { metadata: { name: 'faults' } })).status).toBe(201);
});

afterAll(async () => {
  await api?.stop();
  await etcd?.stop();
});

/** POST until the pod exists; every refusal on the way is recorded (the test checks its shape). */
async function createUntilOk(name: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const res = await api.request('POST', NS, pod(name));
    // 409: an earlier attempt that timed out did commit; the pod is there either way.
    if (res.status === 201 || (res.status === 409 && res.json.reason === 'AlreadyExists')) return;
    refusals.push(res);
    if (Date.now() > deadline) throw new Error(`${name}: still ${res.status} after 20 s: ${JSON.stringify(res.json)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A watch that, like an informer, relists and re-watches when its stream ends. */
async function informer(): Promise<{ seen: Set<string>; relists: () => number; close(): void }> {
  const seen = new Set<string>();
  let relists = 0;
  let watch: WatchStream | undefined;
  let closed = false;
  const run = async (): Promise<void> => {
    while (!closed) {
      const list = await api.request('GET', NS);
      if (list.status !== 200) {
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      for (const p of list.json.items) seen.add(p.metadata.name);
      watch = await openWatch(api, `${NS}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`).catch(() => undefined);
      let consumed = 0;
      while (watch && !closed && !watch.ended) {
        for (; consumed < watch.events.length; consumed++) {
          const ev = watch.events[consumed];
          if (ev.type === 'ADDED') seen.add(ev.object.metadata.name);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      if (!closed) relists++;
    }
  };
  void run();
  return { seen, relists: () => relists, close: () => ((closed = true), watch?.close()) };
}

describe('etcd faults under a running API server', () => {
  it('losing the leader of 3 members: writes and watches continue, and the member rejoins', async () => {
    const watcher = await informer();
    const acked: string[] = [];
    try {
      for (let i = 0; i < 10; i++) acked.push((await createUntilOk(`one-${i}`), `one-${i}`));
      const leader = await etcd.leader();
      await etcd.kill(leader);
      for (let i = 10; i < 30; i++) acked.push((await createUntilOk(`one-${i}`), `one-${i}`));
      await until('the watcher to see every write made with a member down', () => acked.every((n) => watcher.seen.has(n)), { timeoutMs: 15_000 });
      await etcd.restart(leader);
      for (let i = 30; i < 40; i++) acked.push((await createUntilOk(`one-${i}`), `one-${i}`));
      // The restarted member caught up: it alone serves every acknowledged pod.
      const solo = etcd.members[leader]!.clientPort;
      await until('the restarted member to hold every pod', async () => (await countOnMember(solo, '/registry/pods/faults/')) === acked.length, { timeoutMs: 15_000 });
      await until('the watcher to see every write', () => acked.every((n) => watcher.seen.has(n)), { timeoutMs: 15_000 });
    } finally {
      watcher.close();
    }
  });

  it('losing quorum: requests fail fast with 503 and retryAfterSeconds; reads, writes and watches recover by themselves; no event is missed', async () => {
    const watcher = await informer();
    const acked: string[] = [];
    try {
      for (let i = 0; i < 5; i++) acked.push((await createUntilOk(`q-${i}`), `q-${i}`));
      const q0 = (await api.request('GET', `${NS}/q-0`)).json;
      const up = etcd.members.findIndex((m) => m.running);
      const down = [0, 1, 2].filter((i) => i !== up);
      await Promise.all(down.map((i) => etcd.kill(i)));
      // Every refused request is a 503 Status with retryAfterSeconds, answered within the call bound
      // (require-leader refuses at once; a proposal caught in flight waits for its deadline).
      const refused = async (method: string, path: string, body?: unknown) => {
        let res: { status: number; json: any } | undefined;
        await until(`${method} ${path} to be refused`, async () => (res = await api.request(method, path, body)).status >= 500, { timeoutMs: 15_000 });
        expect(res!.status, JSON.stringify(res!.json)).toBe(503);
        expect(res!.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'ServiceUnavailable', code: 503 });
        expect(res!.json.details.retryAfterSeconds).toBeGreaterThan(0);
      };
      await refused('PUT', `${NS}/q-0`, { ...q0, metadata: { ...q0.metadata, labels: { during: 'outage' } } });
      await refused('POST', '/api/v1/namespaces', { metadata: { name: 'during-outage' } });
      await refused('POST', NS, pod('during-outage'));
      await refused('GET', `${NS}/q-0`);
      await refused('GET', NS);
      expect((await fetch(`${api.url}/readyz`)).status).not.toBe(200);
      await Promise.all(down.map((i) => etcd.restart(i)));
      // The same API server process recovers without a restart.
      for (let i = 5; i < 15; i++) acked.push((await createUntilOk(`q-${i}`), `q-${i}`));
      expect((await api.request('GET', `${NS}/q-0`)).status).toBe(200);
      await until('the watcher to see every acknowledged write', () => acked.every((n) => watcher.seen.has(n)), { timeoutMs: 15_000 });
    } finally {
      watcher.close();
    }
    for (const r of refusals) expect(r.json).toMatchObject({ kind: 'Status', status: 'Failure' });
  });
});

/** Keys under a prefix as one member alone sees them (serializable read: no quorum needed). */
async function countOnMember(port: number, prefix: string): Promise<number> {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  const res = await fetch(`http://127.0.0.1:${port}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({ key: b64(prefix), range_end: b64(end), count_only: true, serializable: true }),
  });
  return Number(((await res.json()) as { count?: string }).count ?? 0);
}
