/**
 * A subresource is one entry on its kind plus its behaviour module, and a kind may be served from
 * while the server runs: a kind defined here (as a CustomResourceDefinition would be) gains one
 * subresource of each behaviour type, written in a few lines each, and is added to and removed from
 * a running server's registry. Routes, discovery and the generic store follow without any other change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { badRequest } from '../../src/api/errors.js';
import type { KubeObject } from '../../src/api/meta.js';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { AdminUser } from '../../src/auth/credentials.js';
import type { ResourceDefinition } from '../../src/registry/definition.js';
import { clone, isObject } from '../../src/registry/generic/meta.js';
import { createRegistry, type LocalRegistry } from '../../src/registry/index.js';
import type { SubresourceDef } from '../../src/registry/subresource.js';
import { scale } from '../../src/registry/subresources/scale.js';
import { statusSubresource } from '../../src/registry/subresources/status.js';
import { startServer, type ClusterApiServer } from '../../src/server.js';
import { MemoryStorage } from '../../src/storage/memory/memory.js';
import { namespace, request, TestToken } from '../support/helpers.js';

/* ---- Four behaviour modules, one of each type ---- */

/** A view: the object's labels as a LabelSet; a PUT replaces them under the kind's update rules. */
const labels: SubresourceDef = {
  verbs: ['get', 'update'],
  kind: { group: 'example.com', version: 'v1', kind: 'LabelSet' },
  behaviour: {
    type: 'view',
    read: (o) => ({ apiVersion: 'example.com/v1', kind: 'LabelSet', metadata: { name: o.metadata.name }, labels: o.metadata.labels ?? {} }),
    decode(body) {
      if (!isObject(body) || !isObject(body.labels)) throw badRequest('a LabelSet holds labels');
      return { view: body.labels };
    },
    merge: (labels, old) => ({ ...clone(old), metadata: { ...clone(old.metadata), labels: labels as Record<string, string> } }),
  },
};

/** An action: retiring a widget deletes it, as an eviction deletes its pod. */
const retire: SubresourceDef = {
  verbs: ['create'],
  behaviour: {
    type: 'action',
    check: (body) => (isObject(body) && body.kind === 'Retirement' ? body : (() => { throw badRequest('the body must be a Retirement'); })()),
    act: async (_checked, parent) => ((await parent.delete({})).deleted ? { kind: 'Status', status: 'Success' } : {}) as unknown as KubeObject,
  },
};

/** A create: a receipt made from the widget, stored nowhere. */
const receipt: SubresourceDef = {
  verbs: ['create'],
  behaviour: {
    type: 'create',
    check: (body) => body,
    create: (_body, widget) => ({ apiVersion: 'example.com/v1', kind: 'Receipt', metadata: {}, for: widget.metadata.uid }) as KubeObject,
  },
};

