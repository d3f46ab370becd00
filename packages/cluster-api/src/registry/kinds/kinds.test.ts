import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../storage/memory/memory.js';
import type { Registry, ResourceStore } from '../rest.js';
import { createRegistry } from '../index.js';
import { apiError } from '../testing/kind-tester.js';
import { allKinds, coreKinds } from './index.js';

/** The spec's "Groups with their versions" table. */
const SpecGroupVersions = [
  'apps.openshift.io/v1', 'apps/v1beta1', 'authentication.k8s.io/v1', 'authentication.k8s.io/v1beta1', 'authorization.k8s.io/v1',
  'authorization.k8s.io/v1beta1', 'authorization.openshift.io/v1', 'autoscaling/v1', 'batch/v1', 'batch/v2alpha1', 'build.openshift.io/v1',
  'certificates.k8s.io/v1beta1', 'extensions/v1beta1', 'image.openshift.io/v1', 'network.openshift.io/v1', 'networking.k8s.io/v1',
  'oauth.openshift.io/v1', 'policy/v1beta1', 'project.openshift.io/v1', 'quota.openshift.io/v1', 'rbac.authorization.k8s.io/v1beta1',
  'route.openshift.io/v1', 'security.openshift.io/v1', 'storage.k8s.io/v1', 'storage.k8s.io/v1beta1', 'template.openshift.io/v1', 'user.openshift.io/v1',
];
import { ExtraGroups, groupKinds } from './groups.js';

const ns = { namespace: 'default' };
let registry: Registry;
const store = (plural: string, group = '', version = 'v1'): ResourceStore => registry.find(group, version, plural)!;

beforeEach(async () => {
  registry = createRegistry(new MemoryStorage(), {
    componentStatuses: async () => [{ name: 'storage', healthy: true, message: 'ok' }, { name: 'etcd-0', healthy: false, error: 'down' }],
  });
  await store('namespaces').create({}, { metadata: { name: 'default' } });
});

describe('the kinds table', () => {
  it('serves the 13 kinds of the spec with their short names and verbs', () => {
    expect(coreKinds.map((d) => [d.plural, d.namespaced, d.shortNames?.join() ?? ''])).toEqual([
      ['namespaces', false, 'ns'], ['serviceaccounts', true, 'sa'], ['limitranges', true, 'limits'], ['resourcequotas', true, 'quota'],
      ['secrets', true, ''], ['persistentvolumeclaims', true, 'pvc'], ['persistentvolumes', false, 'pv'], ['services', true, 'svc'],
      ['securitycontextconstraints', false, 'scc'], ['podtemplates', true, ''], ['replicationcontrollers', true, 'rc'], ['pods', true, 'po'],
      ['componentstatuses', false, 'cs'],
    ]);
    const verbs = (p: string) => coreKinds.find((d) => d.plural === p)!.verbs;
    expect(verbs('namespaces')).not.toContain('deletecollection');
    expect(verbs('services')).not.toContain('deletecollection');
    expect(verbs('componentstatuses')).toEqual(['get', 'list']);
    expect(Object.keys(coreKinds.find((d) => d.kind === 'Namespace')!.subresources!)).toEqual(['status', 'finalize']);
  });

  it('lists at least one resource in every group version of the spec', () => {
    const versions = [...SpecGroupVersions];
    expect(new Set(versions).size).toBe(27);
    for (const gv of versions) expect(allKinds.some((d) => `${d.group}/${d.version}` === gv)).toBe(true);
    for (const g of ExtraGroups) for (const v of g.versions) expect(versions).toContain(`${g.group}/${v}`);
    expect(store('tokenreviews', 'authentication.k8s.io').definition.verbs).toEqual(['create']);
  });
});

