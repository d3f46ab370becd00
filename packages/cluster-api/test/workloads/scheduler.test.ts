/**
 * The scheduler against a real cluster API, with Nodes created through the API (no agents, as
 * kube-scheduler's integration tests do): nodeName, nodeSelector, required and preferred node
 * affinity, taints and tolerations, unschedulable nodes, requests against allocatable (pods already
 * bound counted), spreading, kube-scheduler's FailedScheduling message and PodScheduled condition,
 * and a retry once a fitting node appears. It runs as `serve` runs it: in process, authorized as
 * `system:kube-scheduler`; an identity that may not bind leaves the pod unbound.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Resources, type KubeClient } from '@func/kube-client';
import { startServer } from '../../src/server.js';
import { MemoryStorage } from '../../src/storage/memory/memory.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import { inProcessClient } from '../../src/client/in-process.js';
import { ControllerManagerUser } from '../../src/controllers/index.js';
import { SchedulerUser } from '../../src/serve/embedded.js';
import { fitErrorMessage } from '../../src/scheduler/filters.js';
import { eventsOf, plainClient, type Obj } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

let server: Awaited<ReturnType<typeof startServer>>;
let kube: KubeClient;
let scheduler: Scheduler;

beforeAll(async () => {
  server = await startServer({ storage: new MemoryStorage(), log: () => undefined });
  kube = plainClient(server.url);
  scheduler = new Scheduler({ client: inProcessClient(server.registry, server.authorizer, SchedulerUser), backoffInitialMs: 100, backoffMaxMs: 500 });
  await scheduler.start();
});

afterAll(async () => {
  await scheduler?.stop();
  await server?.close();
});

afterEach(async () => {
  for (const p of (await kube.list<Obj>(Resources.pods, { namespace: 'default' })).items) await kube.delete(Resources.pods, p.metadata!.name!, { gracePeriodSeconds: 0 }).catch(() => undefined);
  for (const n of (await kube.list<Obj>(Resources.nodes)).items) await kube.delete(Resources.nodes, n.metadata!.name!).catch(() => undefined);
});

const node = (name: string, extra: { labels?: Record<string, string>; taints?: object[]; cpu?: string; pods?: string; unschedulable?: boolean } = {}) =>
  kube.create(Resources.nodes, {
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...extra.labels } },
    spec: { ...(extra.taints ? { taints: extra.taints } : {}), ...(extra.unschedulable ? { unschedulable: true } : {}) },
    status: { capacity: { cpu: extra.cpu ?? '4', memory: '8Gi', pods: extra.pods ?? '110' }, conditions: [{ type: 'Ready', status: 'True' }] },
  });

const pod = (name: string, spec: object = {}, labels: Record<string, string> = {}) =>
  kube.create(Resources.pods, { metadata: { name, labels }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } });

const boundTo = (name: string) => until(`${name} bound`, async () => (await kube.get<Obj>(Resources.pods, name)).spec.nodeName);
const unschedulable = (name: string) => until(`${name} Unschedulable`, async () => {
  const p = await kube.get<Obj>(Resources.pods, name);
  return p.status.conditions?.find((c: Obj) => c.type === 'PodScheduled' && c.status === 'False');
});

describe('placement', () => {
  it('binds to the node the selector and required affinity allow, with a Scheduled event', async () => {
    await node('a', { labels: { disk: 'hdd' } });
    await node('b', { labels: { disk: 'ssd', zone: 'z1' } });
    await pod('selected', { nodeSelector: { disk: 'ssd' } });
    expect(await boundTo('selected')).toBe('b');
    const affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'NotIn', values: ['ssd'] }] }] } } };
    await pod('affine', { affinity });
    expect(await boundTo('affine')).toBe('a');
    const scheduled = await until('Scheduled event', async () => (await eventsOf(kube, 'selected')).find((e) => e.reason === 'Scheduled'));
    expect(scheduled).toMatchObject({ type: 'Normal', message: 'Successfully assigned default/selected to b', source: { component: 'default-scheduler' } });
  });

  it('prefers the node preferred affinity weighs most, and avoids PreferNoSchedule taints', async () => {
    await node('a', { labels: { tier: 'gold' } });
    await node('b', { taints: [{ key: 'slow', effect: 'PreferNoSchedule' }] });
    await node('c');
    const preferred = { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, preference: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['gold'] }] } }] } };
    await pod('gold', { affinity: preferred });
    expect(await boundTo('gold')).toBe('a');
    for (let i = 0; i < 4; i++) await pod(`any-${i}`);
    const placed = await Promise.all([0, 1, 2, 3].map((i) => boundTo(`any-${i}`)));
    expect(placed.filter((n) => n === 'b').length).toBeLessThan(placed.filter((n) => n !== 'b').length);
  });

  it('spreads pods of one owner across nodes', async () => {
    await node('a');
    await node('b');
    for (let i = 0; i < 6; i++) await pod(`spread-${i}`, {}, { app: 'spread' });
    const placed = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => boundTo(`spread-${i}`)));
    expect(placed.filter((n) => n === 'a').length).toBe(3);
  });

  it('honours spec.nodeName: such pods are not scheduled', async () => {
    await node('a');
    await pod('pinned', { nodeName: 'elsewhere' });
    await pod('free');
    await boundTo('free');
    expect((await kube.get<Obj>(Resources.pods, 'pinned')).spec.nodeName).toBe('elsewhere');
    expect(await eventsOf(kube, 'pinned')).toEqual([]);
  });
});

describe('unschedulable pods', () => {
  it('get PodScheduled=False/Unschedulable with kube-scheduler\'s message and a FailedScheduling event', async () => {
    await node('tainted', { taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }] });
    await node('small', { cpu: '1' });
    await node('closed', { unschedulable: true });
    await pod('big', { containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '2' } } }] });
    const message = '0/3 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 1 node(s) were unschedulable. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.';
    expect(await unschedulable('big')).toMatchObject({ reason: 'Unschedulable', message, lastProbeTime: null });
    const failed = await until('FailedScheduling', async () => (await eventsOf(kube, 'big')).find((e) => e.reason === 'FailedScheduling'));
    expect(failed).toMatchObject({ type: 'Warning', message });
  });

  it('counts pods already bound against allocatable, and retries when a fitting node appears', async () => {
    await node('tiny', { pods: '1' });
    await pod('first');
    expect(await boundTo('first')).toBe('tiny');
    await pod('second');
    expect((await unschedulable('second')).message).toBe('0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.');
    await node('roomy');
    expect(await boundTo('second')).toBe('roomy');
  });

  it('tolerations let a pod onto a tainted node; nodes with no room say so when none exist', async () => {
    await pod('lonely');
    expect((await unschedulable('lonely')).message).toBe('no nodes available to schedule pods');
    await node('gpu', { taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }] });
    await pod('tolerant', { tolerations: [{ key: 'gpu', operator: 'Equal', value: 'true', effect: 'NoSchedule' }] });
    expect(await boundTo('tolerant')).toBe('gpu');
    // The new node sends `lonely` back to the scheduler too, on its own schedule: wait for that verdict.
    const retried = await until('lonely scheduled again', async () => {
      const condition = await unschedulable('lonely');
      return condition.message !== 'no nodes available to schedule pods' && condition;
    });
    expect(retried.message).toBe('0/1 nodes are available: 1 node(s) had untolerated taint {gpu: true}. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.');
  });
});

describe('its identity', () => {
  it('binds only as an identity allowed pods/binding: as kube-controller-manager (list and watch only) it is refused and says so', async () => {
    const logs: Record<string, unknown>[] = [];
    const refused = new Scheduler({ client: inProcessClient(server.registry, server.authorizer, ControllerManagerUser), schedulerName: 'no-binding', log: (e) => void logs.push(e), backoffInitialMs: 100, backoffMaxMs: 500 });
    await refused.start();
    try {
      await node('open');
      await kube.create(Resources.pods, { metadata: { name: 'refused' }, spec: { schedulerName: 'no-binding', containers: [{ name: 'c', image: 'nginx' }] } });
      const failed = await until('binding refused', () => logs.find((e) => e.msg === 'binding failed' && e.pod === 'default/refused'));
      expect(String(failed.error)).toContain('User "system:kube-controller-manager" cannot create resource "pods/binding"');
      expect((await kube.get<Obj>(Resources.pods, 'refused')).spec.nodeName).toBeUndefined();
    } finally {
      await refused.stop();
    }
  });
});

describe('fitErrorMessage', () => {
  it.each([
    [2, [{ reasons: ['Insufficient cpu', 'Insufficient memory'], resolvable: true }, { reasons: ["node(s) didn't match Pod's node affinity/selector"], resolvable: false }],
      "0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."],
    [0, [], 'no nodes available to schedule pods'],
  ])('words %i nodes as kube-scheduler', (total, refusals, message) => {
    expect(fitErrorMessage(total, refusals)).toBe(message);
  });
});
