/**
 * Hostile nesting. Bodies (JSON, YAML, protobuf) and patches (JSON, merge, strategic) nested past
 * MaxNestingDepth are a 400 before any recursive work, logged as nothing (a client's mistake), and the
 * server stays up; JSON patches are bounded in operations and in what copies add (413). Whatever was
 * accepted reads back in every format (the "poison object": a schemaless object nested ~1,500 levels
 * made every YAML read of it, and of its list, a 500), and so does an object stored too deep by other
 * means, answered as JSON where YAML cannot encode it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { AdminUser } from '../../src/auth/credentials.js';
import { encodeProtobuf, decodeProtobuf, ProtobufMediaType } from '../../src/protobuf/codec.js';
import type { ResourceDefinition } from '../../src/registry/definition.js';
import { MaxNestingDepth } from '../../src/registry/generic/depth.js';
import { createRegistry } from '../../src/registry/index.js';
import { startServer, type ClusterApiServer } from '../../src/server.js';
import { MemoryStorage } from '../../src/storage/memory/memory.js';
import { openWatch, pod, request, TestToken, type Reply } from '../support/helpers.js';

const gadget: ResourceDefinition = {
  group: 'example.com', version: 'v1', kind: 'Gadget', listKind: 'GadgetList', plural: 'gadgets', singular: 'gadget',
  namespaced: true, schemaless: true, verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'], strategy: {},
};
const GADGETS = '/apis/example.com/v1/namespaces/deep/gadgets';
const PODS = '/api/v1/namespaces/deep/pods';

/** `{"a":{"a":…{}}}` with `levels` objects in all (the value itself counts as one). */
const nested = (levels: number): Record<string, unknown> => {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) v = { a: v };
  return v;
};
const nestedText = (levels: number): string => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);

const storage = new MemoryStorage();
const logs: Record<string, unknown>[] = [];
let server: ClusterApiServer;
const call = (method: string, path: string, init: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> =>
  request(server.url, method, path, { ...init, token: TestToken });

beforeAll(async () => {
  const registry = createRegistry(storage);
  server = await startServer({ storage, registry, authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])), log: (e) => logs.push(e), controllers: false });
  registry.add(gadget);
  expect((await call('POST', '/api/v1/namespaces', { body: { metadata: { name: 'deep' } } })).status).toBe(201);
  expect((await call('POST', PODS, { body: pod('target') })).status).toBe(201);
  expect((await call('POST', GADGETS, { body: { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'target' } } })).status).toBe(201);
});
afterAll(() => server.close());

const refusedAsTooDeep = (r: Reply) => {
  expect([r.status, r.json?.reason], r.text.slice(0, 300)).toEqual([400, 'BadRequest']);
  expect(r.json.message).toContain(`exceeded max depth of ${MaxNestingDepth}`);
  expect(r.text).not.toMatch(/call stack|RangeError|at line/);
};

