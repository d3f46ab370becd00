/**
 * @kubernetes/client-node 1.x (promise methods with object parameters) against `serve()` over TLS,
 * configured only by the generated kubeconfig: create, read, list with selectors, replace and delete
 * for every core kind, through the typed CoreV1Api a user would call.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ApiException, CoreV1Api, KubeConfig, KubernetesObjectApi, PatchStrategy, Watch, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { serve, type Served } from '../../src/server.js';
import { tempDir } from '../support/helpers.js';

const podSpec = { containers: [{ name: 'app', image: 'nginx:1.25' }] };

/** One row per kind: the Kind as client-node names its methods, whether namespaced, and a valid body. */
const kinds: Array<[kind: string, namespaced: boolean, body: Record<string, unknown>]> = [
  ['Namespace', false, {}],
  ['ServiceAccount', true, {}],
  ['LimitRange', true, { spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] } }],
  ['ResourceQuota', true, { spec: { hard: { pods: '10' } } }],
  ['Secret', true, { data: { key: Buffer.from('value').toString('base64') } }],
  ['PersistentVolumeClaim', true, { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
  ['PersistentVolume', false, { spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/pv' } } }],
  ['Service', true, { spec: { selector: { app: 'x' }, ports: [{ port: 80 }] } }],
  ['PodTemplate', true, { template: { metadata: { labels: { app: 'x' } }, spec: podSpec } }],
  ['ReplicationController', true, { spec: { replicas: 1, selector: { app: 'x' }, template: { metadata: { labels: { app: 'x' } }, spec: podSpec } } }],
  ['Pod', true, { spec: podSpec }],
];

describe('@kubernetes/client-node against cluster-api serve (TLS, sqlite)', () => {
  let dir: string;
  let served: Served;
  let api: CoreV1Api;
  let kc: KubeConfig;
  const ns = 'client-node';

  beforeAll(async () => {
    dir = tempDir();
    // CRUD as a client sees it: no ReplicationController manager or quota controller writes status
    // between a read and a replace here, and no node runs (and rewrites) the pods these tests replace.
    served = await serve(resolveConfig({ port: 0, dataDir: join(dir, 'data'), controllers: '*,-replicationcontroller,-resourcequota', disableAgent: true, disableScheduler: true }), () => {});
    kc = new KubeConfig();
    kc.loadFromString(readFileSync(served.kubeconfig!, 'utf8'));
    api = kc.makeApiClient(CoreV1Api);
    await api.createNamespace({ body: { metadata: { name: ns } } });
  });
  afterAll(async () => {
    await served?.server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(kinds)('%s: create, read, list with selectors, replace, delete', async (kind, namespaced, extra) => {
    const call = (verb: string, params: Record<string, unknown>) => {
      const method = `${verb}${namespaced ? 'Namespaced' : ''}${kind}` as keyof CoreV1Api;
      return (api[method] as (p: unknown) => Promise<any>).call(api, namespaced ? { namespace: ns, ...params } : params);
    };
    const name = `cn-${kind.toLowerCase()}`;
    const body = { apiVersion: 'v1', kind, metadata: { name, labels: { suite: 'client-node', kind: kind.toLowerCase() } }, ...extra };
    const created = await call('create', { body });
    expect(created.metadata.name).toBe(name);
    expect(created.metadata.uid).toMatch(/\S/);
    expect(created.metadata.creationTimestamp).toBeInstanceOf(Date);

    const read = await call('read', { name });
    expect(read.metadata.resourceVersion).toBe(created.metadata.resourceVersion);

    const selected = await call('list', { labelSelector: `kind=${kind.toLowerCase()},suite in (client-node)` });
    expect(selected.items.map((o: any) => o.metadata.name)).toEqual([name]);
    expect((await call('list', { labelSelector: 'suite=nobody' })).items).toEqual([]);
    const byField = await call('list', { fieldSelector: `metadata.name=${name}` });
    expect(byField.items).toHaveLength(1);

    read.metadata.labels = { ...read.metadata.labels, replaced: 'yes' };
    const replaced = await call('replace', { name, body: read });
    expect(replaced.metadata.labels.replaced).toBe('yes');
    expect(Number(replaced.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));

    await call('delete', { name, gracePeriodSeconds: 0 });
    if (kind === 'Namespace') return; // a namespace is finalized asynchronously; its deletion lifecycle has its own tests
    // Finalizers (e.g. the orphan finalizer of ReplicationControllers) may keep the object a moment,
    // as in Kubernetes; the built-in controllers remove it, so wait for it to go.
    let gone: unknown;
    for (const started = Date.now(); !gone && Date.now() - started < 10_000; await new Promise((r) => setTimeout(r, 100)))
      gone = await call('read', { name }).then(() => undefined, (err: unknown) => err);
    expect(gone).toBeInstanceOf(ApiException);
    expect((gone as ApiException<string>).code).toBe(404);
    expect(JSON.parse((gone as ApiException<string>).body)).toMatchObject({ kind: 'Status', reason: 'NotFound' });
  });

  it('reads and lists ComponentStatus', async () => {
    const list = await api.listComponentStatus();
    expect(list.items.length).toBeGreaterThan(0);
    const first = list.items[0]!;
    expect((await api.readComponentStatus({ name: first.metadata!.name! })).metadata!.name).toBe(first.metadata!.name);
  });

  it('surfaces Kubernetes errors as ApiException with a Status body', async () => {
    const err = await api.createNamespace({ body: { metadata: { name: ns } } }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ApiException);
    expect((err as ApiException<string>).code).toBe(409);
    expect(JSON.parse((err as ApiException<string>).body)).toMatchObject({ reason: 'AlreadyExists', message: `namespaces "${ns}" already exists` });
  });

  it('applies server-side through KubernetesObjectApi: creates, merges, and reports a conflict as a 409 ApiException', async () => {
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const config = (selector: string, labels: Record<string, string>) => ({
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'applied', namespace: ns, labels }, spec: { selector: { app: selector }, ports: [{ port: 80 }] },
    });
    const created = await objects.patch<KubernetesObject>(config('a', { x: '1', y: '2' }), undefined, undefined, 'deployer', false, PatchStrategy.ServerSideApply);
    expect(created.metadata?.managedFields?.map((e) => [e.manager, e.operation])).toEqual([['deployer', 'Apply']]);
    const merged = await objects.patch(config('a', { x: '1' }), undefined, undefined, 'deployer', false, PatchStrategy.ServerSideApply);
    expect(merged.metadata?.labels).toEqual({ x: '1' });
    const err = await objects.patch(config('b', {}), undefined, undefined, 'other', false, PatchStrategy.ServerSideApply).then(() => undefined, (e: unknown) => e);
    expect((err as ApiException<string>).code).toBe(409);
    expect(JSON.parse((err as ApiException<string>).body)).toMatchObject({ reason: 'Conflict', details: { causes: [{ reason: 'FieldManagerConflict', field: '.spec.selector.app' }] } });
    const forced = await objects.patch(config('b', {}), undefined, undefined, 'other', true, PatchStrategy.ServerSideApply);
    expect((forced as { spec?: { selector?: unknown } }).spec?.selector).toEqual({ app: 'b' });
  });

  it('watches: sees ADDED for a new pod through the Watch helper', async () => {
    const events: string[] = [];
    const watch = new Watch(kc);
    const seen = new Promise<void>((resolve) => {
      void watch
        .watch(`/api/v1/namespaces/${ns}/pods`, { labelSelector: 'w=1' }, (type, obj) => {
          events.push(`${type} ${obj.metadata.name}`);
          if (type === 'ADDED') resolve();
        }, () => {})
        .then(async (req) => {
          await api.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'watched', labels: { w: '1' } }, spec: podSpec } });
          await seen;
          req.abort();
        });
    });
    await seen;
    expect(events).toEqual(['ADDED watched']);
  });
});
