/**
 * Adding a controller: one descriptor and one reconcile function, registered with the manager, and it
 * reconciles (on create, on update, and again when it asks for `requeueAfter`). The converted
 * deadline and namespace controllers are exercised by test/api/lifecycle.test.ts and the Event TTL test.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { KubeClient } from '@func/kube-client';
import { afterAll, describe, expect, it } from 'vitest';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { AdminUser } from '../../src/auth/credentials.js';
import { httpClient } from '../../src/client/http.js';
import { served, splitKey } from '../../src/controllers/context.js';
import type { ControllerDescriptor } from '../../src/controllers/descriptors.js';
import { ignoreRaces, inNamespace } from '../../src/controllers/shared.js';
import { startControllerManager } from '../../src/controllers/manager.js';
import { startReconciler } from '../../src/controllers/reconciler.js';
import { startServer } from '../../src/server.js';
import { SqliteStorage } from '../../src/storage/sqlite/sqlite.js';
import { request, tempDir, TestToken } from '../support/helpers.js';
import { type Call, freshNamespace, merge } from '../support/workload-helpers.js';
import { until } from '../../testing/src/poll.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

// The whole controller: a ConfigMap labelled mirror=yes gets a copy `<name>-mirror` with its data;
// one annotated `mirror-wait-ms` is copied only after that long.
const mirror: ControllerDescriptor = {
  name: 'configmap-mirror-controller', aliases: ['mirror'], byDefault: false,
  start: (ctx) => {
    const configmaps = served(ctx, '', 'v1', 'configmaps')!;
    return startReconciler('configmap-mirror-controller', async (key) => {
      const { namespace, name } = splitKey(key);
      const cm = configmaps.cache.get(namespace, name);
      if (!cm || cm.metadata.labels?.mirror !== 'yes') return;
      const wait = Date.parse(cm.metadata.creationTimestamp!) + Number(cm.metadata.annotations?.['mirror-wait-ms'] ?? 0) - Date.now();
      if (wait > 0) return { requeueAfter: wait };
      const copy = configmaps.cache.get(namespace, `${name}-mirror`);
      const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...copy?.metadata, name: `${name}-mirror` }, data: cm.data };
      await (copy ? configmaps.store.update(inNamespace(namespace), body.metadata.name, body) : configmaps.store.create(inNamespace(namespace), body)).catch(ignoreRaces);
    }, [{ cache: configmaps.cache }], { log: ctx.log });
  },
};

describe('a controller added in a few lines', () => {
  it('reconciles its keys once registered: on create, on update, and after requeueAfter', async () => {
    const dir = tempDir();
    const server = await startServer({ storage: SqliteStorage.open(join(dir, 'state.db')), authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])), log: () => {}, controllerManager: false });
    cleanups.push(async () => (await server.close(), rmSync(dir, { recursive: true, force: true })));
    const call: Call = (method, path, init = {}) => request(server.url, method, path, { ...init, token: TestToken });
    const kube = new KubeClient({ server: server.url, insecureSkipTlsVerify: false, credentials: { token: TestToken }, namespace: 'default', context: 't', files: [] });
    cleanups.push(() => kube.close());
    const api = await httpClient(kube);
    const logs: Record<string, unknown>[] = [];
    // Off by default: `*` leaves it out, its alias turns it on.
    const none = startControllerManager({ clientFor: () => api, descriptors: [mirror], controllers: ['*'] });
    await none.stop();
    const manager = startControllerManager({ clientFor: () => api, descriptors: [mirror], controllers: ['*', 'mirror'], log: (e) => logs.push(e) });
    cleanups.push(() => manager.stop());

    const ns = await freshNamespace(call, 'mirror');
    const cms = `/api/v1/namespaces/${ns}/configmaps`;
    expect((await call('POST', cms, { body: { metadata: { name: 'a', labels: { mirror: 'yes' } }, data: { k: '1' } } })).status).toBe(201);
    expect((await call('POST', cms, { body: { metadata: { name: 'plain' }, data: { k: '1' } } })).status).toBe(201);
    await until('the copy', async () => (await call('GET', `${cms}/a-mirror`)).json?.data?.k === '1', { timeoutMs: 15_000 });
    await merge(call, `${cms}/a`, { data: { k: '2' } });
    await until('the copy updated', async () => (await call('GET', `${cms}/a-mirror`)).json?.data?.k === '2', { timeoutMs: 15_000 });
    expect((await call('GET', `${cms}/plain-mirror`)).status).toBe(404);

    expect((await call('POST', cms, { body: { metadata: { name: 'later', labels: { mirror: 'yes' }, annotations: { 'mirror-wait-ms': '1500' } }, data: { k: 'x' } } })).status).toBe(201);
    const copied = await until('the delayed copy', async () => (await call('GET', `${cms}/later-mirror`)).json?.metadata?.creationTimestamp && (await call('GET', `${cms}/later-mirror`)).json, { timeoutMs: 15_000 });
    const original = (await call('GET', `${cms}/later`)).json;
    // Whole seconds: the copy is at least one second younger (the wait was 1.5 s).
    expect(Date.parse(copied.metadata.creationTimestamp) - Date.parse(original.metadata.creationTimestamp)).toBeGreaterThanOrEqual(1000);
    expect(logs).toEqual([]);
  });
});
