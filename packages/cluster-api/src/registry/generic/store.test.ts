import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { Pod, Service } from '@func/kube-client';
import type { KubeObject } from '../../api/meta.js';
import type { Storage } from '../../storage/interface.js';
import { MemoryStorage } from '../../storage/memory/memory.js';
import { SqliteStorage } from '../../storage/sqlite/sqlite.js';
import type { Registry, ResourceStore } from '../rest.js';
import { ApiError } from '../../api/errors.js';
import { createRegistry } from '../index.js';

const ctx = (namespace?: string) => ({ namespace });
const podBody = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: 'web' } },
  // No grace period: these tests delete pods outright (graceful deletion is in test/lifecycle.test.ts).
  spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'nginx:1.25' }] },
  ...extra,
});

const failure = async (p: Promise<unknown>): Promise<ApiError> => {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
};

// Every store behaviour on both embedded backends: a real SQLite file as well as memory.
const dir = mkdtempSync(join(tmpdir(), 'registry-store-'));
const opened: Storage[] = [];
let files = 0;
const backends: [string, () => Storage][] = [
  ['memory', () => new MemoryStorage()],
  ['sqlite', () => SqliteStorage.open(join(dir, `store-${files++}.db`))],
];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe.each(backends)('on %s storage', (_, backend) => {
  const open = <S extends Storage>(): S => {
    const s = backend() as S;
    opened.push(s);
    return s;
  };
  let registry: Registry;
  let pods: ResourceStore;
  let namespaces: ResourceStore;
  let services: ResourceStore;

  beforeEach(async () => {
    registry = createRegistry(open());
    pods = registry.find('', 'v1', 'pods')!;
    namespaces = registry.find('', 'v1', 'namespaces')!;
    services = registry.find('', 'v1', 'services')!;
    await namespaces.create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  });

  describe('create', () => {
    it('sets system fields and defaults', async () => {
      const pod = (await pods.create(ctx('default'), podBody('a'))).object;
      expect(pod.metadata).toMatchObject({ name: 'a', namespace: 'default', generation: 1, selfLink: '/api/v1/namespaces/default/pods/a' });
      expect(pod.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(pod.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(Number(pod.metadata.resourceVersion)).toBeGreaterThan(0);
      expect(pod.status).toMatchObject({ phase: 'Pending' });
      expect(pod.spec).toMatchObject({ restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' });
    });

    it('generates names with a 5-character suffix', async () => {
      const pod = (await pods.create(ctx('default'), podBody('', { metadata: { generateName: 'web-' } }))).object;
      expect(pod.metadata.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    });

    it('rejects a missing namespace, a namespace mismatch, a wrong kind and a duplicate', async () => {
      expect((await failure(pods.create(ctx('nope'), podBody('a')))).message).toBe('namespaces "nope" not found');
      const mismatch = await failure(pods.create(ctx('default'), podBody('a', { metadata: { name: 'a', namespace: 'other' } })));
      expect([mismatch.code, mismatch.message]).toEqual([400, 'the namespace of the provided object does not match the namespace sent on the request']);
      expect((await failure(pods.create(ctx('default'), { ...podBody('a'), kind: 'Service' }))).code).toBe(400);
      expect((await failure(pods.create(ctx('default'), { ...podBody('a'), apiVersion: 'v2' }))).code).toBe(400);
      await pods.create(ctx('default'), podBody('a'));
      const dup = await failure(pods.create(ctx('default'), podBody('a')));
      expect([dup.code, dup.reason, dup.message]).toEqual([409, 'AlreadyExists', 'pods "a" already exists']);
    });

    it('answers 422 with causes for an invalid pod', async () => {
      const err = await failure(pods.create(ctx('default'), { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'Bad_Name' }, spec: { containers: [{}] } }));
      expect(err.code).toBe(422);
      expect(err.details?.causes?.map((c) => c.field)).toEqual(['metadata.name', 'spec.containers[0].name', 'spec.containers[0].image']);
      expect(err.message).toMatch(/^Pod "Bad_Name" is invalid: \[metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
    });
  });

  describe('update', () => {
    it('bumps resourceVersion, keeps status on the main resource and changes only status on /status', async () => {
      const pod = (await pods.create(ctx('default'), podBody('a'))).object;
      const relabelled = (await pods.update(ctx('default'), 'a', { ...pod, metadata: { ...pod.metadata, labels: { app: 'x' } }, status: { phase: 'Running' } })).object;
      expect(relabelled.metadata.labels).toEqual({ app: 'x' });
      expect(relabelled.status).toMatchObject({ phase: 'Pending' });
      expect(relabelled.metadata.generation).toBe(1);
      expect(Number(relabelled.metadata.resourceVersion)).toBeGreaterThan(Number(pod.metadata.resourceVersion));
      const running = (await pods.update(ctx('default'), 'a', { ...relabelled, metadata: { ...relabelled.metadata, labels: {} }, status: { phase: 'Running' } }, 'status')).object;
      expect(running.status).toMatchObject({ phase: 'Running' });
      expect(running.metadata.labels).toEqual({ app: 'x' });
    });

    it('answers 409 with the optimistic-lock message for a stale resourceVersion', async () => {
      const pod = (await pods.create(ctx('default'), podBody('a'))).object;
      await pods.update(ctx('default'), 'a', { ...pod, metadata: { ...pod.metadata, labels: { v: '2' } } });
      const err = await failure(pods.update(ctx('default'), 'a', { ...pod, metadata: { ...pod.metadata, labels: { v: '3' } } }));
      expect([err.code, err.reason, err.message]).toEqual([409, 'Conflict',
        'Operation cannot be fulfilled on pods "a": the object has been modified; please apply your changes to the latest version and try again']);
    });

    it('does not write when nothing changed', async () => {
      const pod = (await pods.create(ctx('default'), podBody('a'))).object;
      const same = (await pods.update(ctx('default'), 'a', pod)).object;
      expect(same.metadata.resourceVersion).toBe(pod.metadata.resourceVersion);
    });

    it('forbids pod spec changes other than images', async () => {
      const pod = (await pods.create(ctx('default'), podBody('a'))).object as Pod;
      const image = (await pods.update(ctx('default'), 'a', { ...pod, spec: { ...pod.spec, containers: [{ ...pod.spec.containers[0]!, image: 'nginx:2' }] } })).object as Pod;
      expect(image.spec.containers[0]!.image).toBe('nginx:2');
      const err = await failure(pods.update(ctx('default'), 'a', { ...image, spec: { ...(image.spec as object), hostname: 'h' } }));
      expect(err.code).toBe(422);
      expect(err.details?.causes?.[0]?.message).toMatch(/^Forbidden: pod updates may not change fields other than/);
    });

    it('finalizers keep a deleted object until an update removes them', async () => {
      const pod = (await pods.create(ctx('default'), podBody('a', { metadata: { name: 'a', finalizers: ['example.com/x'] } }))).object;
      const first = await pods.delete(ctx('default'), 'a', {});
      expect(first.deleted).toBe(false);
      expect(first.object.metadata.deletionTimestamp).toBeDefined();
      const kept = await pods.get(ctx('default'), 'a');
      const err = await failure(pods.update(ctx('default'), 'a', { ...kept, metadata: { ...kept.metadata, finalizers: ['example.com/x', 'b/c'] } }));
      expect(err.code).toBe(422);
      await pods.update(ctx('default'), 'a', { ...kept, metadata: { ...kept.metadata, finalizers: [] } });
      expect((await failure(pods.get(ctx('default'), 'a'))).code).toBe(404);
      expect(pod.metadata.uid).toBeDefined();
    });
  });

  describe('delete', () => {
    it('checks options and preconditions', async () => {
      const pod = (await pods.create(ctx('default'), podBody('a'))).object;
      const both = await failure(pods.delete(ctx('default'), 'a', { orphanDependents: true, propagationPolicy: 'Background' }));
      expect([both.code, both.message]).toEqual([422,
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set']);
      expect((await failure(pods.delete(ctx('default'), 'a', { gracePeriodSeconds: -1 }))).code).toBe(422);
      const uid = await failure(pods.delete(ctx('default'), 'a', { preconditions: { uid: 'other' } }));
      expect([uid.code, uid.message]).toEqual([409, `Operation cannot be fulfilled on pods "a": Precondition failed: UID in precondition: other, UID in object meta: ${pod.metadata.uid}`]);
      const out = await pods.delete(ctx('default'), 'a', { preconditions: { uid: pod.metadata.uid } });
      expect(out.deleted).toBe(true);
      expect(out.object.metadata.name).toBe('a');
      expect((await failure(pods.delete(ctx('default'), 'a', {}))).message).toBe('pods "a" not found');
    });
  });

  describe('list', () => {
    const seed = async (n: number) => {
      for (let i = 0; i < n; i++) await pods.create(ctx('default'), podBody(`p${i}`, { metadata: { name: `p${i}`, labels: { i: String(i % 2) } } }));
    };

    it('filters by label and field selectors', async () => {
      await seed(4);
      const odd = await pods.list(ctx('default'), { labelSelector: 'i=1' });
      expect(odd.items.map((p) => p.metadata.name)).toEqual(['p1', 'p3']);
      expect((await pods.list(ctx('default'), { labelSelector: 'i notin (1)' })).items).toHaveLength(2);
      expect((await pods.list(ctx('default'), { fieldSelector: 'metadata.name=p2' })).items.map((p) => p.metadata.name)).toEqual(['p2']);
      expect((await pods.list(ctx('default'), { fieldSelector: 'status.phase!=Pending' })).items).toHaveLength(0);
      expect((await failure(pods.list(ctx('default'), { fieldSelector: 'spec.bogus=x' }))).message).toBe('field label not supported: spec.bogus');
      expect((await failure(pods.list(ctx('default'), { labelSelector: 'a in b' }))).code).toBe(400);
    });

    it('pages with limit and continue at one snapshot', async () => {
      await seed(5);
      const first = await pods.list(ctx(), { limit: 2 });
      expect(first.items.map((p) => p.metadata.name)).toEqual(['p0', 'p1']);
      expect(first.metadata.remainingItemCount).toBe(3);
      await pods.create(ctx('default'), podBody('p9'));
      const rest: string[] = [];
      let token = first.metadata.continue;
      while (token) {
        const page = await pods.list(ctx(), { limit: 2, continue: token });
        expect(page.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
        rest.push(...page.items.map((p) => p.metadata.name!));
        token = page.metadata.continue;
      }
      expect(rest).toEqual(['p2', 'p3', 'p4']);
      expect((await failure(pods.list(ctx(), { continue: 'garbage' }))).code).toBe(400);
    });

    it('answers 410 Expired for a continue token whose revision was compacted', async () => {
      const storage = open();
      const reg = createRegistry(storage);
      await reg.find('', 'v1', 'namespaces')!.create(ctx(), { metadata: { name: 'default' } });
      const store = reg.find('', 'v1', 'pods')!;
      for (let i = 0; i < 3; i++) await store.create(ctx('default'), podBody(`p${i}`));
      const first = await store.list(ctx('default'), { limit: 1 });
      await store.create(ctx('default'), podBody('late'));
      await storage.compact(await storage.currentRevision());
      const err = await failure(store.list(ctx('default'), { limit: 1, continue: first.metadata.continue }));
      expect([err.code, err.reason]).toEqual([410, 'Expired']);
      expect(err.message).toMatch(/^The provided continue parameter is too old/);
    });
  });

  describe('patch', () => {
    it('applies json, merge and strategic patches, with a resourceVersion precondition', async () => {
      await pods.create(ctx('default'), podBody('a'));
      const json = (await pods.patch(ctx('default'), 'a', 'json', [{ op: 'test', path: '/metadata/labels/app', value: 'web' }, { op: 'add', path: '/metadata/labels/x', value: '1' }])).object;
      expect(json.metadata.labels).toEqual({ app: 'web', x: '1' });
      expect((await failure(pods.patch(ctx('default'), 'a', 'json', [{ op: 'test', path: '/metadata/labels/app', value: 'no' }]))).code).toBe(422);
      const merged = (await pods.patch(ctx('default'), 'a', 'merge', { metadata: { labels: { x: null } } })).object;
      expect(merged.metadata.labels).toEqual({ app: 'web' });
      const smp = (await pods.patch(ctx('default'), 'a', 'strategic', { spec: { containers: [{ name: 'c', image: 'nginx:3' }] } })).object;
      const c = (smp.spec as { containers: Record<string, unknown>[] }).containers;
      expect(c).toHaveLength(1);
      expect(c[0]).toMatchObject({ name: 'c', image: 'nginx:3', imagePullPolicy: 'IfNotPresent' });
      const stale = await failure(pods.patch(ctx('default'), 'a', 'merge', { metadata: { resourceVersion: '1', labels: { y: '1' } } }));
      expect(stale.code).toBe(409);
    });
  });

  describe('service', () => {
    it('allocates distinct cluster IPs and keeps them immutable', async () => {
      const svc = (name: string, extra: Record<string, unknown> = {}) => ({ kind: 'Service', apiVersion: 'v1', metadata: { name }, spec: { ports: [{ port: 80 }], ...extra } });
      const a = (await services.create(ctx('default'), svc('a'))).object as Service;
      const b = (await services.create(ctx('default'), svc('b'))).object as Service;
      const ipA = a.spec.clusterIP;
      expect(ipA).toMatch(/^10\.(9[6-9]|10[0-9]|11[01])\.\d+\.\d+$/);
      expect(b.spec.clusterIP).not.toBe(ipA);
      expect(a.spec).toMatchObject({ type: 'ClusterIP', ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }] });
      const taken = await failure(services.create(ctx('default'), svc('c', { clusterIP: ipA })));
      expect(taken.details?.causes?.[0]?.message).toBe(`Invalid value: "${ipA}": provided IP is already allocated`);
      const moved = await failure(services.update(ctx('default'), 'a', { ...a, spec: { ...a.spec, clusterIP: '10.96.0.9' } }));
      expect(moved.details?.causes?.[0]?.message).toBe('Invalid value: "10.96.0.9": field is immutable');
      await services.delete(ctx('default'), 'a', {});
      const reused = (await services.create(ctx('default'), svc('d', { clusterIP: ipA }))).object as Service;
      expect(reused.spec.clusterIP).toBe(ipA);
      expect((await failure(services.create(ctx('default'), svc('e', { ports: [] })))).code).toBe(422);
    });
  });

  describe('service cluster IP range', () => {
    it('allocates from the range it is given and refuses a clusterIP outside it', async () => {
      const other = createRegistry(open(), { serviceClusterIpRange: '127.128.0.0/12' });
      await other.find('', 'v1', 'namespaces')!.create(ctx(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
      const inRange = other.find('', 'v1', 'services')!;
      const svc = (name: string, extra: Record<string, unknown> = {}) => ({ kind: 'Service', apiVersion: 'v1', metadata: { name }, spec: { ports: [{ port: 80 }], ...extra } });
      const a = (await inRange.create(ctx('default'), svc('a'))).object as Service;
      expect(a.spec.clusterIP).toMatch(/^127\.(12[89]|13\d|14[0-3])\.\d+\.\d+$/);
      const outside = await failure(inRange.create(ctx('default'), svc('b', { clusterIP: '10.96.0.10' })));
      expect(outside.details?.causes?.[0]?.message).toBe('Invalid value: "10.96.0.10": provided IP is not in the valid range. The range of valid IPs is 127.128.0.0/12');
      const asked = (await inRange.create(ctx('default'), svc('c', { clusterIP: '127.128.0.10' }))).object as Service;
      expect(asked.spec.clusterIP).toBe('127.128.0.10');
    });
  });

  describe('service node ports', () => {
    it('allocates unique node ports for NodePort services and keeps them across an apply that omits them', async () => {
      const svc = (name: string, ports: unknown[]) => ({ kind: 'Service', apiVersion: 'v1', metadata: { name }, spec: { type: 'NodePort', ports } });
      const a = (await services.create(ctx('default'), svc('a', [{ port: 80, name: 'http' }, { port: 443, name: 'https' }]))).object;
      const ports = (a.spec as { ports: { nodePort: number }[] }).ports.map((p) => p.nodePort);
      expect(ports.every((p) => p >= 30000 && p <= 32767)).toBe(true);
      expect(new Set(ports).size).toBe(2);
      const taken = await failure(services.create(ctx('default'), svc('b', [{ port: 80, nodePort: ports[0] }])));
      expect(taken.details?.causes?.[0]).toMatchObject({ field: 'spec.ports[0].nodePort', message: `Invalid value: ${ports[0]}: provided port is already allocated` });
      const range = await failure(services.create(ctx('default'), svc('b', [{ port: 80, nodePort: 80 }])));
      expect(range.details?.causes?.[0]?.message).toBe('Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767');
      const applied = (await services.patch(ctx('default'), 'a', 'merge', { spec: { ports: [{ port: 80, name: 'http' }, { port: 443, name: 'https' }] } })).object;
      expect((applied.spec as { ports: { nodePort: number }[] }).ports.map((p) => p.nodePort)).toEqual(ports);
      await services.delete(ctx('default'), 'a', {});
      const reused = (await services.create(ctx('default'), svc('c', [{ port: 80, nodePort: ports[0] }]))).object;
      expect((reused.spec as { ports: { nodePort: number }[] }).ports[0]!.nodePort).toBe(ports[0]);
    });
  });

  describe('service type changes', () => {
    const ports = (o: KubeObject) => (o as Service).spec.ports!.map((p) => p.nodePort);
    it('allocates node ports when a Service becomes NodePort and frees them when it stops', async () => {
      await services.create(ctx('default'), { metadata: { name: 'a' }, spec: { ports: [{ port: 80 }] } });
      const exposed = (await services.patch(ctx('default'), 'a', 'merge', { spec: { type: 'NodePort' } })).object;
      const [port] = ports(exposed);
      expect(port).toBeGreaterThanOrEqual(30000);
      const clash = await failure(services.create(ctx('default'), { metadata: { name: 'b' }, spec: { type: 'NodePort', ports: [{ port: 80, nodePort: port }] } }));
      expect(clash.code).toBe(422);
      const internal = (await services.patch(ctx('default'), 'a', 'merge', { spec: { type: 'ClusterIP' } })).object;
      expect(ports(internal)).toEqual([undefined]);
      const b = (await services.create(ctx('default'), { metadata: { name: 'b' }, spec: { type: 'NodePort', ports: [{ port: 80, nodePort: port }] } })).object;
      expect(ports(b)).toEqual([port]);
      const forbidden = await failure(services.patch(ctx('default'), 'a', 'merge', { spec: { ports: [{ port: 80, nodePort: 31000 }] } }));
      expect(forbidden.details?.causes?.[0]?.message).toBe("Forbidden: may not be used when `type` is 'ClusterIP'");
    });

    it('gives the cluster IP up for ExternalName and allocates one back', async () => {
      const a = (await services.create(ctx('default'), { metadata: { name: 'a' }, spec: { ports: [{ port: 80 }] } })).object as Service;
      const ip = a.spec.clusterIP!;
      const ext = (await services.patch(ctx('default'), 'a', 'merge', { spec: { type: 'ExternalName', externalName: 'example.com' } })).object as Service;
      expect(ext.spec.clusterIP).toBeUndefined();
      const taker = (await services.create(ctx('default'), { metadata: { name: 'b' }, spec: { clusterIP: ip, ports: [{ port: 80 }] } })).object as Service;
      expect(taker.spec.clusterIP).toBe(ip);
      const back = (await services.patch(ctx('default'), 'a', 'merge', { spec: { type: 'ClusterIP', externalName: null } })).object as Service;
      expect(back.spec.clusterIP).toMatch(/^10\./);
      expect(back.spec.clusterIP).not.toBe(ip);
    });
  });

  describe('watch', () => {
    it('replays current state, then follows selector transitions', async () => {
      await pods.create(ctx('default'), podBody('a'));
      const events: { type: string; name?: string }[] = [];
      const errors: Error[] = [];
      const w = await pods.watch(ctx('default'), { labelSelector: 'app=web' }, {
        onEvent: (e) => events.push({ type: e.type, name: (e.object as KubeObject).metadata.name }),
        onError: (e) => errors.push(e),
      });
      const b = (await pods.create(ctx('default'), podBody('b'))).object;
      await pods.patch(ctx('default'), 'b', 'merge', { metadata: { labels: { app: 'other' } } });
      await pods.patch(ctx('default'), 'b', 'merge', { metadata: { labels: { app: 'web' } } });
      await pods.delete(ctx('default'), 'b', {});
      await new Promise((r) => setTimeout(r, 20));
      w.close();
      expect(events).toEqual([
        { type: 'ADDED', name: 'a' }, { type: 'ADDED', name: 'b' }, { type: 'DELETED', name: 'b' },
        { type: 'ADDED', name: 'b' }, { type: 'DELETED', name: 'b' },
      ]);
      expect(errors).toEqual([]);
      expect(b.metadata.name).toBe('b');
    });

    it('reports a compacted start revision as 410 Expired', async () => {
      const storage = open();
      const reg = createRegistry(storage);
      const ns = reg.find('', 'v1', 'namespaces')!;
      await ns.create(ctx(), { metadata: { name: 'x' } });
      await ns.create(ctx(), { metadata: { name: 'y' } });
      await storage.compact(await storage.currentRevision());
      const err = await new Promise<Error>((resolve) => {
        void ns.watch(ctx(), { resourceVersion: '1' }, { onEvent: () => {}, onError: resolve });
      });
      expect(err).toBeInstanceOf(ApiError);
      expect([(err as ApiError).code, (err as ApiError).reason]).toEqual([410, 'Expired']);
    });
  });
});
