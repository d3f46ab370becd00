/**
 * A kind added while the server runs gets what every built-in kind gets from the controllers:
 * garbage collection of its dependents and deletion with its namespace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { AdminUser } from '../../src/auth/credentials.js';
import type { ResourceDefinition } from '../../src/registry/definition.js';
import { createRegistry, type LocalRegistry } from '../../src/registry/index.js';
import { startServer, type ClusterApiServer } from '../../src/server.js';
import { MemoryStorage } from '../../src/storage/memory/memory.js';
import { namespace, request, TestToken } from '../support/helpers.js';

const gadget: ResourceDefinition = {
  group: 'example.com', version: 'v1', kind: 'Gadget', listKind: 'GadgetList', plural: 'gadgets', singular: 'gadget',
  namespaced: true, schemaless: true, verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'], strategy: {},
};
const gadgets = (ns: string) => `/apis/example.com/v1/namespaces/${ns}/gadgets`;
const body = (name: string, owner?: { name: string; uid: string }) => ({
  apiVersion: 'example.com/v1', kind: 'Gadget',
  metadata: { name, ...(owner && { ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Gadget', ...owner }] }) },
});

describe('a kind added at run time, with the controllers running', () => {
  let registry: LocalRegistry;
  let server: ClusterApiServer;
  const call = (method: string, path: string, b?: unknown) => request(server.url, method, path, { body: b, token: TestToken });
  const gone = async (path: string) => (await call('GET', path)).status === 404;
  /** Polls until `path` is 404 (a resync period is 5 s); false if it never was within the bound. */
  const eventuallyGone = async (path: string): Promise<boolean> => {
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) if (await gone(path)) return true;
    return false;
  };
  beforeAll(async () => {
    const storage = new MemoryStorage();
    registry = createRegistry(storage);
    server = await startServer({ storage, registry, authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])) });
    registry.add(gadget);
    for (const ns of ['work', 'doomed']) expect((await call('POST', '/api/v1/namespaces', namespace(ns))).status).toBe(201);
  });
  afterAll(() => server.close());

  it('has its dependents garbage collected when their owner goes', async () => {
    const owner = (await call('POST', gadgets('work'), body('owner'))).json;
    expect((await call('POST', gadgets('work'), body('part', { name: 'owner', uid: owner.metadata.uid }))).status).toBe(201);
    expect((await call('DELETE', `${gadgets('work')}/owner`)).status).toBe(200);
    expect(await eventuallyGone(`${gadgets('work')}/part`)).toBe(true);
  });

  it('is emptied from a namespace being deleted, which then goes', async () => {
    expect((await call('POST', gadgets('doomed'), body('left-behind'))).status).toBe(201);
    expect((await call('DELETE', '/api/v1/namespaces/doomed')).status).toBe(200);
    expect(await eventuallyGone('/api/v1/namespaces/doomed')).toBe(true);
    expect(await gone(`${gadgets('doomed')}/left-behind`)).toBe(true);
  });
});
