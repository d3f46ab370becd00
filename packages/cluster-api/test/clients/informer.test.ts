/**
 * @kubernetes/client-node's Watch and informer (makeInformer) against a real server: the informer
 * sees add, update and delete, and survives a forced 410 by listing again. The 410 is forced for
 * real: between the informer's list and its watch, more writes land than the watch cache keeps and
 * the storage history is compacted, so the watch's resourceVersion is gone.
 */
import { CoreV1Api, KubeConfig, makeInformer, Watch, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { AdminUser } from '../../src/auth/credentials.js';
import { createRegistry } from '../../src/registry/index.js';
import { startServer, type ClusterApiServer } from '../../src/server.js';
import { MemoryStorage } from '../../src/storage/memory/memory.js';
import { TestToken } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

let storage: MemoryStorage;
let server: ClusterApiServer;
let kc: KubeConfig;
let api: CoreV1Api;
const namespace = 'inf';
const podBody = (name: string, labels: Record<string, string> = {}): V1Pod => ({
  metadata: { name, labels },
  spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'nginx' }] },
});

beforeAll(async () => {
  storage = new MemoryStorage();
  // A tiny ring: a handful of writes pushes an informer's resourceVersion out of the cache.
  const registry = createRegistry(storage, { watchCache: { capacity: 4 } });
  server = await startServer({ storage, registry, authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])) });
  kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'local', server: server.url, skipTLSVerify: true }],
    users: [{ name: 'admin', token: TestToken }],
    contexts: [{ name: 'local', cluster: 'local', user: 'admin' }],
    currentContext: 'local',
  });
  api = kc.makeApiClient(CoreV1Api);
  await api.createNamespace({ body: { metadata: { name: namespace } } });
});
afterAll(() => server.close());

describe('client-node', () => {
  it('Watch streams ADDED, MODIFIED and DELETED for a label selector', async () => {
    const seen: string[] = [];
    const watch = new Watch(kc);
    const req = await watch.watch(`/api/v1/namespaces/${namespace}/pods`, { labelSelector: 'w=1' }, (type, obj) => seen.push(`${type} ${obj.metadata.name}`), () => undefined);
    await api.createNamespacedPod({ namespace, body: podBody('w1', { w: '1' }) });
    await api.createNamespacedPod({ namespace, body: podBody('other') });
    await api.patchNamespacedPod({ namespace, name: 'w1', body: [{ op: 'add', path: '/metadata/annotations', value: { a: 'b' } }] });
    await api.deleteNamespacedPod({ namespace, name: 'w1' });
    await until('three events', () => seen.length >= 3, { timeoutMs: 8_000 });
    req.abort();
    expect(seen).toEqual(['ADDED w1', 'MODIFIED w1', 'DELETED w1']);
  });

  it('an informer sees add, update and delete, and relists after a forced 410', async () => {
    let lists = 0;
    const listFn = async () => {
      const list = await api.listNamespacedPod({ namespace });
      if (lists++ === 0) {
        // After the list, before the watch: push its resourceVersion out of the cache and the history.
        for (let i = 0; i < 6; i++) await api.createNamespacedPod({ namespace, body: podBody(`gap${i}`) });
        await storage.compact(await storage.currentRevision());
      }
      return list;
    };
    const informer = makeInformer(kc, `/api/v1/namespaces/${namespace}/pods`, listFn);
    const added = new Set<string>();
    const updated: string[] = [];
    const deleted: string[] = [];
    informer.on('add', (p) => added.add(p.metadata!.name!));
    informer.on('update', (p) => updated.push(`${p.metadata!.name} ${p.metadata!.labels?.v ?? ''}`));
    informer.on('delete', (p) => deleted.push(p.metadata!.name!));
    await informer.start();
    await until('the relist after 410', () => lists === 2 && added.has('gap5'), { timeoutMs: 8_000 });
    expect([...added].filter((n) => n.startsWith('gap')).sort()).toEqual(['gap0', 'gap1', 'gap2', 'gap3', 'gap4', 'gap5']);
    await api.createNamespacedPod({ namespace, body: podBody('live') });
    await until('add', () => added.has('live'), { timeoutMs: 8_000 });
    await api.patchNamespacedPod({ namespace, name: 'live', body: [{ op: 'add', path: '/metadata/labels', value: { v: '2' } }] });
    await until('update', () => updated.includes('live 2'), { timeoutMs: 8_000 });
    await api.deleteNamespacedPod({ namespace, name: 'live' });
    await until('delete', () => deleted.includes('live'), { timeoutMs: 8_000 });
    expect(informer.get('gap0', namespace)?.metadata?.name).toBe('gap0');
    expect(informer.get('live', namespace)).toBeUndefined();
    expect(lists).toBe(2);
    await informer.stop();
  });
});