describe('bodies nested too deep are a 400 before any work, logged as nothing', () => {
  const deepPod = (levels: number) => `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"deep"},"spec":{"containers":[{"name":"c","image":"i"}],"x":${nestedText(levels)}}}`;

  it.each([
    ['a Pod nested 4,500 levels (30 KB, once a 500 "Maximum call stack size exceeded")', PODS, deepPod(4_500), 'application/json'],
    ['a Pod nested 100,000 levels', PODS, deepPod(100_000), 'application/json'],
    ['a Pod one level past the bound', PODS, deepPod(MaxNestingDepth - 1), 'application/json'],
    ['a schemaless object nested 1,500 levels', GADGETS, `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"x":${nestedText(1_500)}}`, 'application/json'],
    ['YAML of compact sequences, 280 levels (within the text bound: parsed, then refused)', GADGETS, `apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\nx:\n${Array.from({ length: 140 }, (_, i) => `${'  '.repeat(i)}- a:`).join('\n')} 1\n`, 'application/yaml'],
    ['YAML in flow style, 100,000 levels', GADGETS, `apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\nx: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`, 'application/yaml'],
    ['YAML in block style, 2,000 levels', GADGETS, `apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\nx:\n${Array.from({ length: 2_000 }, (_, i) => `${' '.repeat(i + 1)}a:`).join('\n')} 1\n`, 'application/yaml'],
    ['YAML of nested sequences on one line', GADGETS, `apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\nx:\n${'- '.repeat(3_000)}1\n`, 'application/yaml'],
    ['YAML whose alias contains itself', GADGETS, 'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\nx: &loop [1, *loop]\n', 'application/yaml'],
  ])('%s', async (_, path, body, type) => {
    logs.length = 0;
    refusedAsTooDeep(await call('POST', path, { body, headers: { 'content-type': type } }));
    expect(logs).toEqual([]);
  });

  it('a protobuf Pod whose managedFields hold JSON nested 2,000 levels', async () => {
    const body = encodeProtobuf({
      ...pod('deep'),
      metadata: { name: 'deep', managedFields: [{ manager: 'm', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: nested(2_000) }] },
    });
    logs.length = 0;
    refusedAsTooDeep(await call('POST', PODS, { body, headers: { 'content-type': ProtobufMediaType } }));
    expect(logs).toEqual([]);
  });

  it.each([
    ['merge', 'application/merge-patch+json', `{"metadata":{"labels":{"a":"b"}},"spec":${nestedText(100_000)}}`],
    ['strategic merge', 'application/strategic-merge-patch+json', `{"spec":${nestedText(100_000)}}`],
    ['JSON', 'application/json-patch+json', `[{"op":"add","path":"/spec/x","value":${nestedText(100_000)}}]`],
    ['apply', 'application/apply-patch+yaml', `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"target"},"spec":${nestedText(100_000)}}`],
  ])('a %s patch nested 100,000 levels', async (_, type, body) => {
    logs.length = 0;
    refusedAsTooDeep(await call('PATCH', `${PODS}/target?fieldManager=m`, { body, headers: { 'content-type': type } }));
    expect(logs).toEqual([]);
  });

  it('a JSON patch that nests what it adds under a deep path, or copies a subtree into itself until too deep', async () => {
    const path = `/x${'/a'.repeat(MaxNestingDepth - 10)}`;
    const add = [{ op: 'add', path: '/x', value: nested(MaxNestingDepth - 10) }, { op: 'add', path, value: nested(20) }];
    refusedAsTooDeep(await call('PATCH', `${GADGETS}/target`, { body: add, headers: { 'content-type': 'application/json-patch+json' } }));
    const copies = [{ op: 'add', path: '/x', value: { a: 1 } }, ...Array.from({ length: 300 }, () => ({ op: 'copy', from: '/x', path: '/x/a' }))];
    refusedAsTooDeep(await call('PATCH', `${GADGETS}/target`, { body: copies, headers: { 'content-type': 'application/json-patch+json' } }));
  });

  it('a JSON patch of more than 10,000 operations, or whose copies add more than 3 MiB, is a 413', async () => {
    const many = Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/kind', value: 'Gadget' }));
    const r = await call('PATCH', `${GADGETS}/target`, { body: many, headers: { 'content-type': 'application/json-patch+json' } });
    expect([r.status, r.json.reason, r.json.message]).toEqual([413, 'RequestEntityTooLarge', 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001']);
    const doubling = [{ op: 'add', path: '/x', value: { s: 'y'.repeat(1000) } }, ...Array.from({ length: 40 }, (_, i) => ({ op: 'copy', from: '/x', path: `/x/c${i}` }))];
    const big = await call('PATCH', `${GADGETS}/target`, { body: doubling, headers: { 'content-type': 'application/json-patch+json' } });
    expect([big.status, big.json.reason]).toEqual([413, 'RequestEntityTooLarge']);
    expect(big.json.message).toMatch(/^Request entity too large: Unable to complete the copy, the accumulated size increase of copy is \d+, exceeding the limit 3145728$/);
  });

  it('the server is up and the objects unchanged', async () => {
    const target = (await call('GET', `${PODS}/target`)).json;
    expect([target.spec.containers[0].image, target.spec.x]).toEqual(['nginx:1.25', undefined]);
    expect((await call('GET', `${GADGETS}/target`)).json).not.toHaveProperty('x');
  });
});

describe('nothing accepted makes a later read fail, in any format', () => {
  const formats: [string, string, Record<string, string>][] = [
    ['JSON', '', {}],
    ['pretty JSON', '?pretty=true', {}],
    ['YAML', '', { accept: 'application/yaml' }],
    ['a Table', '', { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' }],
    ['metadata only', '', { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' }],
  ];

  it('a schemaless object nested to the bound is stored and reads back as JSON, pretty JSON, YAML, Table and metadata', async () => {
    const body = { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'edge' }, x: nested(MaxNestingDepth - 1) };
    const made = await call('POST', GADGETS, { body });
    expect(made.status, made.text.slice(0, 200)).toBe(201);
    for (const [what, query, headers] of formats) {
      const r = await call('GET', `${GADGETS}/edge${query}`, { headers });
      expect([what, r.status]).toEqual([what, 200]);
    }
    for (const [what, query, headers] of formats.filter(([w]) => w !== 'metadata only')) {
      const r = await call('GET', `${GADGETS}${query}`, { headers });
      expect([what, r.status]).toEqual([what, 200]);
    }
    const patched = await call('PATCH', `${GADGETS}/edge`, { body: { metadata: { labels: { p: 'q' } } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(patched.status).toBe(200);
    const w = await openWatch(server, `${GADGETS}?watch=1&resourceVersion=0&timeoutSeconds=5`);
    const seen = [await w.next(), await w.next()].map((e) => e.object.metadata.name).sort();
    expect(seen).toEqual(['edge', 'target']);
    w.close();
  });

  it('a Pod with deep managedFields JSON at the bound reads back in protobuf', async () => {
    const managed = { ...pod('fields'), metadata: { name: 'fields', managedFields: [{ manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: nested(MaxNestingDepth - 4) }] } };
    const made = await call('POST', PODS, { body: managed });
    expect(made.status, made.text.slice(0, 200)).toBe(201);
    const res = await fetch(`${server.url}${PODS}/fields`, { headers: { authorization: `Bearer ${TestToken}`, accept: ProtobufMediaType } });
    expect(res.status).toBe(200);
    expect(decodeProtobuf(Buffer.from(await res.arrayBuffer()))).toMatchObject({ kind: 'Pod', metadata: { name: 'fields' } });
  });

  it('an object stored deeper than YAML can encode (written before the bound) reads back as JSON text under application/yaml', async () => {
    const stored = { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'legacy', namespace: 'deep', uid: 'u1', creationTimestamp: '2024-01-01T00:00:00Z' }, x: nested(1_500) };
    await storage.create('/registry/gadgets.example.com/deep/legacy', Buffer.from(JSON.stringify(stored)));
    for (const path of [`${GADGETS}/legacy`, GADGETS]) {
      const yaml = await call('GET', path, { headers: { accept: 'application/yaml' } });
      expect([yaml.status, yaml.headers.get('content-type')]).toEqual([200, 'application/yaml']);
      expect(yaml.json).toMatchObject(path === GADGETS ? { kind: 'GadgetList' } : { metadata: { name: 'legacy' } });
      expect((await call('GET', path)).status).toBe(200);
    }
    expect(logs.filter((l) => l.level === 'error')).toEqual([]);
  });
});