describe('Secret', () => {
  it('merges stringData into data, defaults the type and selects by type', async () => {
    const s = (await store('secrets').create(ns, { metadata: { name: 's' }, data: { a: 'YQ==' }, stringData: { b: 'bee' } })).object;
    expect([s.type, s.data, s.stringData]).toEqual(['Opaque', { a: 'YQ==', b: 'YmVl' }, undefined]);
    expect((await store('secrets').list(ns, { fieldSelector: 'type=Opaque' })).items).toHaveLength(1);
    const typed = await apiError(store('secrets').update(ns, 's', { ...s, type: 'kubernetes.io/tls' }));
    expect(typed.details?.causes?.map((c) => c.field)).toContain('type');
  });

  it('limits the total data to 1 MiB', async () => {
    const big = Buffer.alloc(1024 * 1024 + 1).toString('base64');
    const err = await apiError(store('secrets').create(ns, { metadata: { name: 'big' }, data: { k: big } }));
    expect(err.details?.causes).toEqual([{ reason: 'FieldValueTooLong', field: 'data', message: 'Too long: must have at most 1048576 bytes' }]);
  });

  it('requires the keys of well-known types and keeps immutable secrets unchanged', async () => {
    const tls = await apiError(store('secrets').create(ns, { metadata: { name: 't' }, type: 'kubernetes.io/tls', data: {} }));
    expect(tls.details?.causes?.map((c) => c.field)).toEqual(['data[tls.crt]', 'data[tls.key]']);
    const frozen = (await store('secrets').create(ns, { metadata: { name: 'f' }, immutable: true, stringData: { a: '1' } })).object;
    const err = await apiError(store('secrets').patch(ns, 'f', 'merge', { stringData: { a: '2' } }));
    expect(err.code).toBe(422);
    expect(frozen.immutable).toBe(true);
  });
});

describe('Namespace', () => {
  it('is born Active with the kubernetes finalizer, changed only through /finalize', async () => {
    const created = (await store('namespaces').create({}, { metadata: { name: 'team' }, spec: { finalizers: [] } })).object;
    expect([created.spec, created.status]).toEqual([{ finalizers: ['kubernetes'] }, { phase: 'Active' }]);
    const ignored = (await store('namespaces').update({}, 'team', { ...created, spec: { finalizers: [] } })).object;
    expect(ignored.spec).toEqual({ finalizers: ['kubernetes'] });
    const finalized = (await store('namespaces').update({}, 'team', { ...created, spec: { finalizers: [] }, metadata: { name: 'team', labels: { x: 'y' } } }, 'finalize')).object;
    expect([finalized.spec, finalized.metadata.labels]).toEqual([{ finalizers: [] }, undefined]);
    expect((await apiError(store('namespaces').create({}, { metadata: { name: 'a.b' } }))).code).toBe(422);
  });
});

describe('ResourceQuota', () => {
  it('reports spec.hard in status.hard on create and on update', async () => {
    const quotas = store('resourcequotas');
    const q = (await quotas.create(ns, { metadata: { name: 'q' }, spec: { hard: { pods: '10' } } })).object;
    expect(q.status).toEqual({ hard: { pods: '10' }, used: {} });
    const raised = (await quotas.patch(ns, 'q', 'merge', { spec: { hard: { pods: '20' } } })).object;
    expect(raised.status).toEqual({ hard: { pods: '20' }, used: {} });
  });
});

describe('default ServiceAccount', () => {
  it('exists in every new namespace, but not after a dry run', async () => {
    await store('namespaces').create({}, { metadata: { name: 'team' } });
    expect((await store('serviceaccounts').get({ namespace: 'team' }, 'default')).metadata.namespace).toBe('team');
    await store('namespaces').create({ dryRun: true }, { metadata: { name: 'dry' } });
    expect((await store('serviceaccounts').list({ namespace: 'dry' }, {})).items).toEqual([]);
    expect(store('namespaces').definition.kind).toBe('Namespace');
  });
});

