/**
 * The scheduler's queue against a real cluster API, as kube-scheduler parks pods: a pod that fits
 * nowhere is not tried again while nothing changes (counted by the scheduler's writes and attempts,
 * not by time), neither because of its own PodScheduled condition or events, nor because of a Node
 * heartbeat or another writer's status update; a Node added, a Node that gains room, a pod deleted
 * or terminated, or a change to the pod itself sends it back promptly; and the event recorder keeps
 * FailedScheduling to one aggregated Event with a bounded count.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Resources, type KubeClient } from '@func/kube-client';
import { startServer, type ClusterApiServer } from '../../src/server.js';
import { MemoryStorage } from '../../src/storage/memory/memory.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import { httpClient } from '../../src/client/http.js';
import { eventsOf, plainClient, type Obj } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const BackoffMaxMs = 200;
/** Several back-off periods: a pod retried on a timer would show up in it many times over. */
const QuietWindowMs = 8 * BackoffMaxMs;
const TooManyPods = '0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.';

let server: ClusterApiServer;
let kube: KubeClient;
let scheduler: Scheduler;
/** Every write the scheduler sends (bindings, pod status patches, events), by method. */
const writes = { bind: 0, patch: 0, create: 0 };
const writeCount = () => writes.bind + writes.patch + writes.create;

/** The scheduler's own client, counting what it writes. */
function countingClient(url: string): KubeClient {
  const client = plainClient(url);
  return new Proxy(client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      if (prop === 'bind' || prop === 'patch' || prop === 'create') {
        return (...args: unknown[]) => {
          writes[prop]++;
          return value.apply(target, args);
        };
      }
      return value.bind(target);
    },
  });
}

beforeAll(async () => {
  server = await startServer({ storage: new MemoryStorage(), log: () => undefined });
  kube = plainClient(server.url);
  scheduler = new Scheduler({ client: await httpClient(countingClient(server.url)), backoffInitialMs: 50, backoffMaxMs: BackoffMaxMs });
  await scheduler.start();
});

afterAll(async () => {
  await scheduler?.stop();
  await server?.close();
});

/** Each test starts from an empty cluster: its pods and nodes, deleted all at once. */
afterEach(async () => {
  const [pods, nodes] = await Promise.all([kube.list<Obj>(Resources.pods, { namespace: 'default' }), kube.list<Obj>(Resources.nodes)]);
  const gone = () => undefined;
  await Promise.all([
    ...pods.items.map((p) => kube.delete(Resources.pods, p.metadata!.name!, { gracePeriodSeconds: 0 }).catch(gone)),
    ...nodes.items.map((n) => kube.delete(Resources.nodes, n.metadata!.name!).catch(gone)),
  ]);
});

const node = (name: string, pods = '1') =>
  kube.create<Obj>(Resources.nodes, {
    metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    status: { capacity: { cpu: '4', memory: '8Gi', pods }, conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: new Date().toISOString() }] },
  });

const pod = (name: string) => kube.create<Obj>(Resources.pods, { metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });

const boundTo = (name: string) => until(`${name} bound`, async () => (await kube.get<Obj>(Resources.pods, name)).spec.nodeName);
const parked = (name: string) => until(`${name} Unschedulable`, async () => {
  const p = await kube.get<Obj>(Resources.pods, name);
  return p.status.conditions?.find((c: Obj) => c.type === 'PodScheduled' && c.status === 'False' && c.message === TooManyPods) && p;
});

/** A full node (one pod bound) and `n` pods that fit nowhere, each tried once and parked. */
async function fullNodeWithWaiting(prefix: string, n: number): Promise<string[]> {
  await node('tiny');
  await pod('holder');
  expect(await boundTo('holder')).toBe('tiny');
  const names = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  for (const name of names) await pod(name);
  for (const name of names) await parked(name);
  await until('FailedScheduling events written', async () => {
    const events = await Promise.all(names.map((name) => eventsOf(kube, name)));
    return events.every((e) => e.some((x) => x.reason === 'FailedScheduling'));
  });
  return names;
}

