/**
 * A healthy etcd never yields a 503. Watches resuming below the watch cache's floor (every informer
 * after an API server restart) are served by etcd watch streams of their own; when their clients go,
 * the API server cancels those streams. A cancel of our own is no failure of etcd: it must not count
 * against the member (the etcd3 client's per-host circuit breaker opened on two of them and refused
 * every request for a second, as "no member reachable").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWatch, startApiServer, type ApiServerProcess, type WatchStream } from '../../testing/src/etcd-api-servers.js';
import { startEtcd, type EtcdCluster } from '../../testing/src/etcd-cluster.js';
import { pod } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

const NS = '/api/v1/namespaces/breaker/pods';
let etcd: EtcdCluster;
let api: ApiServerProcess;
let oldRevision: string;

beforeAll(async () => {
  etcd = await startEtcd({ members: 1, dataRoot: '/dev/shm' });
  const before = await startApiServer(etcd.url);
  expect((await before.request('POST', '/api/v1/namespaces', { metadata: { name: 'breaker' } })).status).toBe(201);
  oldRevision = (await before.request('POST', NS, pod('first'))).json.metadata.resourceVersion;
  for (let i = 0; i < 5; i++) expect((await before.request('POST', NS, pod(`p${i}`))).status).toBe(201);
  await before.stop();
  // A restarted API server: its watch cache starts at the current revision, so informers resuming
  // from before the restart are served by etcd watch streams of their own.
  api = await startApiServer(etcd.url);
}, 60_000);

afterAll(async () => {
  await api?.stop();
  await etcd?.stop();
});

/** Requests in a loop until stopped; every status seen is kept. */
function traffic(): { stop(): Promise<number[]> } {
  const statuses: number[] = [];
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const r = i % 2 ? await api.request('GET', `${NS}/first`) : await api.request('GET', NS);
      statuses.push(r.status);
    }
  })();
  return { stop: async () => ((running = false), await loop, statuses) };
}

describe('etcd watch streams ended by the API server', () => {
  it('20 watches from an old resourceVersion ending at once, 3 rounds, while requests flow: never a 503', async () => {
    for (let round = 0; round < 3; round++) {
      const watches: WatchStream[] = [];
      for (let i = 0; i < 20; i++) watches.push(await openWatch(api, `${NS}?watch=1&resourceVersion=${oldRevision}`));
      // Each is served from etcd's history: it replays the creates after the old revision.
      await until('every watch to replay the history', () => watches.every((w) => w.events.length >= 5), { timeoutMs: 15_000 });
      const load = traffic();
      await new Promise((r) => setTimeout(r, 100));
      for (const w of watches) w.close();
      // Long enough for a breaker opened by the cancels to refuse (it stays open one second).
      await new Promise((r) => setTimeout(r, 1_500));
      const statuses = await load.stop();
      expect(statuses.length).toBeGreaterThan(10);
      expect(statuses.filter((s) => s !== 200), `round ${round}`).toEqual([]);
    }
    // And the watches still work afterwards.
    const w = await openWatch(api, `${NS}?watch=1&resourceVersion=${oldRevision}`);
    await until('a new watch from the old revision', () => w.events.length >= 5, { timeoutMs: 15_000 });
    w.close();
  }, 120_000);
});
