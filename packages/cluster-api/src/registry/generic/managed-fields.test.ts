import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.js';
import { ApiError } from '../../api/errors.js';
import { groupKinds } from '../kinds/groups.js';
import { pod } from '../kinds/pod.js';
import { service } from '../kinds/service.js';
import { applyConfiguration, entriesOf, fieldsOf, fromTree, pathString, recordUpdate, toTree } from './managed-fields.js';

const svc = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): KubeObject =>
  ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'ns', ...metadata }, spec }) as KubeObject;

const paths = (fields: Set<string>): string[] => [...fields].map(pathString).sort();

const failure = (fn: () => unknown): ApiError => {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected an ApiError');
};

describe('the fields a configuration sets', () => {
  it('lists leaves, keyed list items and set members, never server-owned metadata or status', () => {
    const obj = {
      ...svc({ selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }], externalIPs: ['1.2.3.4'] }, {
        uid: 'u', resourceVersion: '5', labels: { app: 'web' }, finalizers: ['a.io/x'], annotations: {},
      }),
      status: { loadBalancer: {} },
    } as KubeObject;
    expect(paths(fieldsOf(service, obj))).toEqual([
      '.metadata.annotations',
      '.metadata.finalizers[="a.io/x"]',
      '.metadata.labels.app',
      '.spec.externalIPs',
      '.spec.ports[port=80]',
      '.spec.ports[port=80].port',
      '.spec.ports[port=80].targetPort',
      '.spec.selector.app',
    ]);
    expect(paths(fieldsOf(service, obj, 'status'))).toEqual(['.status.loadBalancer']);
  });

  it('treats every list of a schemaless kind as one value, metadata excepted', () => {
    const deployments = groupKinds.find((d) => d.kind === 'DeploymentConfig' && d.schemaless)!;
    const obj = { apiVersion: String(deployments.group) + '/' + deployments.version, kind: 'DeploymentConfig', metadata: { name: 'd', finalizers: ['x'] },
      spec: { template: { spec: { containers: [{ name: 'a', image: 'i' }] } } } } as KubeObject;
    expect(paths(fieldsOf(deployments, obj))).toEqual(['.metadata.finalizers[="x"]', '.spec.template.spec.containers']);
  });

  it('round-trips through FieldsV1, marking members that have children with "."', () => {
    const fields = fieldsOf(pod, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' },
      spec: { containers: [{ name: 'app', image: 'i', env: [{ name: 'A', value: '1' }] }] } } as KubeObject);
    const tree = toTree(fields);
    expect(tree).toEqual({
      'f:spec': { 'f:containers': { 'k:{"name":"app"}': {
        '.': {}, 'f:name': {}, 'f:image': {}, 'f:env': { 'k:{"name":"A"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
      } } },
    });
    expect(fromTree(tree)).toEqual(fields);
    expect(fromTree(JSON.parse(JSON.stringify(tree)))).toEqual(fields);
  });
});