/** The scheduler's attempts and writes stay where they are over a window in which nothing that matters changes. */
async function expectQuiet(during: () => Promise<void> = async () => undefined): Promise<void> {
  const attempts = scheduler.attempts;
  const written = writeCount();
  await during();
  await new Promise((r) => setTimeout(r, QuietWindowMs));
  expect({ attempts: scheduler.attempts, writes: writeCount() }).toEqual({ attempts, writes: written });
}

describe('unschedulable pods wait for a cluster event', () => {
  it('are tried once and then left alone: no attempt, no condition, no event while nothing changes', async () => {
    const names = await fullNodeWithWaiting('quiet', 5);
    const rv = await Promise.all(names.map(async (n) => (await kube.get<Obj>(Resources.pods, n)).metadata.resourceVersion));
    await expectQuiet();
    expect(await Promise.all(names.map(async (n) => (await kube.get<Obj>(Resources.pods, n)).metadata.resourceVersion))).toEqual(rv);
    for (const name of names) {
      const failed = (await eventsOf(kube, name)).filter((e) => e.reason === 'FailedScheduling');
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({ type: 'Warning', count: 1, message: TooManyPods, source: { component: 'default-scheduler' } });
    }
  });

  it('a Node heartbeat or another writer\'s status update is no reason to try again', async () => {
    const [first] = await fullNodeWithWaiting('heartbeat', 2);
    await expectQuiet(async () => {
      const tiny = await kube.get<Obj>(Resources.nodes, 'tiny');
      tiny.status.conditions[0].lastHeartbeatTime = new Date(Date.now() + 1000).toISOString();
      await kube.update(Resources.nodes, tiny, { subresource: 'status' });
      const p = await kube.get<Obj>(Resources.pods, first!);
      await kube.patch(Resources.pods, first!, { status: { conditions: [...p.status.conditions, { type: 'example.com/Checked', status: 'True' }] } }, { type: 'merge', subresource: 'status' });
    });
  });

  it('rewrites only its own condition when the verdict changes: another writer\'s condition stays', async () => {
    const [name] = await fullNodeWithWaiting('kept', 1);
    await kube.patch(Resources.pods, name!, { status: { conditions: [{ type: 'example.com/Checked', status: 'True' }] } }, { type: 'strategic', subresource: 'status' });
    await kube.create(Resources.nodes, { metadata: { name: 'tainted' }, spec: { taints: [{ key: 'gpu', effect: 'NoSchedule' }] }, status: { capacity: { cpu: '4', memory: '8Gi', pods: '110' } } });
    const pod = await until('the new verdict written', async () => {
      const p = await kube.get<Obj>(Resources.pods, name!);
      return p.status.conditions.find((c: Obj) => c.type === 'PodScheduled')?.message.startsWith('0/2 nodes are available') && p;
    });
    expect(pod.status.conditions.find((c: Obj) => c.type === 'PodScheduled').message).toBe('0/2 nodes are available: 1 Too many pods, 1 node(s) had untolerated taint {gpu: }. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.');
    expect(pod.status.conditions.find((c: Obj) => c.type === 'example.com/Checked')).toMatchObject({ status: 'True' });
  });

  it('a Node added binds them promptly, without waiting for the 5-minute flush', async () => {
    const names = await fullNodeWithWaiting('added', 3);
    await node('roomy', '110');
    for (const name of names) expect(await boundTo(name)).toBe('roomy');
  });

  it('a Node that gains room, or a pod deleted or terminated, lets the next one in', async () => {
    const names = await fullNodeWithWaiting('freed', 3);
    await kube.delete(Resources.pods, 'holder', { gracePeriodSeconds: 0 });
    const bound = await until('one waiting pod bound', async () => {
      const pods = await Promise.all(names.map((n) => kube.get<Obj>(Resources.pods, n)));
      return pods.find((p) => p.spec.nodeName === 'tiny');
    });
    const next = names.filter((n) => n !== bound.metadata.name);
    await kube.patch(Resources.pods, bound.metadata.name!, { status: { phase: 'Succeeded' } }, { type: 'merge', subresource: 'status' });
    await until('a second waiting pod bound', async () => {
      const pods = await Promise.all(next.map((n) => kube.get<Obj>(Resources.pods, n)));
      return pods.some((p) => p.spec.nodeName === 'tiny');
    });
    const tiny = await kube.get<Obj>(Resources.nodes, 'tiny');
    tiny.status.capacity.pods = '3';
    tiny.status.allocatable = { ...tiny.status.allocatable, pods: '3' };
    await kube.update(Resources.nodes, tiny, { subresource: 'status' });
    for (const name of next) expect(await boundTo(name)).toBe('tiny');
  });

  it('a change to the pod itself sends it back; its FailedScheduling stays one Event with a count', async () => {
    const [name] = await fullNodeWithWaiting('changed', 1);
    for (let i = 1; i <= 3; i++) {
      const attempts = scheduler.attempts;
      await kube.patch(Resources.pods, name!, { metadata: { labels: { round: String(i) } } }, { type: 'merge' });
      await until(`attempt after label change ${i}`, () => scheduler.attempts > attempts);
    }
    const failed = await until('FailedScheduling counted 4 times', async () => {
      const events = (await eventsOf(kube, name!)).filter((e) => e.reason === 'FailedScheduling');
      return events.length === 1 && events[0]!.count === 4 && events;
    });
    expect(failed[0]).toMatchObject({ message: TooManyPods, type: 'Warning' });
    await expectQuiet();
  });
});

