/**
 * The informer against the real cluster API: handlers and cache, `synced`, resuming a cut watch
 * from its resourceVersion (through a TCP proxy the test cuts), and a real 410 answered by a relist
 * (an in-process cluster API, from @func/cluster-api's public API, with a tiny watch cache whose
 * storage history the test compacts while the informer is cut off).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry, openStorage, startServer, tokenAuthenticator, type ClusterApiServer } from '@func/cluster-api';
import { Informer, KubeClient, type KubeObject, loadConnection, Resources } from '../src/index.js';
import { type Cluster, startCluster, until } from './cluster.js';
import { type Proxy, startProxy } from './tcp-proxy.js';

const pod = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  metadata: { name, labels },
  spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'nginx' }] },
});

function record(informer: Informer) {
  const events: string[] = [];
  informer.on('add', (o) => events.push(`add ${o.metadata?.name}`));
  informer.on('update', (o, old) => events.push(`update ${o.metadata?.name} ${old?.metadata?.labels?.v ?? ''}->${o.metadata?.labels?.v ?? ''}`));
  informer.on('delete', (o) => events.push(`delete ${o.metadata?.name}`));
  return events;
}

describe('Informer against cluster-api serve', () => {
  let cluster: Cluster;
  let proxy: Proxy;
  let client: KubeClient;
  let direct: KubeClient;

  beforeAll(async () => {
    cluster = await startCluster();
    proxy = await startProxy(Number(new URL(cluster.url).port));
    const connection = loadConnection({ kubeconfig: cluster.kubeconfig, namespace: 'inf' });
    client = new KubeClient({ ...connection, server: `https://127.0.0.1:${proxy.port}` });
    direct = new KubeClient(connection);
    await direct.create(Resources.namespaces, { metadata: { name: 'inf' } });
    await direct.create(Resources.pods, pod('before'));
  });
  afterAll(async () => {
    client?.close();
    direct?.close();
    await proxy?.close();
    await cluster?.stop();
  });

  it('lists, syncs, then follows adds, updates and deletes in its cache', async () => {
    const informer = new Informer(client, Resources.pods, { namespace: 'inf', labelSelector: 'team!=other' }).start();
    const events = record(informer);
    await informer.synced;
    expect(events).toEqual(['add before']);
    await direct.create(Resources.pods, pod('live', { v: '1' }));
    await direct.create(Resources.pods, pod('filtered', { team: 'other' }));
    await direct.patch(Resources.pods, 'live', { metadata: { labels: { v: '2' } } }, { type: 'merge' });
    await direct.delete(Resources.pods, 'before');
    await until(() => events.length === 4, 'four events');
    expect(events).toEqual(['add before', 'add live', 'update live 1->2', 'delete before']);
    expect(informer.get('live', 'inf')?.metadata?.labels).toEqual({ v: '2' });
    expect(informer.list().map((p) => p.metadata?.name)).toEqual(['live']);
    await informer.stop();
  });

  it('sees its own writes at once (observe), keeps indexes, and no late event undoes a write or a delete', async () => {
    const informer = new Informer(client, Resources.pods, { namespace: 'inf', indexers: { team: (p) => [p.metadata?.labels?.team ?? ''] } }).start();
    const events = record(informer);
    await informer.synced;
    proxy.cut(true);
    // Written while the informer's watch is cut off: only observe() can show it.
    const mine = await direct.create(Resources.pods, pod('mine', { team: 'a', v: '1' }));
    informer.observe(mine);
    expect(informer.get('mine', 'inf')?.metadata?.uid).toBe(mine.metadata?.uid);
    expect(informer.byIndex('team', 'a').map((p) => p.metadata?.name)).toEqual(['mine']);
    const patched = await direct.patch(Resources.pods, 'mine', { metadata: { labels: { team: 'b', v: '2' } } }, { type: 'merge' });
    informer.observe(patched);
    expect([informer.byIndex('team', 'a'), informer.byIndex('team', 'b').map((p) => p.metadata?.name)]).toEqual([[], ['mine']]);
    // A write that changed nothing answers the version held: the handlers hear nothing of it.
    const heard = events.length;
    informer.observe(structuredClone(patched));
    expect(events.length).toBe(heard);
    const doomed = await direct.create(Resources.pods, pod('doomed', { team: 'b' }));
    informer.observe(doomed);
    await direct.delete(Resources.pods, 'doomed', { gracePeriodSeconds: 0 });
    informer.observeDelete(doomed, true);
    proxy.release();
    // The watch now delivers the older versions (mine v1, doomed's ADDED): none of them wins.
    await direct.create(Resources.pods, pod('marker'));
    await until(() => events.includes('add marker'), 'the watch caught up');
    expect(informer.get('mine', 'inf')?.metadata?.labels).toEqual({ team: 'b', v: '2' });
    expect(informer.get('doomed', 'inf')).toBeUndefined();
    expect(events.filter((e) => e.includes('mine') || e.includes('doomed'))).toEqual(['add mine', 'update mine 1->2', 'add doomed', 'delete doomed', 'update mine 2->2']);
    expect(() => informer.byIndex('no-such-index', 'x')).toThrow('no index no-such-index');
    await informer.stop();
    for (const name of ['mine', 'marker']) await direct.delete(Resources.pods, name, { gracePeriodSeconds: 0 });
  });

  it('resumes a cut watch from its resourceVersion, after a backoff, without listing again', async () => {
    const errors: unknown[] = [];
    const informer = new Informer(client, Resources.pods, { namespace: 'inf', minBackoffMs: 50, maxBackoffMs: 200, onError: (e) => errors.push(e) }).start();
    const events = record(informer);
    await informer.synced;
    proxy.cut(true);
    await direct.create(Resources.pods, pod('while-cut'));
    await until(() => errors.length >= 2, 'failed reconnects while the proxy refuses');
    proxy.release();
    await until(() => events.includes('add while-cut'), 'the event written while cut off');
    await direct.create(Resources.pods, pod('after'));
    await until(() => events.includes('add after'), 'a later event');
    expect(informer.lists).toBe(1);
    expect(events.filter((e) => e === 'add while-cut')).toHaveLength(1);
    await informer.stop();
  });
});

describe('Informer relist on 410', () => {
  let server: ClusterApiServer;
  let proxy: Proxy;
  let client: KubeClient;
  let storage: Awaited<ReturnType<typeof openStorage>>;
  const token = 'informer-test-token';

  beforeAll(async () => {
    storage = await openStorage('memory:', { compaction: false });
    const registry = createRegistry(storage, { watchCache: { capacity: 4 } });
    server = await startServer({ storage, registry, port: 0, authenticator: tokenAuthenticator(new Map([[token, { name: 'admin', uid: 'admin', groups: ['system:masters'] }]])) });
    const url = new URL(server.url);
    proxy = await startProxy(Number(url.port));
    client = new KubeClient({ server: `${url.protocol}//127.0.0.1:${proxy.port}`, insecureSkipTlsVerify: true, credentials: { token }, namespace: 'gone', context: 'test', files: [] });
    await client.create(Resources.namespaces, { metadata: { name: 'gone' } });
    await client.create(Resources.pods, pod('old'));
    await client.create(Resources.pods, pod('doomed'));
  });
  afterAll(async () => {
    client?.close();
    await proxy?.close();
    await server?.close();
  });

  it('lists again when its resourceVersion has been compacted away, reporting what changed meanwhile', async () => {
    const informer = new Informer(client, Resources.pods, { namespace: 'gone', minBackoffMs: 20, maxBackoffMs: 100 }).start();
    const events = record(informer);
    await informer.synced;
    proxy.cut(true);
    const writer = new KubeClient({ ...client.connection, server: server.url });
    try {
      for (let i = 0; i < 6; i++) await writer.create(Resources.pods, pod(`gap${i}`));
      await writer.delete(Resources.pods, 'doomed');
      await storage.compact(await storage.currentRevision());
    } finally {
      writer.close();
    }
    proxy.release();
    await until(() => informer.lists === 2 && events.includes('delete doomed'), 'the relist after 410');
    expect(events.filter((e) => e.startsWith('add gap')).sort()).toEqual(['add gap0', 'add gap1', 'add gap2', 'add gap3', 'add gap4', 'add gap5']);
    expect(informer.list().map((p) => p.metadata?.name).sort()).toEqual(['gap0', 'gap1', 'gap2', 'gap3', 'gap4', 'gap5', 'old']);
    await informer.stop();
  });
});
