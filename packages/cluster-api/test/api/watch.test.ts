/**
 * Watch semantics over real HTTP, on a server whose registry the test builds (to reach the watch
 * cache's counters and set a short bookmark period): resume from a revision, selector transitions,
 * bookmarks, 410 Expired for a compacted revision, and 1,000 watchers opened and closed.
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { AdminUser } from '../../src/auth/credentials.js';
import { createRegistry, type LocalRegistry } from '../../src/registry/index.js';
import { startServer, type ClusterApiServer } from '../../src/server.js';
import { MemoryStorage } from '../../src/storage/memory/memory.js';
import { TestToken, namespace, openWatch, pod } from '../support/helpers.js';

let storage: MemoryStorage;
let registry: LocalRegistry;
let server: ClusterApiServer;
const NS = '/api/v1/namespaces/wt';

const call = async (method: string, path: string, body?: unknown, type = 'application/json') => {
  const res = await fetch(server.url + path, {
    method, headers: { authorization: `Bearer ${TestToken}`, 'content-type': type }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
};

const openWatchHere = (path: string) => openWatch(server, path);

const summary = (e: any) => `${e.type} ${e.object.metadata.name}`;

beforeAll(async () => {
  storage = new MemoryStorage({ compaction: false } as never);
  registry = createRegistry(storage, { bookmarkIntervalMs: 100 });
  // Without the controllers: their own watches would count among the subscribers.
  // RBAC alone: the Node mode's pod watch would be one subscriber more in the counts below.
  server = await startServer({ storage, registry, controllers: false, authorization: ['RBAC'], authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])) });
  await call('POST', '/api/v1/namespaces', namespace('wt'));
});
afterAll(() => server.close());

describe('watch', () => {
  it('from resourceVersion N delivers every later change once, in order', async () => {
    const start = (await call('GET', `${NS}/pods`)).json.metadata.resourceVersion;
    const written: string[] = [];
    for (const name of ['r1', 'r2', 'r3']) written.push((await call('POST', `${NS}/pods`, pod(name))).json.metadata.resourceVersion);
    await call('DELETE', `${NS}/pods/r2?gracePeriodSeconds=0`);
    const w = await openWatchHere(`${NS}/pods?watch=1&resourceVersion=${start}`);
    const events = [await w.next(), await w.next(), await w.next(), await w.next()];
    w.close();
    expect(events.map(summary)).toEqual(['ADDED r1', 'ADDED r2', 'ADDED r3', 'DELETED r2']);
    expect(events.slice(0, 3).map((e) => e.object.metadata.resourceVersion)).toEqual(written);
    const revisions = events.map((e) => Number(e.object.metadata.resourceVersion));
    expect([...revisions].sort((a, b) => a - b)).toEqual(revisions);
  });

  it('turns selector transitions into DELETED and ADDED', async () => {
    await call('POST', `${NS}/pods`, pod('sel', { tier: 'a' }));
    const w = await openWatchHere(`${NS}/pods?watch=true&labelSelector=tier%3Da`);
    expect(summary(await w.next())).toBe('ADDED sel');
    const merge = 'application/merge-patch+json';
    await call('PATCH', `${NS}/pods/sel`, { metadata: { labels: { tier: 'b' } } }, merge);
    const left = await w.next();
    expect([summary(left), left.object.metadata.labels.tier]).toEqual(['DELETED sel', 'a']);
    await call('PATCH', `${NS}/pods/sel`, { metadata: { labels: { tier: 'a' } } }, merge);
    expect(summary(await w.next())).toBe('ADDED sel');
    w.close();
  });

  it('sends BOOKMARK events with only kind, apiVersion and resourceVersion when allowed', async () => {
    const rv = (await call('GET', `${NS}/pods`)).json.metadata.resourceVersion;
    const w = await openWatchHere(`${NS}/pods?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true`);
    const mark = await w.next();
    w.close();
    expect(mark).toEqual({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: rv } } });
  });

  it('closes the stream cleanly after timeoutSeconds', async () => {
    const w = await openWatchHere(`${NS}/secrets?watch=true&timeoutSeconds=1`);
    expect(await w.next()).toBeUndefined();
  });

  it('answers a compacted resourceVersion with an ERROR event carrying 410 Expired', async () => {
    const latest = (await call('POST', `${NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'new' } })).json.metadata.resourceVersion;
    await storage.compact(Number(latest));
    // Below the watch cache's ring and below the backend's retained history.
    const gone = await openWatchHere(`${NS}/serviceaccounts?watch=true&resourceVersion=1`);
    const error = await gone.next();
    expect(error).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    expect(await gone.next()).toBeUndefined();
  });

  it('frees everything when 1,000 watchers open and close', async () => {
    const gc = () => runInNewContext('gc')();
    setFlagsFromString('--expose-gc');
    const subscribers = () => registry.watchCache.stats().find((s) => s.prefix === '/registry/pods/')!.subscribers;
    // Streams the earlier tests aborted are freed as their sockets close.
    for (let i = 0; i < 100 && subscribers() > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(subscribers()).toBe(0);
    gc();
    const before = getHeapStatistics().used_heap_size;
    const watches = [];
    for (let i = 0; i < 1000; i++) watches.push(openWatchHere(`${NS}/pods?watch=true&resourceVersion=1000000`));
    const open = await Promise.all(watches);
    expect(open.every((w) => w.res.status === 200)).toBe(true);
    expect(subscribers()).toBe(1000);
    for (const w of open) w.close();
    for (let i = 0; i < 100 && subscribers() > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(subscribers()).toBe(0);
    gc();
    expect(getHeapStatistics().used_heap_size - before).toBeLessThan(32 * 1024 * 1024);
  });
});