describe('podMaxInUnschedulablePodsDuration', () => {
  it('tries a parked pod again once it has waited that long, with no event, and parks it again', async () => {
    const flushing = new Scheduler({ client: await httpClient(plainClient(server.url)), schedulerName: 'flushing', backoffInitialMs: 50, backoffMaxMs: BackoffMaxMs, flushMs: 300 });
    await flushing.start();
    try {
      await node('tiny', '0');
      await kube.create<Obj>(Resources.pods, { metadata: { name: 'flushed' }, spec: { schedulerName: 'flushing', containers: [{ name: 'c', image: 'nginx' }] } });
      await until('first attempt', () => flushing.attempts >= 1);
      const after = flushing.attempts;
      await until('tried again after the flush period', () => flushing.attempts >= after + 2);
      const failed = await until('FailedScheduling counted', async () => {
        const e = (await eventsOf(kube, 'flushed')).filter((x) => x.reason === 'FailedScheduling');
        return e.length === 1 && e[0]!.count >= 3 && e[0];
      });
      expect(failed).toMatchObject({ source: { component: 'flushing' }, message: TooManyPods });
      expect((await kube.get<Obj>(Resources.pods, 'flushed')).spec.nodeName).toBeUndefined();
    } finally {
      await flushing.stop();
    }
  });
});

describe('the event recorder\'s spam filter', () => {
  it('holds one pod\'s FailedScheduling to a burst of 25, however often it is tried', async () => {
    const [name] = await fullNodeWithWaiting('spam', 1);
    for (let i = 1; i <= 30; i++) {
      const attempts = scheduler.attempts;
      await kube.patch(Resources.pods, name!, { metadata: { labels: { round: String(i) } } }, { type: 'merge' });
      await until(`attempt ${i}`, () => scheduler.attempts > attempts);
    }
    const failed = await until('FailedScheduling counted 25 times', async () => {
      const events = (await eventsOf(kube, name!)).filter((e) => e.reason === 'FailedScheduling');
      return events.length === 1 && events[0]!.count === 25 && events;
    });
    await new Promise((r) => setTimeout(r, QuietWindowMs));
    expect((await eventsOf(kube, name!)).filter((e) => e.reason === 'FailedScheduling')).toEqual(failed);
  });
});
