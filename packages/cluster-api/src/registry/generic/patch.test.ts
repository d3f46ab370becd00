import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.js';
import { ApiError } from '../../api/errors.js';
import { groupKinds } from '../kinds/groups.js';
import { pod } from '../kinds/pod.js';
import { service } from '../kinds/service.js';
import { applyPatch, checkPatchShape, jsonPatch, mergePatch } from './patch.js';

const code = (fn: () => unknown): number => {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e.code;
    throw e;
  }
  return 0;
};

describe('JSON patch (RFC 6902)', () => {
  const doc = () => ({ a: { b: 1 }, list: [1, 2, 3] });
  it.each([
    [[{ op: 'add', path: '/a/c', value: 2 }], { a: { b: 1, c: 2 }, list: [1, 2, 3] }],
    [[{ op: 'add', path: '/list/-', value: 4 }], { a: { b: 1 }, list: [1, 2, 3, 4] }],
    [[{ op: 'add', path: '/list/0', value: 0 }], { a: { b: 1 }, list: [0, 1, 2, 3] }],
    [[{ op: 'remove', path: '/list/1' }], { a: { b: 1 }, list: [1, 3] }],
    [[{ op: 'replace', path: '/a/b', value: 'x' }], { a: { b: 'x' }, list: [1, 2, 3] }],
    [[{ op: 'move', from: '/a/b', path: '/moved' }], { a: {}, list: [1, 2, 3], moved: 1 }],
    [[{ op: 'copy', from: '/a', path: '/copy' }], { a: { b: 1 }, list: [1, 2, 3], copy: { b: 1 } }],
    [[{ op: 'test', path: '/list', value: [1, 2, 3] }], { a: { b: 1 }, list: [1, 2, 3] }],
    [[{ op: 'add', path: '/a~1b', value: true }], { a: { b: 1 }, list: [1, 2, 3], 'a/b': true }],
  ])('%j', (ops, expected) => {
    expect(jsonPatch(doc(), ops)).toEqual(expected);
  });

  it.each([
    [[{ op: 'test', path: '/a/b', value: 2 }], 422],
    [[{ op: 'remove', path: '/missing' }], 422],
    [[{ op: 'replace', path: '/missing', value: 1 }], 422],
    [[{ op: 'add', path: '/list/9', value: 1 }], 422],
    [[{ op: 'add', path: 'no-slash', value: 1 }], 400],
    [[{ op: 'frobnicate', path: '/a' }], 400],
    [['not an op'], 400],
  ])('%j fails with %i', (ops, status) => {
    expect(code(() => jsonPatch(doc(), ops))).toBe(status);
  });

  it('checks the body shape before anything is read', () => {
    expect(code(() => checkPatchShape('json', { op: 'add' }))).toBe(400);
    expect(code(() => checkPatchShape('merge', []))).toBe(400);
    expect(code(() => checkPatchShape('apply', []))).toBe(400);
    expect(code(() => checkPatchShape('apply', {}))).toBe(0);
  });
});

describe('merge patch (RFC 7386)', () => {
  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  ])('%j + %j', (target, patch, expected) => {
    expect(mergePatch(target, patch)).toEqual(expected);
  });
});

describe('strategic merge patch', () => {
  const base = (): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', finalizers: ['a'] },
    spec: {
      containers: [
        { name: 'app', image: 'app:1', env: [{ name: 'A', value: '1' }], ports: [{ containerPort: 80 }] },
        { name: 'side', image: 'side:1' },
      ],
      tolerations: [{ key: 'x' }],
    },
  });
  const spec = (o: KubeObject) => o.spec as { containers: Record<string, unknown>[]; tolerations: unknown[] };

  it('merges containers by name and env by name, appending new ones', () => {
    const out = applyPatch('strategic', base(), { spec: { containers: [{ name: 'app', image: 'app:2', env: [{ name: 'B', value: '2' }] }, { name: 'new', image: 'n' }] } }, pod);
    expect(spec(out).containers.map((c) => [c.name, c.image])).toEqual([['app', 'app:2'], ['side', 'side:1'], ['new', 'n']]);
    expect(spec(out).containers[0]!.env).toEqual([{ name: 'A', value: '1' }, { name: 'B', value: '2' }]);
  });

  it('honours $patch delete and replace, $retainKeys and $deleteFromPrimitiveList', () => {
    const deleted = applyPatch('strategic', base(), { spec: { containers: [{ name: 'side', $patch: 'delete' }] } }, pod);
    expect(spec(deleted).containers.map((c) => c.name)).toEqual(['app']);
    const replaced = applyPatch('strategic', base(), { spec: { containers: [{ name: 'only', image: 'o' }, { $patch: 'replace' }] } }, pod);
    expect(spec(replaced).containers).toEqual([{ name: 'only', image: 'o' }]);
    const mapReplaced = applyPatch('strategic', base(), { metadata: { $patch: 'replace', name: 'p' } }, pod);
    expect(mapReplaced.metadata).toEqual({ name: 'p' });
    const retained = applyPatch('strategic', base(), { spec: { $retainKeys: ['containers'], containers: [] } }, pod);
    expect(Object.keys(retained.spec as object)).toEqual(['containers']);
    const fin = applyPatch('strategic', base(), { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }, pod);
    expect(fin.metadata.finalizers).toEqual([]);
  });

  it('merges finalizers as a set, replaces tolerations, ignores $setElementOrder', () => {
    const out = applyPatch('strategic', base(), {
      metadata: { finalizers: ['a', 'b'] },
      spec: { tolerations: [{ key: 'y' }], '$setElementOrder/containers': [{ name: 'side' }, { name: 'app' }] },
    }, pod);
    expect(out.metadata.finalizers).toEqual(['a', 'b']);
    expect(spec(out).tolerations).toEqual([{ key: 'y' }]);
    expect(spec(out).containers).toHaveLength(2);
  });

  it('merges Service ports by port', () => {
    const svc: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 80, name: 'http' }, { port: 443, name: 'https' }] } };
    const out = applyPatch('strategic', svc, { spec: { ports: [{ port: 443, targetPort: 8443 }] } }, service);
    expect((out.spec as { ports: unknown[] }).ports).toEqual([{ port: 80, name: 'http' }, { port: 443, name: 'https', targetPort: 8443 }]);
  });

  it('replaces lists of schemaless kinds (no merge keys without a schema)', () => {
    const route = groupKinds.find((d) => d.plural === 'routes')!;
    const obj: KubeObject = { apiVersion: 'route.openshift.io/v1', kind: 'Route', metadata: { name: 'r' }, spec: { containers: [{ name: 'a' }] } };
    expect(applyPatch('strategic', obj, { spec: { containers: [{ name: 'b' }] } }, route).spec).toEqual({ containers: [{ name: 'b' }] });
  });

  it('rejects unknown directives and scalars where a merge key is expected', () => {
    expect(code(() => applyPatch('strategic', base(), { spec: { $patch: 'explode' } }, pod))).toBe(400);
    expect(code(() => applyPatch('strategic', base(), { spec: { containers: ['x'] } }, pod))).toBe(400);
  });
});
