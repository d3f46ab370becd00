import { beforeEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.js';
import { MemoryStorage } from '../../storage/memory/memory.js';
import type { Registry, ResourceStore } from '../rest.js';
import { createRegistry, ensureSystemNamespaces, SystemNamespaces } from '../index.js';
import { apiError } from '../testing/kind-tester.js';

const ns = { namespace: 'default' };
/** No grace period: these tests delete pods outright (graceful deletion is in test/lifecycle.test.ts). */
const podBody = (name: string, labels: Record<string, string> = {}) =>
  ({ metadata: { name, labels }, spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'i' }] } });
let storage: MemoryStorage;
let registry: Registry;
let pods: ResourceStore;

beforeEach(async () => {
  storage = new MemoryStorage();
  registry = createRegistry(storage);
  await ensureSystemNamespaces(registry);
  pods = registry.find('', 'v1', 'pods')!;
});

describe('bootstrap', () => {
  it('creates the system namespaces once', async () => {
    await ensureSystemNamespaces(registry);
    const names = (await registry.find('', 'v1', 'namespaces')!.list({}, {})).items.map((n) => n.metadata.name);
    expect(names.sort()).toEqual([...SystemNamespaces].sort());
  });
});

describe('guaranteed update', () => {
  it('retries conflicts when no resourceVersion was sent, so concurrent patches all land', async () => {
    await pods.create(ns, podBody('p'));
    await Promise.all(Array.from({ length: 10 }, (_, i) => pods.patch(ns, 'p', 'merge', { metadata: { labels: { [`k${i}`]: 'v' } } })));
    expect(Object.keys((await pods.get(ns, 'p')).metadata.labels ?? {})).toHaveLength(10);
  });

  it('rejects a body whose name or namespace differs from the path', async () => {
    const p = (await pods.create(ns, podBody('p'))).object;
    expect((await apiError(pods.update(ns, 'other', p))).message).toBe('the name of the object (p) does not match the name on the URL (other)');
    expect((await apiError(pods.update({ namespace: 'kube-system' }, 'p', p))).code).toBe(400);
    const renamed = await apiError(pods.patch(ns, 'p', 'merge', { metadata: { name: 'p-changed' } }));
    expect([renamed.code, renamed.message]).toEqual([400, 'the name of the object (p-changed) does not match the name on the URL (p)']);
    expect((await apiError(pods.update(ns, 'missing', { ...p, metadata: { ...p.metadata, name: 'missing' } }))).code).toBe(404);
  });

  it('refuses subresources the kind does not declare', async () => {
    const sa = registry.find('', 'v1', 'serviceaccounts')!;
    const created = (await sa.create(ns, { metadata: { name: 'x' } })).object;
    expect((await apiError(sa.update(ns, 'x', created, 'status'))).code).toBe(404);
  });
});

describe('names that cannot be stored', () => {
  it('are not found on reads and writes, and a 400 as a namespace of a list', async () => {
    for (const name of ['a/b', '..', 'a%2f']) {
      expect((await apiError(pods.get(ns, name))).message).toBe(`pods "${name}" not found`);
      expect((await apiError(pods.delete(ns, name, {}))).code).toBe(404);
    }
    expect((await apiError(pods.list({ namespace: 'a/b' }, {}))).code).toBe(400);
    expect((await apiError(pods.watch(ns, { name: 'a/b' }, { onEvent: () => {}, onError: () => {} }))).code).toBe(400);
  });
});

describe('dry run', () => {
  it('validates and answers without writing', async () => {
    const before = await storage.currentRevision();
    const out = (await pods.create({ ...ns, dryRun: true }, podBody('dry'))).object;
    expect(out.metadata.uid).toBeTruthy();
    expect((await apiError(pods.create({ ...ns, dryRun: true }, { metadata: { name: 'bad' } }))).code).toBe(422);
    await pods.create(ns, podBody('real'));
    const rev = await storage.currentRevision();
    await pods.patch({ ...ns, dryRun: true }, 'real', 'merge', { metadata: { labels: { a: 'b' } } });
    await pods.delete({ ...ns, dryRun: true }, 'real', {});
    expect(await storage.currentRevision()).toBe(rev);
    expect(rev).toBe(before + 1);
    expect((await apiError(pods.get(ns, 'dry'))).code).toBe(404);
  });
});