/** A connect: the widget answers in plain text, as a proxied or streamed exchange would. */
const hello: SubresourceDef = {
  verbs: ['get'],
  behaviour: { type: 'connect', connect: (widget) => (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello from ${widget.metadata.name}`) },
};

/** The kind: status and scale as every kind declares them, then the four above, one entry each. */
const widget: ResourceDefinition = {
  group: 'example.com', version: 'v1', kind: 'Widget', listKind: 'WidgetList', plural: 'widgets', singular: 'widget',
  namespaced: true, schemaless: true, verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'], strategy: {},
  subresources: { status: statusSubresource(), scale: scale(() => 'app=widget'), labels, retire, receipt, hello },
};

const base = '/apis/example.com/v1/namespaces/shop/widgets';

describe('subresources declared on a kind added at run time', () => {
  let registry: LocalRegistry;
  let server: ClusterApiServer;
  const call = (method: string, path: string, body?: unknown) => request(server.url, method, path, { body, token: TestToken });
  beforeAll(async () => {
    const storage = new MemoryStorage();
    registry = createRegistry(storage);
    server = await startServer({ storage, registry, authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])), controllers: false });
    expect((await call('POST', '/api/v1/namespaces', namespace('shop'))).status).toBe(201);
  });
  afterAll(() => server.close());

  it('is not served before it is added, then is listed by discovery with every subresource', async () => {
    expect((await call('GET', base)).status).toBe(404);
    expect((await call('GET', '/apis/example.com/v1')).status).toBe(404);
    registry.add(widget);
    const list = await call('GET', '/apis/example.com/v1');
    expect(list.json.resources.map((r: { name: string; kind: string; verbs: string[] }) => [r.name, r.kind, r.verbs.join()])).toEqual([
      ['widgets', 'Widget', 'create,delete,get,list,patch,update,watch'],
      ['widgets/status', 'Widget', 'get,patch,update'],
      ['widgets/scale', 'Scale', 'get,patch,update'],
      ['widgets/labels', 'LabelSet', 'get,update'],
      ['widgets/retire', 'Widget', 'create'],
      ['widgets/receipt', 'Widget', 'create'],
      ['widgets/hello', 'Widget', 'get'],
    ]);
    expect((await call('GET', '/apis')).json.groups.map((g: { name: string }) => g.name)).toContain('example.com');
    expect((await call('POST', base, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', labels: { a: 'b' } }, spec: { replicas: 1 } })).status).toBe(201);
  });

  it('serves a view through the parent\'s update rules, and only the verbs its entry lists', async () => {
    expect((await call('GET', `${base}/w/labels`)).json).toEqual({ apiVersion: 'example.com/v1', kind: 'LabelSet', metadata: { name: 'w' }, labels: { a: 'b' } });
    const put = await call('PUT', `${base}/w/labels`, { labels: { tier: 'front' } });
    expect([put.status, put.json.labels]).toEqual([200, { tier: 'front' }]);
    expect((await call('GET', `${base}/w`)).json.metadata.labels).toEqual({ tier: 'front' });
    const invalid = await call('PUT', `${base}/w/labels`, { labels: { 'not valid!': 'x' } });
    expect([invalid.status, invalid.json.reason]).toEqual([422, 'Invalid']);
    expect((await call('PUT', `${base}/w/labels`, { labels: 'none' })).status).toBe(400);
    expect((await call('PATCH', `${base}/w/labels`, { labels: {} })).status).toBe(405);
    const scaled = await call('PUT', `${base}/w/scale`, { metadata: { name: 'w' }, spec: { replicas: 4 } });
    expect([scaled.status, scaled.json.spec, scaled.json.status.selector]).toEqual([200, { replicas: 4 }, 'app=widget']);
  });

  it('runs a create and a connect subresource against the stored parent', async () => {
    const uid = (await call('GET', `${base}/w`)).json.metadata.uid;
    const made = await call('POST', `${base}/w/receipt`, {});
    expect([made.status, made.json.kind, made.json.for]).toEqual([201, 'Receipt', uid]);
    const text = await call('GET', `${base}/w/hello`);
    expect([text.status, text.text]).toEqual([200, 'hello from w']);
    expect((await call('POST', `${base}/w/hello`, {})).status).toBe(405);
    expect((await call('GET', `${base}/missing/hello`)).status).toBe(404);
  });

  it('runs an action that deletes its parent', async () => {
    expect((await call('POST', `${base}/w/retire`, { kind: 'Other' })).status).toBe(400);
    const retired = await call('POST', `${base}/w/retire`, { kind: 'Retirement' });
    expect([retired.status, retired.json]).toEqual([201, { kind: 'Status', status: 'Success' }]);
    expect((await call('GET', `${base}/w`)).status).toBe(404);
  });

  it('answers 404 for a subresource the kind does not declare, own properties only', async () => {
    expect((await call('POST', base, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'v' } })).status).toBe(201);
    for (const name of ['eviction', 'constructor', 'toString', '__proto__']) expect((await call('GET', `${base}/v/${name}`)).status).toBe(404);
  });

  it('stops serving once removed, the stored objects kept for a later definition', async () => {
    expect(registry.remove('example.com', 'v1', 'widgets')).toBe(true);
    expect((await call('GET', `${base}/v`)).status).toBe(404);
    expect((await call('GET', '/apis/example.com/v1')).status).toBe(404);
    expect((await call('GET', '/apis')).json.groups.map((g: { name: string }) => g.name)).not.toContain('example.com');
    registry.add(widget);
    expect((await call('GET', `${base}/v`)).json.metadata.name).toBe('v');
    expect(() => registry.add(widget)).toThrow(/served already/);
  });
});