describe('applying a configuration', () => {
  const first = applyConfiguration(service, undefined, svc({ selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }, { port: 443 }] }, { labels: { a: '1', b: '2' } }), { manager: 'alice', force: false });

  it('creates the object with one Apply entry for its manager', () => {
    expect(first.spec).toEqual({ selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }, { port: 443 }] });
    expect(entriesOf(first).map((e) => [e.manager, e.operation, e.apiVersion])).toEqual([['alice', 'Apply', 'v1']]);
    expect(entriesOf(first)[0]!.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('removes what the manager applied before and omits now, keeps what nobody applied', () => {
    const live = { ...first, spec: { ...(first.spec as object), sessionAffinity: 'None' } } as KubeObject;
    const next = applyConfiguration(service, live, svc({ selector: { app: 'web' }, ports: [{ port: 80 }] }, { labels: { a: '1' } }), { manager: 'alice', force: false });
    expect(next.spec).toEqual({ selector: { app: 'web' }, ports: [{ port: 80 }], sessionAffinity: 'None' });
    expect(next.metadata.labels).toEqual({ a: '1' });
    const dropped = applyConfiguration(service, next, svc({ selector: { app: 'web' }, ports: [{ port: 80 }] }), { manager: 'alice', force: false });
    expect('labels' in dropped.metadata).toBe(false);
  });

  it('refuses to change another manager\'s field with a conflict per field, and shares fields applied with the same value', () => {
    const err = failure(() =>
      applyConfiguration(service, first, svc({ selector: { app: 'api' }, ports: [{ port: 80, targetPort: 9090 }] }), { manager: 'bob', force: false }));
    expect([err.code, err.reason]).toEqual([409, 'Conflict']);
    expect(err.message).toBe('Apply failed with 2 conflicts: conflicts with "alice":\n- .spec.ports[port=80].targetPort\n- .spec.selector.app');
    expect(err.details?.causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.ports[port=80].targetPort' },
      { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.selector.app' },
    ]);
    const shared = applyConfiguration(service, first, svc({ selector: { app: 'web' } }), { manager: 'bob', force: false });
    const owners = entriesOf(shared).filter((e) => fromTree(e.fieldsV1).has(['f:spec', 'f:selector', 'f:app'].join('\u0000')));
    expect(owners.map((e) => e.manager)).toEqual(['alice', 'bob']);
  });

  it('takes conflicting fields over when forced, so the former owner no longer removes them', () => {
    const taken = applyConfiguration(service, first, svc({ ports: [{ port: 80, targetPort: 9090 }] }), { manager: 'bob', force: true });
    expect((taken.spec as { ports: unknown[] }).ports[0]).toEqual({ port: 80, targetPort: 9090 });
    const alice = entriesOf(taken).find((e) => e.manager === 'alice')!;
    expect(paths(fromTree(alice.fieldsV1))).not.toContain('.spec.ports[port=80].targetPort');
    // Alice stops applying port 80 altogether: the item stays, because Bob owns a field in it.
    const after = applyConfiguration(service, taken, svc({ selector: { app: 'web' }, ports: [{ port: 443 }] }, { labels: { a: '1', b: '2' } }), { manager: 'alice', force: false });
    expect((after.spec as { ports: unknown[] }).ports).toEqual([{ port: 80, targetPort: 9090 }, { port: 443 }]);
  });

  it('names the Update owner the way Kubernetes prints it', () => {
    const live = { ...first, metadata: { ...first.metadata, managedFields: [
      { manager: 'kubectl-edit', operation: 'Update', apiVersion: 'v1', time: '2026-01-02T03:04:05Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:selector': { 'f:app': {} } } } },
    ] } } as KubeObject;
    const err = failure(() => applyConfiguration(service, live, svc({ selector: { app: 'x' } }), { manager: 'bob', force: false }));
    expect(err.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-edit" using v1 at 2026-01-02T03:04:05Z: .spec.selector.app');
  });

  it('refuses a configuration that carries managedFields', () => {
    const err = failure(() => applyConfiguration(service, first, svc({}, { managedFields: [] }), { manager: 'bob', force: false }));
    expect([err.code, err.message]).toEqual([400, 'metadata.managedFields must be nil']);
  });
});

describe('recording other writes', () => {
  const applied = applyConfiguration(service, undefined, svc({ selector: { app: 'web' } }, { labels: { a: '1' } }), { manager: 'alice', force: false });

  it('moves the fields a write changes to its manager\'s Update entry', () => {
    const next = structuredClone(applied);
    delete next.metadata.managedFields;
    (next.spec as Record<string, unknown>).selector = { app: 'api' };
    next.metadata.labels = { a: '1', b: '2' };
    recordUpdate(service, applied, next, 'kubectl-edit');
    const [alice, edit] = entriesOf(next);
    expect(paths(fromTree(alice!.fieldsV1))).toEqual(['.metadata.labels.a']);
    expect([edit!.manager, edit!.operation]).toEqual(['kubectl-edit', 'Update']);
    expect(paths(fromTree(edit!.fieldsV1))).toEqual(['.metadata.labels.b', '.spec.selector.app']);
  });

  it('leaves objects without managed fields alone, clears them on an empty list, keeps what a client sets', () => {
    const plain = svc({ selector: { app: 'web' } });
    const next = svc({ selector: { app: 'api' } });
    recordUpdate(service, plain, next, 'x');
    expect(next.metadata.managedFields).toBeUndefined();
    const cleared = { ...applied, metadata: { ...applied.metadata, managedFields: [] } } as KubeObject;
    recordUpdate(service, applied, cleared, 'x');
    expect(cleared.metadata.managedFields).toBeUndefined();
    const own = [{ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {} }];
    const given = { ...applied, spec: { selector: { app: 'z' } }, metadata: { ...applied.metadata, managedFields: own } } as KubeObject;
    recordUpdate(service, applied, given, 'x');
    expect(given.metadata.managedFields).toEqual(own);
  });
});