describe('list resourceVersion', () => {
  it('answers 504 for a future revision and 400 for a malformed one', async () => {
    const current = await storage.currentRevision();
    const err = await apiError(pods.list(ns, { resourceVersion: String(current + 100) }));
    expect([err.code, err.reason, err.details?.retryAfterSeconds]).toEqual([504, 'Timeout', 1]);
    expect((await apiError(pods.list(ns, { resourceVersion: 'abc' }))).message).toBe('invalid resource version: abc');
    expect((await pods.list(ns, { resourceVersion: String(current) })).metadata.resourceVersion).toBe(String(current));
  });

  it('reads an exact older snapshot with resourceVersionMatch=Exact', async () => {
    await pods.create(ns, podBody('a'));
    const at = await storage.currentRevision();
    await pods.create(ns, podBody('b'));
    const old = await pods.list(ns, { resourceVersion: String(at), resourceVersionMatch: 'Exact' });
    expect(old.items.map((p) => p.metadata.name)).toEqual(['a']);
  });

  it('keeps namespaces apart and lists across them without one', async () => {
    await pods.create(ns, podBody('a'));
    await pods.create({ namespace: 'kube-system' }, podBody('a'));
    expect((await pods.list(ns, {})).items).toHaveLength(1);
    expect((await pods.list({}, {})).items.map((p) => p.metadata.namespace)).toEqual(['default', 'kube-system']);
  });
});

describe('listEncoded', () => {
  it('serializes exactly the list that list() returns, filtered and paged alike', async () => {
    for (let i = 0; i < 5; i++) await pods.create(ns, podBody(`p${i}`, { i: String(i % 2) }));
    const store = pods as Required<ResourceStore>;
    for (const query of [{}, { labelSelector: 'i=1' }, { fieldSelector: 'metadata.name!=p0' }, { limit: 2 }]) {
      const objects = await pods.list(ns, query);
      const encoded = JSON.parse(Buffer.from(await store.listEncoded(ns, query)).toString('utf8'));
      expect(encoded).toEqual(JSON.parse(JSON.stringify(objects)));
    }
    const page = JSON.parse(Buffer.from(await store.listEncoded(ns, { limit: 2 })).toString('utf8'));
    const rest = await pods.list(ns, { limit: 10, continue: page.metadata.continue });
    expect(rest.items.map((p) => p.metadata.name)).toEqual(['p2', 'p3', 'p4']);
    expect(Object.keys(page)).toEqual(['kind', 'apiVersion', 'metadata', 'items']);
  });

  it('encodes one object as get() returns it', async () => {
    await pods.create(ns, podBody('one'));
    const store = pods as Required<ResourceStore>;
    const encoded = JSON.parse(Buffer.from(await store.getEncoded(ns, 'one')).toString('utf8'));
    expect(encoded).toEqual(JSON.parse(JSON.stringify(await pods.get(ns, 'one'))));
    expect((await apiError(Promise.resolve().then(() => store.getEncoded(ns, 'missing')))).code).toBe(404);
  });

  it('answers a committed object without a promise when the storage holds it at hand', async () => {
    await pods.create(ns, podBody('at-hand'));
    const now = (pods as Required<ResourceStore>).getEncoded(ns, 'at-hand');
    expect(now).toBeInstanceOf(Uint8Array);
    expect(JSON.parse(Buffer.from(now as Uint8Array).toString('utf8')).metadata.name).toBe('at-hand');
    expect(() => (pods as Required<ResourceStore>).getEncoded(ns, 'missing')).toThrow(expect.objectContaining({ code: 404 }));
  });

  it('encodes an empty list', async () => {
    const store = pods as Required<ResourceStore>;
    const empty = JSON.parse(Buffer.from(await store.listEncoded({ namespace: 'kube-public' }, {})).toString('utf8'));
    expect(empty.items).toEqual([]);
  });
});

describe('deleteCollection', () => {
  it('deletes what the selector matches and returns it', async () => {
    await pods.create(ns, podBody('a', { app: 'x' }));
    await pods.create(ns, podBody('b', { app: 'y' }));
    const out = await pods.deleteCollection(ns, { labelSelector: 'app=x' }, {});
    expect(out.items.map((p) => p.metadata.name)).toEqual(['a']);
    expect((await pods.list(ns, {})).items.map((p) => p.metadata.name)).toEqual(['b']);
    const services = registry.find('', 'v1', 'services')!;
    expect((await apiError(services.deleteCollection(ns, {}, {}))).code).toBe(405);
  });
});

