/**
 * @kubernetes/client-node with the new kinds, over TLS with the generated kubeconfig of `serve()`, on
 * a real SQLite file and on a real etcd: informers (makeInformer: list, then watch) over ConfigMaps and
 * over Leases keep their caches in step with creates, updates and deletes; AppsV1Api reads a
 * Deployment another version created; CoordinationV1Api's typed Lease round trip, conflict included.
 */
import { AppsV1Api, CoordinationV1Api, CoreV1Api, KubeConfig, KubernetesObjectApi, makeInformer, type KubernetesObject, type V1ConfigMap, type V1Lease } from '@kubernetes/client-node';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { serve, type Served } from '../../src/server.js';
import { startEtcd, type EtcdCluster } from '../../testing/src/etcd-cluster.js';
import { tempDir } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

const namespace = 'inf';

describe.each(['sqlite', 'etcd'] as const)('client-node with the new kinds on %s', (backend) => {
  let etcd: EtcdCluster | undefined;
  let served: Served;
  let kc: KubeConfig;

  beforeAll(async () => {
    const dir = tempDir();
    if (backend === 'etcd') etcd = await startEtcd({ members: 1, dataRoot: '/dev/shm' });
    served = await serve(resolveConfig({ port: 0, dataDir: join(dir, 'data'), storage: etcd ? etcd.url : `sqlite:${join(dir, 'data', 'state.db')}` }), () => {});
    kc = new KubeConfig();
    kc.loadFromFile(served.kubeconfig!);
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  }, 60_000);
  afterAll(async () => {
    await served?.server.close();
    await etcd?.stop();
  });

  it('keeps a ConfigMap informer in step with creates, updates and deletes', async () => {
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'before' }, data: { a: '1' } } });
    const informer = makeInformer<V1ConfigMap>(kc, `/api/v1/namespaces/${namespace}/configmaps`, () => core.listNamespacedConfigMap({ namespace }));
    const events: string[] = [];
    informer.on('add', (o) => events.push(`add ${o.metadata?.name}`));
    informer.on('update', (o) => events.push(`update ${o.metadata?.name} ${o.data?.a}`));
    informer.on('delete', (o) => events.push(`delete ${o.metadata?.name}`));
    await informer.start();
    try {
      await until('the listed ConfigMap', () => events.includes('add before'), { timeoutMs: 10_000 });
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'later' }, data: { a: '1' } } });
      await core.patchNamespacedConfigMap({ namespace, name: 'later', body: [{ op: 'replace', path: '/data/a', value: '2' }] });
      await core.deleteNamespacedConfigMap({ namespace, name: 'before' });
      await until('four events', () => events.length >= 4, { timeoutMs: 10_000 });
      expect(events).toEqual(['add before', 'add later', 'update later 2', 'delete before']);
      expect(informer.list(namespace).map((c) => [c.metadata?.name, c.data])).toEqual([['later', { a: '2' }]]);
    } finally {
      await informer.stop();
    }
  });

  it('keeps a Lease informer in step with a holder renewing and handing over', async () => {
    const coordination = kc.makeApiClient(CoordinationV1Api);
    const informer = makeInformer<V1Lease>(kc, `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`, () => coordination.listNamespacedLease({ namespace }));
    const holders: string[] = [];
    informer.on('add', (l) => holders.push(`add ${l.spec?.holderIdentity}`));
    informer.on('update', (l) => holders.push(`update ${l.spec?.holderIdentity} ${l.spec?.leaseTransitions ?? 0}`));
    await informer.start();
    try {
      const now = () => new Date();
      const created = await coordination.createNamespacedLease({ namespace, body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: now(), renewTime: now() } } });
      // MicroTime as Kubernetes writes it: UTC, six fractional digits.
      expect(String(created.spec?.acquireTime)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      const renewed = await coordination.replaceNamespacedLease({ namespace, name: 'leader', body: { ...created, spec: { ...created.spec, renewTime: now() } } });
      const stale = await coordination.replaceNamespacedLease({ namespace, name: 'leader', body: { ...created, spec: { ...created.spec, holderIdentity: 'b' } } }).then(() => 0, (e: { code?: number }) => e.code);
      expect(stale).toBe(409);
      await coordination.replaceNamespacedLease({ namespace, name: 'leader', body: { ...renewed, spec: { ...renewed.spec, holderIdentity: 'b', leaseTransitions: 1, acquireTime: now() } } });
      await until('three Lease events', () => holders.length >= 3, { timeoutMs: 10_000 });
      expect(holders).toEqual(['add a', 'update a 0', 'update b 1']);
      expect(informer.get('leader', namespace)?.spec?.holderIdentity).toBe('b');
    } finally {
      await informer.stop();
    }
  });

  it('reads through AppsV1Api a Deployment created through extensions/v1beta1', async () => {
    const body = { apiVersion: 'extensions/v1beta1', kind: 'Deployment', metadata: { name: 'old', namespace }, spec: { template: { metadata: { labels: { app: 'old' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } };
    const made = await KubernetesObjectApi.makeApiClient(kc).create<KubernetesObject>(body);
    expect([made.apiVersion, made.metadata?.uid !== undefined]).toEqual(['extensions/v1beta1', true]);
    const read = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace, name: 'old' });
    expect([read.apiVersion, read.spec?.selector.matchLabels, read.spec?.revisionHistoryLimit]).toEqual(['apps/v1', { app: 'old' }, 2147483647]);
  });
});
