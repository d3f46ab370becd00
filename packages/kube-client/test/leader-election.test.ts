/**
 * Leader election over coordination.k8s.io/v1 Leases, against the real cluster API (`cluster-api
 * serve`, which serves Lease with Kubernetes' semantics: 404 NotFound, 409 AlreadyExists, 409 Conflict
 * on a stale resourceVersion). Each candidate talks through a TCP proxy of its own, so a test can cut
 * one off; a watch of the Lease records every write, so a test can tell who wrote what.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { KubeApiError, KubeClient, type Lease, LeaderElector, type LeaderElectionOptions, loadConnection, Resources } from '../src/index.js';
import { type Cluster, startCluster, until } from './cluster.js';
import { type Proxy, startProxy } from './tcp-proxy.js';

const Namespace = 'kube-system';
let cluster: Cluster;
let direct: KubeClient;
let leaseName = '';
let round = 0;
const proxies: Proxy[] = [];
const clients: KubeClient[] = [];

/** Every write to the current test's Lease, as `holder transitions` in order. */
let writes: string[] = [];
let stopWatch = (): void => {};

const record = async (name: string, signal: AbortSignal): Promise<void> => {
  for await (const ev of direct.watch<Lease>(Resources.leases, { namespace: Namespace, fieldSelector: `metadata.name=${name}`, signal })) {
    if (ev.type === 'ADDED' || ev.type === 'MODIFIED') writes.push(`${ev.object.spec?.holderIdentity ?? '(released)'} ${ev.object.spec?.leaseTransitions ?? 0}`);
  }
};

beforeAll(async () => {
  cluster = await startCluster();
  direct = new KubeClient(loadConnection({ kubeconfig: cluster.kubeconfig }));
});
afterAll(async () => {
  stopWatch();
  clients.forEach((c) => c.close());
  direct?.close();
  await Promise.all(proxies.map((p) => p.close()));
  await cluster?.stop();
});
beforeEach(async () => {
  stopWatch();
  leaseName = `scheduler-${++round}`;
  writes = [];
  const abort = new AbortController();
  stopWatch = () => abort.abort();
  void record(leaseName, abort.signal).catch(() => undefined);
  // Time for the watch to be established before the test's first write (a missed create would fail the test, not pass it).
  await new Promise((r) => setTimeout(r, 200));
});

const current = (): Promise<Lease> => direct.get<Lease>(Resources.leases, leaseName, { namespace: Namespace });

async function candidate(identity: string, extra: Partial<LeaderElectionOptions> = {}) {
  const proxy = await startProxy(Number(new URL(cluster.url).port));
  proxies.push(proxy);
  const client = new KubeClient({ ...loadConnection({ kubeconfig: cluster.kubeconfig }), server: `https://127.0.0.1:${proxy.port}` });
  clients.push(client);
  const log: string[] = [];
  const elector = new LeaderElector(client, {
    namespace: Namespace, name: leaseName, identity, leaseDurationSeconds: 1, renewDeadlineSeconds: 0.5, retryPeriodSeconds: 0.1,
    onStartedLeading: () => log.push('started'), onStoppedLeading: () => log.push('stopped'), onNewLeader: (id) => log.push(`leader ${id}`),
    ...extra,
  });
  return { elector, log, proxy };
}

/** Long enough that a loaded machine's pauses never cost the leader its lease in these tests. */
const steady = { leaseDurationSeconds: 5, renewDeadlineSeconds: 3, retryPeriodSeconds: 0.1 };

describe('LeaderElector against cluster-api serve', () => {
  it('elects exactly one of two candidates; the other learns who leads', async () => {
    const a = await candidate('a', steady);
    const b = await candidate('b', steady);
    a.elector.start();
    b.elector.start();
    await until(() => a.elector.isLeader() || b.elector.isLeader(), 'a leader');
    await new Promise((r) => setTimeout(r, 400));
    const [leader, follower] = a.elector.isLeader() ? [a, b] : [b, a];
    expect(follower.elector.isLeader()).toBe(false);
    const leaderId = leader === a ? 'a' : 'b';
    expect((await current()).spec?.holderIdentity).toBe(leaderId);
    expect(follower.log).toContain(`leader ${leaderId}`);
    await until(() => writes.length > 0, 'the watch to see the create');
    expect(writes.every((w) => w === `${leaderId} 0`)).toBe(true);
    await leader.elector.stop();
    await follower.elector.stop();
  });

  it('hands over at once when the leader releases the lease on stop, counting the transition', async () => {
    const a = await candidate('a', { ...steady, releaseOnStop: true });
    a.elector.start();
    await until(() => a.elector.isLeader(), 'a leads');
    const b = await candidate('b', steady);
    b.elector.start();
    await new Promise((r) => setTimeout(r, 300));
    expect(b.elector.isLeader()).toBe(false);
    await a.elector.stop();
    expect(a.log).toEqual(['leader a', 'started', 'stopped']);
    await until(() => b.elector.isLeader(), 'b takes over');
    await until(() => writes.at(-1) === 'b 1', 'the watch to see b take over');
    // b took the released record (holder empty), not one it had to watch expire.
    expect(writes.slice(-2)).toEqual(['(released) 0', 'b 1']);
    expect((await current()).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    await b.elector.stop();
  });

  it('stops leading when it cannot renew, and another takes the expired lease', async () => {
    const a = await candidate('a');
    a.elector.start();
    await until(() => a.elector.isLeader(), 'a leads');
    const b = await candidate('b');
    b.elector.start();
    a.proxy.cut(true);
    await until(() => a.log.includes('stopped'), 'a gives up after its renew deadline');
    await until(() => b.elector.isLeader(), 'b takes the lease once it expired');
    expect((await current()).spec?.holderIdentity).toBe('b');
    await a.elector.stop();
    await b.elector.stop();
  });

  it('lets only one of two simultaneous rounds win (AlreadyExists / Conflict for the other)', async () => {
    const a = await candidate('a');
    const b = await candidate('b');
    const results = await Promise.all([a.elector.tryAcquireOrRenew(), b.elector.tryAcquireOrRenew()]);
    expect(results.filter(Boolean)).toHaveLength(1);
    const holder = (await current()).spec?.holderIdentity;
    expect(results[holder === 'a' ? 0 : 1]).toBe(true);
    await until(() => writes.length > 0, 'the watch to see the create');
    await new Promise((r) => setTimeout(r, 200));
    expect(writes).toEqual([`${holder} 0`]);
  });

  it('is refused a Lease the API server finds invalid, with the cause', async () => {
    const bad = await direct.create(Resources.leases, { metadata: { name: `${leaseName}-bad` }, spec: { leaseDurationSeconds: 0 } }, { namespace: Namespace })
      .then(() => undefined, (e: unknown) => e as KubeApiError);
    expect([bad?.code, bad?.reason]).toEqual([422, 'Invalid']);
    expect(bad?.causes.map((c) => c.field)).toEqual(['spec.leaseDurationSeconds']);
  });

  it('refuses timings that cannot work and an empty identity', () => {
    const client = new KubeClient({ server: 'http://127.0.0.1:1', insecureSkipTlsVerify: false, credentials: {}, namespace: 'x', context: 'x', files: [] });
    clients.push(client);
    expect(() => new LeaderElector(client, { namespace: 'x', name: 'l', identity: 'a', leaseDurationSeconds: 5, renewDeadlineSeconds: 10 })).toThrow(/leaseDurationSeconds > renewDeadlineSeconds > retryPeriodSeconds > 0/);
    expect(() => new LeaderElector(client, { namespace: 'x', name: 'l', identity: '' })).toThrow(/non-empty identity/);
  });
});
