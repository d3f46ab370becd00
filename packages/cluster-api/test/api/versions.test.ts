/**
 * One object set served at several group versions: a kind stored as example.com/v1, served also at
 * example.com/v1beta1 (same fields: the default, identity conversion) and at legacy.example.com/v1alpha1
 * (a field renamed, converted both ways). Whatever version writes, every version reads, lists (the
 * spliced fast path and the decoded one), watches, patches, applies, selects by field, prints as a
 * Table and deletes the same objects; the stored bytes carry the storage version only.
 */
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/meta.js';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { AdminUser } from '../../src/auth/credentials.js';
import type { ResourceDefinition } from '../../src/registry/definition.js';
import { createRegistry, servedAt } from '../../src/registry/index.js';
import { startServer, type ClusterApiServer } from '../../src/server.js';
import type { Storage } from '../../src/storage/interface.js';
import { MemoryStorage } from '../../src/storage/memory/memory.js';
import { SqliteStorage } from '../../src/storage/sqlite/sqlite.js';
import { Backends, namespace, openWatch, pod, request, tempDir, TestToken } from '../support/helpers.js';

type Obj = Record<string, any>;
const specOf = (o: KubeObject): Obj => (o.spec ?? {}) as Obj;

/** The storage version: spec.color, selectable by field. */
const gadget: ResourceDefinition = {
  group: 'example.com', version: 'v1', kind: 'Gadget', listKind: 'GadgetList', plural: 'gadgets', singular: 'gadget',
  namespaced: true, verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  strategy: { fieldsOf: (o) => ({ 'spec.color': String(specOf(o).color ?? '') }) },
  columns: [{ name: 'Color', type: 'string', cell: (o) => specOf(o).color }],
};

/** The same objects, same fields. */
const gadgetV1beta1 = servedAt(gadget, { group: 'example.com', version: 'v1beta1' });

/** The same objects in another group, where the field is spelt `colour`. */
const rename = (from: string, to: string) => (o: KubeObject) => {
  const spec = specOf(o);
  if (from in spec) (spec[to] = spec[from]), delete spec[from];
};
const gadgetLegacy = servedAt(gadget, { group: 'legacy.example.com', version: 'v1alpha1' }, {
  conversion: { toStorage: rename('colour', 'color'), fromStorage: rename('color', 'colour') },
  strategy: { fieldsOf: (o) => ({ 'spec.colour': String(specOf(o).colour ?? '') }) },
  columns: [{ name: 'Colour', type: 'string', cell: (o) => specOf(o).colour }],
});

const paths = {
  v1: '/apis/example.com/v1/namespaces/shop/gadgets',
  v1beta1: '/apis/example.com/v1beta1/namespaces/shop/gadgets',
  legacy: '/apis/legacy.example.com/v1alpha1/namespaces/shop/gadgets',
};
const body = (apiVersion: string, name: string, spec: Obj) => ({ apiVersion, kind: 'Gadget', metadata: { name }, spec });

