/**
 * Leader election over coordination.k8s.io/v1 Leases. The cluster API does not serve Lease yet, so
 * this runs against a minimal HTTP server in the test that answers Lease get/create/update as
 * kube-apiserver does (404 NotFound, 409 AlreadyExists, 409 Conflict on a stale resourceVersion);
 * each candidate authenticates with its own token so the server can cut one off.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { KubeClient, type Lease, LeaderElector, type LeaderElectionOptions } from '../src/index.js';
import { until } from './cluster.js';

const PATH = /^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/([^/]+)\/leases(?:\/([^/?]+))?/;
let server: Server;
let port: number;
let lease: Lease | undefined;
let rv = 0;
const failing = new Set<string>();
const writes: string[] = [];

const status = (code: number, reason: string, message: string) => JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message });

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const who = (req.headers.authorization ?? '').replace('Bearer ', '');
      const send = (code: number, payload: string) => res.writeHead(code, { 'content-type': 'application/json' }).end(payload);
      if (failing.has(who)) return send(503, status(503, 'ServiceUnavailable', 'cut off'));
      const m = PATH.exec(req.url ?? '');
      if (!m) return send(404, status(404, 'NotFound', 'the server could not find the requested resource'));
      const [, ns, name] = m;
      if (req.method === 'GET') return lease && lease.metadata?.name === name ? send(200, JSON.stringify(lease)) : send(404, status(404, 'NotFound', `leases.coordination.k8s.io "${name}" not found`));
      const obj = JSON.parse(body) as Lease;
      if (req.method === 'POST') {
        if (lease) return send(409, status(409, 'AlreadyExists', `leases.coordination.k8s.io "${obj.metadata?.name}" already exists`));
        lease = { ...obj, metadata: { ...obj.metadata, namespace: ns, resourceVersion: String(++rv) } };
        writes.push(`create ${who} ${obj.spec?.holderIdentity}`);
        return send(201, JSON.stringify(lease));
      }
      if (req.method === 'PUT') {
        if (!lease) return send(404, status(404, 'NotFound', 'not found'));
        if (obj.metadata?.resourceVersion !== lease.metadata?.resourceVersion) return send(409, status(409, 'Conflict', 'Operation cannot be fulfilled on leases.coordination.k8s.io: the object has been modified; please apply your changes to the latest version and try again'));
        lease = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++rv) } };
        writes.push(`update ${who} ${obj.spec?.holderIdentity ?? '(released)'}`);
        return send(200, JSON.stringify(lease));
      }
      send(405, status(405, 'MethodNotAllowed', 'no'));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  lease = undefined;
  failing.clear();
  writes.length = 0;
});

const clients: KubeClient[] = [];
afterAll(() => clients.forEach((c) => c.close()));

function candidate(identity: string, extra: Partial<LeaderElectionOptions> = {}) {
  const client = new KubeClient({ server: `http://127.0.0.1:${port}`, insecureSkipTlsVerify: false, credentials: { token: identity }, namespace: 'kube-system', context: 'test', files: [] });
  clients.push(client);
  const log: string[] = [];
  const elector = new LeaderElector(client, {
    namespace: 'kube-system', name: 'scheduler', identity, leaseDurationSeconds: 1, renewDeadlineSeconds: 0.5, retryPeriodSeconds: 0.1,
    onStartedLeading: () => log.push('started'), onStoppedLeading: () => log.push('stopped'), onNewLeader: (id) => log.push(`leader ${id}`),
    ...extra,
  });
  return { elector, log };
}

/** Long enough that a loaded machine's pauses never cost the leader its lease in these tests. */
const steady = { leaseDurationSeconds: 5, renewDeadlineSeconds: 3, retryPeriodSeconds: 0.1 };

describe('LeaderElector', () => {
  it('elects exactly one of two candidates; the other learns who leads', async () => {
    const a = candidate('a', steady);
    const b = candidate('b', steady);
    a.elector.start();
    b.elector.start();
    await until(() => a.elector.isLeader() || b.elector.isLeader(), 'a leader');
    await new Promise((r) => setTimeout(r, 400));
    const [leader, follower] = a.elector.isLeader() ? [a, b] : [b, a];
    expect(follower.elector.isLeader()).toBe(false);
    const leaderId = leader === a ? 'a' : 'b';
    expect(lease?.spec?.holderIdentity).toBe(leaderId);
    expect(follower.log).toContain(`leader ${leaderId}`);
    expect(writes.filter((w) => !w.includes(` ${leaderId} ${leaderId}`))).toEqual([]);
    await leader.elector.stop();
    await follower.elector.stop();
  });

  it('hands over at once when the leader releases the lease on stop, counting the transition', async () => {
    const a = candidate('a', { ...steady, releaseOnStop: true });
    a.elector.start();
    await until(() => a.elector.isLeader(), 'a leads');
    const b = candidate('b', steady);
    b.elector.start();
    await new Promise((r) => setTimeout(r, 300));
    expect(b.elector.isLeader()).toBe(false);
    await a.elector.stop();
    expect(a.log).toEqual(['leader a', 'started', 'stopped']);
    await until(() => b.elector.isLeader(), 'b takes over');
    // b took the released record (holder empty), not one it had to watch expire.
    expect(writes.slice(-2)).toEqual(['update a (released)', 'update b b']);
    expect(lease?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    await b.elector.stop();
  });

  it('stops leading when it cannot renew, and another takes the expired lease', async () => {
    const a = candidate('a');
    a.elector.start();
    await until(() => a.elector.isLeader(), 'a leads');
    const b = candidate('b');
    b.elector.start();
    failing.add('a');
    await until(() => a.log.includes('stopped'), 'a gives up after its renew deadline');
    await until(() => b.elector.isLeader(), 'b takes the lease once it expired');
    expect(lease?.spec?.holderIdentity).toBe('b');
    await a.elector.stop();
    await b.elector.stop();
  });

  it('lets only one of two simultaneous rounds win (AlreadyExists / Conflict for the other)', async () => {
    const a = candidate('a');
    const b = candidate('b');
    const results = await Promise.all([a.elector.tryAcquireOrRenew(), b.elector.tryAcquireOrRenew()]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(writes).toHaveLength(1);
  });

  it('refuses timings that cannot work and an empty identity', () => {
    const client = new KubeClient({ server: 'http://127.0.0.1:1', insecureSkipTlsVerify: false, credentials: {}, namespace: 'x', context: 'x', files: [] });
    clients.push(client);
    expect(() => new LeaderElector(client, { namespace: 'x', name: 'l', identity: 'a', leaseDurationSeconds: 5, renewDeadlineSeconds: 10 })).toThrow(/leaseDurationSeconds > renewDeadlineSeconds > retryPeriodSeconds > 0/);
    expect(() => new LeaderElector(client, { namespace: 'x', name: 'l', identity: '' })).toThrow(/non-empty identity/);
  });
});
