/**
 * @kubernetes/client-node with custom resources, on SQLite and on a real etcd: the test CRD created
 * through ApiextensionsV1Api, its objects through CustomObjectsApi (create, get, list with a field
 * selector on a selectable field, merge patch, status, scale, delete), a watch that sees them, and the
 * CRD's deletion taking its objects along.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiException, ApiextensionsV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { serve, type Served } from '../../src/server.js';
import { startEtcd, type EtcdCluster } from '../../testing/src/etcd-cluster.js';
import { tempDir } from '../support/helpers.js';
import { widget, widgetCrd } from '../support/crd-fixtures.js';
import { until } from '../../testing/src/poll.js';

const group = 'example.com';
const version = 'v1';
const plural = 'widgets';
const namespace = 'default';
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** client-node's models name the schema extensions x_kubernetes_int_or_string (and default, enum as _default, _enum), serializing them back to their JSON names. */
const camelExtensions = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(camelExtensions);
  if (typeof v !== 'object' || v === null) return v;
  const name = (k: string) => (k.startsWith('x-kubernetes-') ? k.replace(/-/g, '_') : k === 'default' || k === 'enum' ? `_${k}` : k);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [name(k), camelExtensions(x)]));
};

describe.each(['sqlite', 'etcd'] as const)('client-node CustomObjectsApi on %s', (backend) => {
  let served: Served;
  let etcd: EtcdCluster | undefined;
  let kc: KubeConfig;
  let ext: ApiextensionsV1Api;
  let custom: CustomObjectsApi;

  beforeAll(async () => {
    const dir = tempDir();
    if (backend === 'etcd') etcd = await startEtcd({ members: 1, dataRoot: '/dev/shm' });
    served = await serve(resolveConfig({ port: 0, dataDir: join(dir, 'data'), storage: etcd ? etcd.url : `sqlite:${join(dir, 'state.db')}` }), () => {});
    kc = new KubeConfig();
    kc.loadFromString(readFileSync(served.kubeconfig!, 'utf8'));
    ext = kc.makeApiClient(ApiextensionsV1Api);
    custom = kc.makeApiClient(CustomObjectsApi);
  }, 60_000);
  afterAll(async () => {
    await served?.server.close();
    await etcd?.stop();
  });

  it('creates the CRD and waits until it is established', async () => {
    await ext.createCustomResourceDefinition({ body: camelExtensions(widgetCrd) as never });
    await until('the CRD established', async () => {
      const crd = await ext.readCustomResourceDefinition({ name: 'widgets.example.com' });
      return (crd.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');
    }, { timeoutMs: 10_000 });
  });

  it('round-trips custom objects: create, get, select, patch, status, scale, watch, delete', async () => {
    const seen: string[] = [];
    const watch = await new Watch(kc).watch(`/apis/${group}/${version}/namespaces/${namespace}/${plural}`, {}, (type, obj) => seen.push(`${type} ${obj.metadata.name}`), () => undefined);
    const created = (await custom.createNamespacedCustomObject({ group, version, namespace, plural, body: widget('cn', { color: 'green' }) })) as any;
    expect(created.spec).toEqual({ color: 'green', replicas: 1 });
    await custom.createNamespacedCustomObject({ group, version, namespace, plural, body: widget('other', { color: 'red' }) });
    const got = (await custom.getNamespacedCustomObject({ group, version, namespace, plural, name: 'cn' })) as any;
    expect(got.metadata.uid).toBe(created.metadata.uid);
    const green = (await custom.listNamespacedCustomObject({ group, version, namespace, plural, fieldSelector: 'spec.color=green' })) as any;
    expect(green.items.map((o: any) => o.metadata.name)).toEqual(['cn']);
    const patched = (await custom.patchNamespacedCustomObject({ group, version, namespace, plural, name: 'cn', body: { spec: { replicas: 2 } } }, merge)) as any;
    expect(patched.metadata.generation).toBe(2);
    const status = (await custom.patchNamespacedCustomObjectStatus({ group, version, namespace, plural, name: 'cn', body: { status: { phase: 'Up', replicas: 2 } } }, merge)) as any;
    expect(status.status).toEqual({ phase: 'Up', replicas: 2 });
    const scale = (await custom.getNamespacedCustomObjectScale({ group, version, namespace, plural, name: 'cn' })) as any;
    expect(scale).toMatchObject({ kind: 'Scale', spec: { replicas: 2 }, status: { replicas: 2 } });
    await custom.patchNamespacedCustomObjectScale({ group, version, namespace, plural, name: 'cn', body: { spec: { replicas: 7 } } }, merge);
    expect(((await custom.getNamespacedCustomObject({ group, version, namespace, plural, name: 'cn' })) as any).spec.replicas).toBe(7);
    await custom.deleteNamespacedCustomObject({ group, version, namespace, plural, name: 'other' });
    await until('DELETED other in the watch', async () => seen.includes('DELETED other'), { timeoutMs: 10_000 });
    expect(seen.slice(0, 2)).toEqual(['ADDED cn', 'ADDED other']);
    watch.abort();
  });

  it('answers schema errors with 422 and the causes', async () => {
    const err = await custom.createNamespacedCustomObject({ group, version, namespace, plural, body: widget('bad', { color: 'red', replicas: -1 }) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiException);
    const body = JSON.parse((err as ApiException<string>).body);
    expect((err as ApiException<string>).code).toBe(422);
    expect(body.details.causes).toEqual([{ reason: 'FieldValueInvalid', field: 'spec.replicas', message: 'Invalid value: -1: spec.replicas in body should be greater than or equal to 0' }]);
  });

  it('removes the objects with the CRD', async () => {
    await ext.deleteCustomResourceDefinition({ name: 'widgets.example.com' });
    await until('the CRD gone', async () => ext.readCustomResourceDefinition({ name: 'widgets.example.com' }).then(() => false, (e: ApiException<unknown>) => e.code === 404), { timeoutMs: 10_000 });
    const gone = await custom.listNamespacedCustomObject({ group, version, namespace, plural }).catch((e: ApiException<unknown>) => e.code);
    expect(gone).toBe(404);
  });
});