describe('watch', () => {
  const collect = async (store: ResourceStore, query: Parameters<ResourceStore['watch']>[1], ctx: { namespace?: string } = ns) => {
    const events: string[] = [];
    const w = await store.watch(ctx, query, {
      onEvent: (e) => events.push(`${e.type} ${(e.object as KubeObject).metadata.name}`),
      onError: (e) => events.push(`ERROR ${e.message}`),
    });
    return { events, close: () => w.close() };
  };
  const settle = () => new Promise((r) => setTimeout(r, 20));

  it('follows one object by name and resumes after a resourceVersion', async () => {
    const a = (await pods.create(ns, podBody('a'))).object;
    await pods.create(ns, podBody('b'));
    const byName = await collect(pods, { name: 'a' });
    const resumed = await collect(pods, { resourceVersion: a.metadata.resourceVersion });
    await pods.patch(ns, 'a', 'merge', { metadata: { labels: { x: 'y' } } });
    await pods.delete(ns, 'b', {});
    await settle();
    byName.close();
    resumed.close();
    expect(byName.events).toEqual(['ADDED a', 'MODIFIED a']);
    expect(resumed.events).toEqual(['ADDED b', 'MODIFIED a', 'DELETED b']);
  });

  it('admitCreated drops the creations it refuses, unseen, and never changes or deletions', async () => {
    const events: string[] = [];
    const seen: string[] = [];
    const w = await pods.watch(ns, { resourceVersion: String(await storage.currentRevision()) }, {
      admitCreated: (stored) => {
        const text = Buffer.from(stored).toString();
        seen.push(JSON.parse(text).metadata.name);
        return text.includes('"keep"');
      },
      onEvent: (e) => events.push(`${e.type} ${(e.object as KubeObject).metadata.name}`),
      onError: (e) => events.push(`ERROR ${e.message}`),
    });
    await pods.create(ns, podBody('skipped'));
    await pods.create(ns, podBody('kept', { keep: 'yes' }));
    await pods.patch(ns, 'skipped', 'merge', { metadata: { labels: { x: 'y' } } });
    await pods.delete(ns, 'skipped', {});
    await settle();
    w.close();
    expect(seen).toEqual(['skipped', 'kept']);
    expect(events).toEqual(['ADDED kept', 'MODIFIED skipped', 'DELETED skipped']);
  });

  it('rejects malformed selectors and resource versions before starting', async () => {
    expect((await apiError(pods.watch(ns, { labelSelector: 'a in b' }, { onEvent: () => {}, onError: () => {} }))).code).toBe(400);
    expect((await apiError(pods.watch(ns, { resourceVersion: 'x' }, { onEvent: () => {}, onError: () => {} }))).code).toBe(400);
  });

  it('ends a watch whose sink throws, and keeps the others going', async () => {
    let calls = 0;
    await pods.watch(ns, { resourceVersion: String(await storage.currentRevision()) }, {
      onEvent: () => {
        calls++;
        throw new Error('client went away');
      },
      onError: () => {},
    });
    const healthy = await collect(pods, {});
    await pods.create(ns, podBody('one'));
    await pods.create(ns, podBody('two'));
    await settle();
    healthy.close();
    expect(calls).toBe(1);
    expect(healthy.events).toEqual(['ADDED one', 'ADDED two']);
  });

  it('delivers nothing after close', async () => {
    const w = await collect(pods, {});
    w.close();
    await pods.create(ns, podBody('late'));
    await settle();
    expect(w.events).toEqual([]);
  });
});

describe('review kinds', () => {
  it('answer a create without a name and store nothing', async () => {
    const reviews = registry.find('authorization.k8s.io', 'v1', 'subjectaccessreviews')!;
    const spec = { user: 'u', resourceAttributes: { verb: 'get', resource: 'pods' } };
    const out = (await reviews.create({}, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec })).object;
    expect([out.spec, (out.status as { allowed: boolean } | undefined)?.allowed]).toEqual([spec, true]);
    expect((await apiError(reviews.list({}, {}))).code).toBe(405);
  });
});
