/**
 * The client against the real cluster API (`cluster-api serve` as a child process, TLS + bearer
 * token from its generated kubeconfig): CRUD, selectors and paging, every patch type, server-side
 * apply conflicts and force, subresources, typed errors, watch and resume.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlreadyExists, KubeApiError, KubeClient, type KubeObject, Resources, resourceType } from '../src/index.js';
import { type Cluster, startCluster } from './cluster.js';

let cluster: Cluster;
let client: KubeClient;
const ns = 'kc';
const pod = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  metadata: { name, labels },
  spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'nginx' }] },
});
const failure = (p: Promise<unknown>) => p.then(() => { throw new Error('expected a failure'); }, (e: unknown) => e as KubeApiError);

beforeAll(async () => {
  cluster = await startCluster();
  client = KubeClient.fromKubeconfig({ kubeconfig: cluster.kubeconfig, namespace: ns });
  await client.create(Resources.namespaces, { metadata: { name: ns } });
});
afterAll(async () => {
  client?.close();
  await cluster?.stop();
});

describe('KubeClient CRUD', () => {
  it('creates, gets, lists with selectors and pages, updates and deletes', async () => {
    for (let i = 0; i < 5; i++) await client.create(Resources.pods, pod(`p${i}`, { app: i % 2 ? 'odd' : 'even' }));
    expect((await client.get(Resources.pods, 'p1')).metadata?.labels).toEqual({ app: 'odd' });
    const odd = await client.list(Resources.pods, { labelSelector: 'app=odd' });
    expect(odd.items.map((p) => p.metadata?.name)).toEqual(['p1', 'p3']);
    const page = await client.list(Resources.pods, { limit: 2 });
    expect(page.items).toHaveLength(2);
    expect(page.metadata.continue).toBeTruthy();
    const all = await client.listAll(Resources.pods, { limit: 2 });
    expect(all.items.map((p) => p.metadata?.name)).toEqual(['p0', 'p1', 'p2', 'p3', 'p4']);
    const p0 = await client.get(Resources.pods, 'p0');
    const updated = await client.update(Resources.pods, { ...p0, metadata: { ...p0.metadata, labels: { app: 'changed' } } });
    expect(updated.metadata?.labels).toEqual({ app: 'changed' });
    const stale = await failure(client.update(Resources.pods, p0));
    expect(stale).toBeInstanceOf(KubeApiError);
    expect(stale).toMatchObject({ code: 409, reason: 'Conflict' });
    await client.delete(Resources.pods, 'p0', { propagationPolicy: 'Background' });
    expect(await failure(client.get(Resources.pods, 'p0'))).toMatchObject({ code: 404, reason: 'NotFound', message: expect.stringMatching(/get pods\/p0: pods "p0" not found \(404 NotFound\)/) });
  });

  it('creates services and secrets and answers a duplicate with AlreadyExists and a bad object with Invalid causes', async () => {
    const svc = await client.create(Resources.services, { metadata: { name: 'web' }, spec: { ports: [{ port: 80 }], selector: { app: 'web' } } });
    expect((svc.spec as { clusterIP?: string }).clusterIP).toMatch(/\d+\.\d+\.\d+\.\d+/);
    await client.create(Resources.secrets, { metadata: { name: 's' }, stringData: { k: 'v' } });
    expect((await client.get(Resources.secrets, 's')).data).toEqual({ k: Buffer.from('v').toString('base64') });
    const dup = await failure(client.create(Resources.secrets, { metadata: { name: 's' } }));
    expect(isAlreadyExists(dup)).toBe(true);
    const invalid = await failure(client.create(Resources.pods, { metadata: { name: 'Bad_Name' }, spec: { containers: [] } }));
    expect(invalid).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(invalid.causes.map((c) => c.field)).toContain('metadata.name');
  });

  it('patches with JSON patch, merge patch and strategic merge patch', async () => {
    await client.create(Resources.pods, pod('patched', { a: '1' }));
    await client.patch(Resources.pods, 'patched', [{ op: 'add', path: '/metadata/labels/b', value: '2' }], { type: 'json' });
    await client.patch(Resources.pods, 'patched', { metadata: { labels: { a: null, c: '3' } } }, { type: 'merge' });
    const p = await client.patch<KubeObject>(Resources.pods, 'patched', { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } }, { type: 'strategic' });
    expect(p.metadata?.labels).toEqual({ b: '2', c: '3' });
    expect((p.spec as { containers: Array<{ image: string }> }).containers.map((c) => c.image)).toEqual(['nginx:2']);
  });

  it('server-side applies: a second manager conflicts (409 with causes) until it forces', async () => {
    const cm = (value: string) => ({ metadata: { name: 'applied', labels: { owner: value } }, spec: { ports: [{ port: 80 }] } });
    const first = await client.apply<KubeObject>(Resources.services, cm('deploy'), { fieldManager: 'func' });
    expect(first.metadata?.managedFields).toEqual([expect.objectContaining({ manager: 'func', operation: 'Apply' })]);
    const conflict = await failure(client.apply(Resources.services, cm('other'), { fieldManager: 'other' }));
    expect(conflict).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(conflict.causes).toEqual([expect.objectContaining({ reason: 'FieldManagerConflict', field: '.metadata.labels.owner' })]);
    const forced = await client.apply(Resources.services, cm('other'), { fieldManager: 'other', force: true });
    expect(forced.metadata?.labels).toEqual({ owner: 'other' });
    const dry = await client.apply(Resources.services, cm('dry'), { fieldManager: 'other', dryRun: true });
    expect(dry.metadata?.labels).toEqual({ owner: 'dry' });
    expect((await client.get(Resources.services, 'applied')).metadata?.labels).toEqual({ owner: 'other' });
  });
});

describe('subresources', () => {
  it('updates pod status, binds a pod to a node and reads its (empty) log', async () => {
    const created = await client.create(Resources.pods, pod('sub'));
    const withStatus = await client.updateStatus(Resources.pods, { ...created, status: { phase: 'Running' } });
    expect((withStatus.status as { phase: string }).phase).toBe('Running');
    await client.bind('sub', 'node-a');
    expect(((await client.get(Resources.pods, 'sub')).spec as { nodeName?: string }).nodeName).toBe('node-a');
    const unbound = await client.create(Resources.pods, pod('nolog'));
    const log = await client.logs(unbound.metadata!.name!);
    let text = '';
    for await (const chunk of log) text += String(chunk);
    expect(text).toBe('');
  });

  it('scales a replication controller through /scale', async () => {
    await client.create(Resources.replicationControllers, { metadata: { name: 'rc' }, spec: { replicas: 1, selector: { app: 'rc' }, template: { metadata: { labels: { app: 'rc' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } } });
    await client.scale(Resources.replicationControllers, 'rc', 3);
    expect((await client.getScale(Resources.replicationControllers, 'rc')).spec?.replicas).toBe(3);
  });

  it('evicts through pods/eviction, and types the error of a missing pod or a kind the server does not serve', async () => {
    expect(await client.evict('sub')).toMatchObject({ kind: 'Status', status: 'Success' });
    expect(await failure(client.get(Resources.pods, 'sub'))).toMatchObject({ code: 404, reason: 'NotFound' });
    const evict = await failure(client.evict('sub'));
    expect(evict).toBeInstanceOf(KubeApiError);
    expect(evict).toMatchObject({ code: 404, reason: 'NotFound' });
    const crd = await failure(client.list(resourceType('example.com/v1', 'Widget', 'widgets')));
    expect(crd).toMatchObject({ code: 404, reason: 'NotFound' });
  });
});

describe('watch', () => {
  it('streams events after a list and resumes from a resourceVersion without loss or repeats', async () => {
    const list = await client.list(Resources.secrets, { labelSelector: 'w=1' });
    const abort = new AbortController();
    const seen: string[] = [];
    const watching = (async () => {
      for await (const e of client.watch(Resources.secrets, { resourceVersion: list.metadata.resourceVersion, labelSelector: 'w=1', signal: abort.signal })) {
        seen.push(`${e.type} ${e.object.metadata?.name}`);
        if (seen.length === 3) break;
      }
    })();
    await client.create(Resources.secrets, { metadata: { name: 'w1', labels: { w: '1' } } });
    const mid = await client.patch(Resources.secrets, 'w1', { metadata: { annotations: { x: 'y' } } }, { type: 'merge' });
    await client.create(Resources.secrets, { metadata: { name: 'other' } });
    await client.delete(Resources.secrets, 'w1');
    await watching;
    expect(seen).toEqual(['ADDED w1', 'MODIFIED w1', 'DELETED w1']);
    const resumed: string[] = [];
    for await (const e of client.watch(Resources.secrets, { resourceVersion: mid.metadata?.resourceVersion, labelSelector: 'w=1' })) {
      resumed.push(`${e.type} ${e.object.metadata?.name}`);
      break;
    }
    expect(resumed).toEqual(['DELETED w1']);
  });

  it('delivers bookmarks when asked and ends at timeoutSeconds', async () => {
    const list = await client.list(Resources.pods);
    const types: string[] = [];
    for await (const e of client.watch(Resources.pods, { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 1 })) types.push(e.type);
    expect(types.every((t) => t === 'BOOKMARK')).toBe(true);
  });
});
