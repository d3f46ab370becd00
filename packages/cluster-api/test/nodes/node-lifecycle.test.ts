/**
 * The node lifecycle controller with a short grace period: a node whose agent stops heartbeating
 * becomes Ready=Unknown ("Kubelet stopped posting node status."), is tainted unreachable (NoSchedule
 * and NoExecute with timeAdded), its pods are marked not Ready, evicted at once without a matching
 * toleration and after tolerationSeconds with one (DisruptionTarget, TaintManagerEviction), kept
 * with an unbounded one; the scheduler places new pods elsewhere. When the agent returns, the
 * taints go and it finishes the evicted pods.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources, type KubeClient } from '@func/kube-client';
import { NodeAgent } from '../../src/node/agent.js';
import { condition, eventsOf, isReady, plainClient, podUntil, startNodeCluster, type NodeCluster, type Obj } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

let cluster: NodeCluster;
let kube: KubeClient;

const heartbeat = { leaseDurationSeconds: 2, renewIntervalMs: 300, statusUpdateMs: 300, statusReportMs: 60_000 };

beforeAll(async () => {
  cluster = await startNodeCluster({
    nodes: [{ name: 'doomed', options: { heartbeat } }, { name: 'steady', options: { heartbeat } }],
    nodeControllers: { gracePeriodMs: 2000, monitorPeriodMs: 300 },
  });
  kube = cluster.kube;
}, 60_000);

afterAll(async () => {
  await cluster?.close();
});

const unreachable = (effect: string, tolerationSeconds?: number) => ({ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect, ...(tolerationSeconds === undefined ? {} : { tolerationSeconds }) });
const onDoomed = (name: string, tolerations: object[] = []) =>
  kube.create(Resources.pods, { metadata: { name }, spec: { nodeName: 'doomed', tolerations, containers: [{ name: 'c', image: 'nginx' }] } });

describe('a node that stops heartbeating', () => {
  it('becomes Unknown, is tainted, and its pods are evicted per their tolerations', async () => {
    await onDoomed('intolerant');
    await onDoomed('patient', [unreachable('NoExecute', 2)]);
    await onDoomed('forever', [unreachable('NoExecute')]);
    for (const name of ['intolerant', 'patient', 'forever']) await podUntil(kube, name, 'Ready', isReady);

    // The agent goes away without a word (its processes with it); its Node and pods stay behind.
    await cluster.agents.get('doomed')!.stop();
    cluster.agents.delete('doomed');

    const node = await until('doomed Unknown', async () => {
      const n = await kube.get<Obj>(Resources.nodes, 'doomed');
      return condition(n, 'Ready')?.status === 'Unknown' && n.spec.taints?.length === 2 && n;
    }, { timeoutMs: 30_000 });
    expect(condition(node, 'Ready')).toMatchObject({ reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' });
    expect(node.status.conditions.filter((c: Obj) => c.status === 'Unknown').map((c: Obj) => c.type).sort()).toEqual(['DiskPressure', 'MemoryPressure', 'PIDPressure', 'Ready']);
    expect(node.spec.taints).toEqual([
      { key: 'node.kubernetes.io/unreachable', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: expect.any(String) },
    ]);

    const evicted = await podUntil(kube, 'intolerant', 'evicted', (p) => p.metadata.deletionTimestamp, 10_000);
    expect(condition(evicted, 'DisruptionTarget')).toMatchObject({ status: 'True', reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint' });
    expect(condition(evicted, 'Ready').status).toBe('False');
    expect((await eventsOf(kube, 'intolerant')).find((e) => e.reason === 'TaintManagerEviction')?.message).toBe('Marking for deletion Pod default/intolerant');
    expect((await kube.get<Obj>(Resources.pods, 'patient')).metadata.deletionTimestamp).toBeUndefined();

    const later = await podUntil(kube, 'patient', 'evicted after its toleration', (p) => p.metadata.deletionTimestamp, 15_000);
    const added = Date.parse(node.spec.taints[1].timeAdded);
    expect(Date.parse(condition(later, 'DisruptionTarget').lastTransitionTime) - added).toBeGreaterThanOrEqual(1000);
    expect((await kube.get<Obj>(Resources.pods, 'forever')).metadata.deletionTimestamp).toBeUndefined();
    const notReady = (await eventsOf(kube, 'doomed', 'default')).find((e) => e.reason === 'NodeNotReady');
    expect(notReady?.message).toBe('Node doomed status is now: NodeNotReady');
  }, 60_000);

  it('gets no new pods: the scheduler places them on the healthy node', async () => {
    await kube.create(Resources.pods, { metadata: { name: 'newcomer' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    const pod = await podUntil(kube, 'newcomer', 'Running', isReady);
    expect(pod.spec.nodeName).toBe('steady');
  });

  it('is Ready again when its agent returns, which finishes the evicted pods and runs the rest', async () => {
    const agent = new NodeAgent({ kube: plainClient(cluster.server.url), name: 'doomed', dataDir: `${cluster.dir}/doomed`, images: cluster.images, heartbeat });
    await agent.start();
    cluster.agents.set('doomed', agent);
    const node = await until('doomed Ready', async () => {
      const n = await kube.get<Obj>(Resources.nodes, 'doomed');
      return condition(n, 'Ready')?.status === 'True' && !n.spec.taints && n;
    }, { timeoutMs: 30_000 });
    expect(condition(node, 'Ready').reason).toBe('KubeletReady');
    for (const name of ['intolerant', 'patient']) await until(`${name} gone`, () => kube.get(Resources.pods, name).then(() => false, () => true));
    await podUntil(kube, 'forever', 'Ready again', isReady);
  }, 60_000);
});