describe('ReplicationController, PVC, PV, Service names', () => {
  it('defaults replicas and selector from the template', async () => {
    const { object: rc } = await store('replicationcontrollers').create(ns, {
      metadata: { name: 'rc' },
      spec: { template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
    });
    expect(rc.spec).toMatchObject({ replicas: 1, selector: { app: 'a' } });
    expect(rc.metadata.generation).toBe(1);
    const scaled = (await store('replicationcontrollers').patch(ns, 'rc', 'merge', { spec: { replicas: 3 } })).object;
    expect(scaled.metadata.generation).toBe(2);
    const relabelled = (await store('replicationcontrollers').patch(ns, 'rc', 'merge', { metadata: { labels: { x: 'y' } } })).object;
    expect(relabelled.metadata.generation).toBe(2);
  });

  it('keeps a PVC spec immutable except for storage requests', async () => {
    const pvcs = store('persistentvolumeclaims');
    await pvcs.create(ns, { metadata: { name: 'c' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } });
    const grown = (await pvcs.patch(ns, 'c', 'merge', { spec: { resources: { requests: { storage: '2Gi' } } } })).object;
    expect(grown.status).toEqual({ phase: 'Pending' });
    const err = await apiError(pvcs.patch(ns, 'c', 'merge', { spec: { accessModes: ['ReadWriteMany'] } }));
    expect(err.details?.causes?.[0]?.message).toBe('Forbidden: spec is immutable after creation except resources.requests for bound claims');
  });

  it('validates Service names as DNS-1035 labels', async () => {
    const err = await apiError(store('services').create(ns, { metadata: { name: '1svc' }, spec: { ports: [{ port: 80 }] } }));
    expect(err.details?.causes?.[0]?.message).toMatch(/^Invalid value: "1svc": a DNS-1035 label must consist/);
  });
});

describe('ComponentStatus', () => {
  it('reports the provider, read-only', async () => {
    const cs = store('componentstatuses');
    const list = await cs.list({}, {});
    expect(list.items.map((o) => [o.metadata.name, o.conditions])).toEqual([
      ['storage', [{ type: 'Healthy', status: 'True', message: 'ok' }]],
      ['etcd-0', [{ type: 'Healthy', status: 'False', error: 'down' }]],
    ]);
    expect((await cs.get({}, 'etcd-0')).kind).toBe('ComponentStatus');
    expect((await apiError(cs.get({}, 'nope'))).message).toBe('componentstatuses "nope" not found');
    expect((await apiError(cs.create({}, {}))).code).toBe(405);
  });

  it('defaults to the storage health', async () => {
    const reg = createRegistry(new MemoryStorage());
    const list = await reg.find('', 'v1', 'componentstatuses')!.list({}, {});
    expect(list.items.map((o) => o.metadata.name)).toEqual(['storage']);
  });
});

describe('schemaless group kinds', () => {
  it('store anything beside validated metadata', async () => {
    const routes = store('routes', 'route.openshift.io');
    const r = (await routes.create(ns, { apiVersion: 'route.openshift.io/v1', kind: 'Route', metadata: { name: 'r' }, spec: { host: 'x', any: [1] } })).object;
    expect(r.spec).toEqual({ host: 'x', any: [1] });
    expect(r.metadata.selfLink).toBe('/apis/route.openshift.io/v1/namespaces/default/routes/r');
    const wrong = await apiError(routes.create(ns, { apiVersion: 'v1', kind: 'Route', metadata: { name: 'r2' } }));
    expect(wrong.message).toBe('the API version in the data (v1) does not match the expected API version (route.openshift.io/v1)');
  });
});

describe('unknown fields', () => {
  it('are dropped from typed kinds and from metadata, kept in schemaless kinds', async () => {
    const p = (await store('pods').create(ns, { metadata: { name: 'p', bogus: 1 }, spec: { containers: [{ name: 'c', image: 'i' }] }, extra: true })).object;
    expect(['extra' in p, 'bogus' in p.metadata]).toEqual([false, false]);
    const s = (await store('secrets').create(ns, { metadata: { name: 's' }, data: {}, spec: { no: 1 } })).object;
    expect('spec' in s).toBe(false);
    const { object: r } = await store('routes', 'route.openshift.io').create(ns, {
      apiVersion: 'route.openshift.io/v1', kind: 'Route', metadata: { name: 'r', bogus: 1 }, extra: true,
    });
    expect([r.extra, 'bogus' in r.metadata]).toEqual([true, false]);
  });
});