describe.each(Backends)('one object set at three group versions (%s)', (backend) => {
  let server: ClusterApiServer;
  let storage: Storage;
  const dir = tempDir();
  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    request(server.url, method, path, { body, headers, token: TestToken });
  const patch = (path: string, type: string, body: unknown, query = '') =>
    call('PATCH', `${path}${query}`, typeof body === 'string' ? body : JSON.stringify(body), { 'content-type': type });

  beforeAll(async () => {
    storage = backend === 'memory' ? new MemoryStorage() : SqliteStorage.open(join(dir, 'state.db'));
    const registry = createRegistry(storage, { extraDefinitions: [gadget, gadgetV1beta1, gadgetLegacy] });
    server = await startServer({ storage, registry, authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])), controllers: true });
    expect((await call('POST', '/api/v1/namespaces', namespace('shop'))).status).toBe(201);
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores what any version creates once, in the storage version, and every version reads it', async () => {
    const made = await call('POST', paths.legacy, body('legacy.example.com/v1alpha1', 'g1', { colour: 'red' }));
    expect([made.status, made.json.apiVersion, made.json.spec]).toEqual([201, 'legacy.example.com/v1alpha1', { colour: 'red' }]);
    const stored = await storage.get('/registry/gadgets.example.com/shop/g1');
    expect(JSON.parse(Buffer.from(stored!.value).toString())).toMatchObject({ apiVersion: 'example.com/v1', kind: 'Gadget', spec: { color: 'red' } });
    const v1 = await call('GET', `${paths.v1}/g1`);
    const beta = await call('GET', `${paths.v1beta1}/g1?pretty=true`);
    expect([v1.json.apiVersion, v1.json.spec, beta.json.apiVersion, beta.json.spec]).toEqual(['example.com/v1', { color: 'red' }, 'example.com/v1beta1', { color: 'red' }]);
    expect(new Set([made.json.metadata.uid, v1.json.metadata.uid, beta.json.metadata.uid]).size).toBe(1);
    expect(new Set([made.json.metadata.resourceVersion, v1.json.metadata.resourceVersion, beta.json.metadata.resourceVersion]).size).toBe(1);
    expect((await call('POST', paths.v1, body('example.com/v1', 'g1', {}))).json.reason).toBe('AlreadyExists');
    expect((await call('POST', paths.v1beta1, body('example.com/v1', 'g9', {}))).status).toBe(400);
  });

  it('lists the same objects through each version, spliced and decoded alike', async () => {
    expect((await call('POST', paths.v1beta1, body('example.com/v1beta1', 'g2', { color: 'blue' }))).status).toBe(201);
    for (const [path, apiVersion, field] of [[paths.v1, 'example.com/v1', 'color'], [paths.v1beta1, 'example.com/v1beta1', 'color'], [paths.legacy, 'legacy.example.com/v1alpha1', 'colour']] as const) {
      for (const query of ['', '?pretty=true', '?limit=1']) {
        const list = await call('GET', path + query);
        expect(list.json.apiVersion).toBe(apiVersion);
        expect(list.json.items.map((i: Obj) => [i.apiVersion, i.metadata.name, i.spec[field]])).toEqual(
          [[apiVersion, 'g1', 'red'], [apiVersion, 'g2', 'blue']].slice(0, query === '?limit=1' ? 1 : 2));
      }
    }
    const yaml = await call('GET', `${paths.legacy}/g2`, undefined, { accept: 'application/yaml' });
    expect(yaml.text).toContain('apiVersion: legacy.example.com/v1alpha1');
    expect(yaml.text).toContain('colour: blue');
  });

  it('selects by field and prints Tables in each version\'s own terms', async () => {
    const names = async (path: string) => (await call('GET', path)).json.items.map((i: Obj) => i.metadata.name);
    expect(await names(`${paths.v1}?fieldSelector=spec.color%3Dred`)).toEqual(['g1']);
    expect(await names(`${paths.legacy}?fieldSelector=spec.colour%3Dblue`)).toEqual(['g2']);
    expect((await call('GET', `${paths.legacy}?fieldSelector=spec.color%3Dblue`)).status).toBe(400);
    const table = await call('GET', paths.legacy, undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    expect(table.json.columnDefinitions.map((c: Obj) => c.name)).toEqual(['Name', 'Colour', 'Age']);
    expect(table.json.rows.map((r: Obj) => r.cells.slice(0, 2))).toEqual([['g1', 'red'], ['g2', 'blue']]);
  });

  it('patches, replaces and applies through one version what another wrote', async () => {
    const merged = await patch(`${paths.legacy}/g2`, 'application/merge-patch+json', { spec: { colour: 'green' } });
    expect([merged.status, merged.json.spec]).toEqual([200, { colour: 'green' }]);
    expect((await call('GET', `${paths.v1}/g2`)).json.spec).toEqual({ color: 'green' });
    const json = await patch(`${paths.v1beta1}/g2`, 'application/json-patch+json', [{ op: 'replace', path: '/spec/color', value: 'black' }]);
    expect([json.status, json.json.apiVersion, json.json.spec]).toEqual([200, 'example.com/v1beta1', { color: 'black' }]);
    const strategic = await patch(`${paths.legacy}/g2`, 'application/strategic-merge-patch+json', { spec: { colour: 'white' } });
    expect([strategic.status, strategic.json.spec]).toEqual([200, { colour: 'white' }]);
    const current = (await call('GET', `${paths.v1}/g2`)).json;
    const put = await call('PUT', `${paths.legacy}/g2`, { ...body('legacy.example.com/v1alpha1', 'g2', { colour: 'grey' }), metadata: { name: 'g2', resourceVersion: current.metadata.resourceVersion } });
    expect([put.status, put.json.spec, put.json.metadata.generation]).toEqual([200, { colour: 'grey' }, current.metadata.generation + 1]);
    const stale = await call('PUT', `${paths.v1}/g2`, { ...body('example.com/v1', 'g2', { color: 'pink' }), metadata: { name: 'g2', resourceVersion: current.metadata.resourceVersion } });
    expect([stale.status, stale.json.reason]).toEqual([409, 'Conflict']);
    const same = await patch(`${paths.v1}/g2`, 'application/merge-patch+json', { spec: { color: 'grey' } });
    expect(same.json.metadata.resourceVersion).toBe(put.json.metadata.resourceVersion);
    const applied = await patch(`${paths.legacy}/g3`, 'application/apply-patch+yaml', body('legacy.example.com/v1alpha1', 'g3', { colour: 'teal' }), '?fieldManager=tester');
    expect([applied.status, applied.json.spec, applied.json.metadata.managedFields[0].apiVersion]).toEqual([201, { colour: 'teal' }, 'legacy.example.com/v1alpha1']);
    const reapplied = await patch(`${paths.v1}/g3`, 'application/apply-patch+yaml', body('example.com/v1', 'g3', { color: 'navy' }), '?fieldManager=tester');
    expect([reapplied.status, reapplied.json.spec]).toEqual([200, { color: 'navy' }]);
    expect((await call('GET', `${paths.legacy}/g3`)).json.spec).toEqual({ colour: 'navy' });
  });

  it('watches the same changes in every version at once', async () => {
    const rv = (await call('GET', paths.v1)).json.metadata.resourceVersion;
    const legacy = await openWatch(server, `${paths.legacy}?watch=true&resourceVersion=${rv}`);
    const v1 = await openWatch(server, `${paths.v1}?watch=true&resourceVersion=${rv}`);
    const fromStart = await openWatch(server, `${paths.v1beta1}?watch=true&fieldSelector=metadata.name%3Dg4`);
    try {
      await call('POST', paths.v1, body('example.com/v1', 'g4', { color: 'gold' }));
      await patch(`${paths.v1beta1}/g4`, 'application/merge-patch+json', { spec: { color: 'silver' } });
      await call('DELETE', `${paths.legacy}/g4`);
      const seen = async (w: Awaited<ReturnType<typeof openWatch>>) => {
        const events: string[] = [];
        for (let i = 0; i < 3; i++) {
          const e = await w.next();
          events.push(`${e.type} ${e.object.apiVersion} ${JSON.stringify(e.object.spec)}`);
        }
        return events;
      };
      expect(await seen(legacy)).toEqual([
        'ADDED legacy.example.com/v1alpha1 {"colour":"gold"}',
        'MODIFIED legacy.example.com/v1alpha1 {"colour":"silver"}',
        'DELETED legacy.example.com/v1alpha1 {"colour":"silver"}',
      ]);
      expect(await seen(v1)).toEqual(['ADDED example.com/v1 {"color":"gold"}', 'MODIFIED example.com/v1 {"color":"silver"}', 'DELETED example.com/v1 {"color":"silver"}']);
      expect(await seen(fromStart)).toEqual([
        'ADDED example.com/v1beta1 {"color":"gold"}', 'MODIFIED example.com/v1beta1 {"color":"silver"}', 'DELETED example.com/v1beta1 {"color":"silver"}']);
    } finally {
      [legacy, v1, fromStart].forEach((w) => w.close());
    }
  });

  it('reads bytes an earlier storage version wrote, converted to the version asked', async () => {
    const legacyBytes = { apiVersion: 'legacy.example.com/v1alpha1', kind: 'Gadget', metadata: { name: 'old', namespace: 'shop', uid: 'u-old' }, spec: { colour: 'amber' } };
    await storage.create('/registry/gadgets.example.com/shop/old', Buffer.from(JSON.stringify(legacyBytes)));
    expect((await call('GET', `${paths.v1}/old`)).json).toMatchObject({ apiVersion: 'example.com/v1', spec: { color: 'amber' } });
    expect((await call('GET', `${paths.legacy}/old`)).json).toMatchObject({ apiVersion: 'legacy.example.com/v1alpha1', spec: { colour: 'amber' } });
    const listed = (await call('GET', paths.v1beta1)).json.items.find((i: Obj) => i.metadata.name === 'old');
    expect([listed.apiVersion, listed.spec]).toEqual(['example.com/v1beta1', { color: 'amber' }]);
    await patch(`${paths.v1}/old`, 'application/merge-patch+json', { metadata: { labels: { moved: 'yes' } } });
    const rewritten = JSON.parse(Buffer.from((await storage.get('/registry/gadgets.example.com/shop/old'))!.value).toString());
    expect([rewritten.apiVersion, rewritten.spec]).toEqual(['example.com/v1', { color: 'amber' }]);
  });

  it('deletes through any version, and collects dependents that name their owner by another version', async () => {
    const owner = (await call('POST', paths.v1, body('example.com/v1', 'owner', { color: 'red' }))).json;
    const ref = { apiVersion: 'legacy.example.com/v1alpha1', kind: 'Gadget', name: 'owner', uid: owner.metadata.uid };
    const dependent = { ...pod('dep'), metadata: { name: 'dep', ownerReferences: [ref] } };
    expect((await call('POST', '/api/v1/namespaces/shop/pods', dependent)).status).toBe(201);
    await new Promise((r) => setTimeout(r, 300));
    expect((await call('GET', '/api/v1/namespaces/shop/pods/dep')).status).toBe(200);
    const gone = await call('DELETE', `${paths.v1beta1}/owner`);
    expect([gone.status, gone.json.status, gone.json.details.group]).toEqual([200, 'Success', 'example.com']);
    expect((await call('GET', `${paths.legacy}/owner`)).status).toBe(404);
    for (let i = 0; i < 100 && (await call('GET', '/api/v1/namespaces/shop/pods/dep')).status !== 404; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await call('GET', '/api/v1/namespaces/shop/pods/dep')).status).toBe(404);
    const collection = await call('DELETE', paths.legacy);
    expect(collection.json.items.map((i: Obj) => i.apiVersion)).toEqual(expect.arrayContaining(['legacy.example.com/v1alpha1']));
    expect((await call('GET', paths.v1)).json.items).toEqual([]);
  });

  it('empties a deleted namespace of the objects whichever version made them', async () => {
    expect((await call('POST', paths.legacy, body('legacy.example.com/v1alpha1', 'last', { colour: 'red' }))).status).toBe(201);
    expect((await call('DELETE', '/api/v1/namespaces/shop')).status).toBe(200);
    for (let i = 0; i < 100 && (await call('GET', '/api/v1/namespaces/shop')).status !== 404; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await call('GET', '/api/v1/namespaces/shop')).status).toBe(404);
    expect((await storage.list({ prefix: '/registry/gadgets.example.com/', revision: 0, limit: 0 })).items).toEqual([]);
  });
});
