/**
 * The StatefulSet and DaemonSet controllers over HTTP, on a real SQLite file and a real etcd, pods
 * driven through their status: ordered creation (one at a time, each after its predecessor is Ready)
 * with stable names, hostnames and claims; Parallel; scale-down from the highest ordinal; a rolling
 * update down to the partition with ControllerRevisions; one daemon pod per node that should run it
 * (node selector, taints and tolerations), following nodes as they come and go, and a rolling update.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, freshNamespace, livePods, merge, runningStatus, setPodStatus, startWorkloadServer, type Call } from '../support/workload-helpers.js';
import { until } from '../../testing/src/poll.js';

const apps = (ns: string, plural: string, name = '') => `/apis/apps/v1/namespaces/${ns}/${plural}${name ? `/${name}` : ''}`;
const names = (pods: any[]) => pods.map((p) => p.metadata.name).sort();
const isReady = (p: any) => (p.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');

const statefulSet = (name: string, replicas: number, extra: Record<string, unknown> = {}, image = 'nginx:1') => ({
  apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name },
  spec: {
    replicas, serviceName: name, selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
    ...extra,
  },
});

const node = (name: string, labels: Record<string, string> = {}, taints: unknown[] = []) => ({
  apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } },
  spec: { taints }, status: { conditions: [{ type: 'Ready', status: 'True' }] },
});

describe.each(['sqlite', 'etcd'] as const)('StatefulSets and DaemonSets on %s', (backend) => {
  let call: Call;
  let close: () => Promise<void>;
  beforeAll(async () => ({ call, close } = await startWorkloadServer(backend)), 60_000);
  afterAll(async () => close?.());

  const readyOne = (ns: string, name: string) => setPodStatus(call, ns, name, runningStatus(true, '127.0.0.1'));
  const getSet = async (ns: string, name: string) => (await call('GET', apps(ns, 'statefulsets', name))).json;

  it('creates pods in order, each after the one before is Ready, with stable identities and claims', async () => {
    const ns = await freshNamespace(call, 'sts');
    const claims = { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }] };
    expect((await call('POST', apps(ns, 'statefulsets'), { body: statefulSet('web', 3, claims) })).status).toBe(201);
    for (const [i, expected] of [['web-0'], ['web-0', 'web-1'], ['web-0', 'web-1', 'web-2']].entries()) {
      const pods = await until(`${i + 1} pods`, async () => {
        const all = await livePods(call, ns, 'app=web');
        return all.length === i + 1 && all;
      }, { timeoutMs: 15_000 });
      // The next pod waits: the newest one is not Ready yet.
      await new Promise((r) => setTimeout(r, 150));
      expect(names(await livePods(call, ns, 'app=web'))).toEqual(expected);
      await readyOne(ns, `web-${i}`);
      const pod = pods.find((p: any) => p.metadata.name === `web-${i}`);
      expect(pod.spec).toMatchObject({ hostname: `web-${i}`, subdomain: 'web' });
      expect(pod.metadata.labels).toMatchObject({ 'statefulset.kubernetes.io/pod-name': `web-${i}`, 'apps.kubernetes.io/pod-index': String(i) });
      expect(pod.spec.volumes).toContainEqual({ name: 'data', persistentVolumeClaim: { claimName: `data-web-${i}` } });
    }
    const set = await until('three ready replicas', async () => {
      const s = await getSet(ns, 'web');
      return s.status?.readyReplicas === 3 && s.status?.availableReplicas === 3 && s;
    }, { timeoutMs: 15_000 });
    expect(set.status).toMatchObject({ replicas: 3, currentReplicas: 3, updatedReplicas: 3, collisionCount: 0, observedGeneration: 1 });
    expect(set.status.currentRevision).toBe(set.status.updateRevision);
    const revisions = (await call('GET', apps(ns, 'controllerrevisions'))).json.items;
    expect(revisions.map((r: any) => [r.metadata.name, r.revision])).toEqual([[set.status.updateRevision, 1]]);
    expect(revisions[0].data.spec.template.$patch).toBe('replace');
    const pvcs = (await call('GET', `/api/v1/namespaces/${ns}/persistentvolumeclaims`)).json.items;
    expect(names(pvcs)).toEqual(['data-web-0', 'data-web-1', 'data-web-2']);
    expect(await eventsOf(call, ns, 'StatefulSet', 'web')).toContain('SuccessfulCreate: create Pod web-0 in StatefulSet web successful');

    // A rolling update from the highest ordinal down to the partition (1): web-0 keeps the old revision.
    await merge(call, apps(ns, 'statefulsets', 'web'), { spec: { updateStrategy: { rollingUpdate: { partition: 1 } }, template: { spec: { containers: [{ name: 'app', image: 'nginx:2' }] } } } });
    const updated = await until('two pods updated', async () => {
      for (const p of await livePods(call, ns, 'app=web')) if (!isReady(p)) await readyOne(ns, p.metadata.name);
      const s = await getSet(ns, 'web');
      return s.status?.updatedReplicas === 2 && s.status?.readyReplicas === 3 && s;
    }, { timeoutMs: 15_000 });
    const images = Object.fromEntries((await livePods(call, ns, 'app=web')).map((p) => [p.metadata.name, p.spec.containers[0].image]));
    expect(images).toEqual({ 'web-0': 'nginx:1', 'web-1': 'nginx:2', 'web-2': 'nginx:2' });
    expect(updated.status.currentRevision).not.toBe(updated.status.updateRevision);
    expect((await call('GET', apps(ns, 'controllerrevisions'))).json.items.map((r: any) => r.revision).sort()).toEqual([1, 2]);

    // Scale down: the highest ordinals go first.
    await merge(call, `${apps(ns, 'statefulsets', 'web')}/scale`, { spec: { replicas: 1 } });
    await until('only web-0 left', async () => names(await livePods(call, ns, 'app=web')).join() === 'web-0', { timeoutMs: 15_000 });
  });

  it('creates every pod at once with Parallel', async () => {
    const ns = await freshNamespace(call, 'par');
    await call('POST', apps(ns, 'statefulsets'), { body: statefulSet('db', 3, { podManagementPolicy: 'Parallel' }) });
    await until('three pods at once', async () => names(await livePods(call, ns, 'app=db')).join() === 'db-0,db-1,db-2', { timeoutMs: 15_000 });
  });

  it('runs one pod per node that should run it, following nodes, taints and selectors', async () => {
    const ns = await freshNamespace(call, 'ds');
    const nodes = [node(`${ns}-a`, { disk: 'ssd' }), node(`${ns}-b`, { disk: 'ssd' }), node(`${ns}-c`, { disk: 'hdd' }),
      node(`${ns}-d`, { disk: 'ssd' }, [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }])];
    for (const n of nodes) expect((await call('POST', '/api/v1/nodes', { body: n })).status).toBe(201);
    const ds = {
      apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: { metadata: { labels: { app: 'agent' } }, spec: { nodeSelector: { disk: 'ssd' }, containers: [{ name: 'app', image: 'agent:1' }] } },
      },
    };
    expect((await call('POST', apps(ns, 'daemonsets'), { body: ds })).status).toBe(201);
    const target = (p: any) => p.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values[0];
    const onNodes = async () => (await livePods(call, ns, 'app=agent')).map(target).sort();
    // The tainted node and the one with another disk get none.
    await until('pods on a and b', async () => (await onNodes()).join() === `${ns}-a,${ns}-b`, { timeoutMs: 15_000 });
    const [pod] = await livePods(call, ns, 'app=agent');
    expect(pod.spec.tolerations).toContainEqual({ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' });
    expect(pod.metadata.labels['controller-revision-hash']).toMatch(/^\w+$/);
    for (const p of await livePods(call, ns, 'app=agent')) await setPodStatus(call, ns, p.metadata.name, runningStatus(true));
    const status = await until('two available', async () => {
      const d = (await call('GET', apps(ns, 'daemonsets', 'agent'))).json;
      return d.status?.numberAvailable === 2 && d.status;
    }, { timeoutMs: 15_000 });
    expect(status).toMatchObject({ currentNumberScheduled: 2, numberMisscheduled: 0, desiredNumberScheduled: 2, numberReady: 2, updatedNumberScheduled: 2 });

    // A tolerating template reaches the tainted node; a new node gets its pod; a deleted node loses it.
    await merge(call, apps(ns, 'daemonsets', 'agent'), { spec: { template: { spec: { tolerations: [{ key: 'dedicated', operator: 'Exists' }] } } } });
    await call('POST', '/api/v1/nodes', { body: node(`${ns}-e`, { disk: 'ssd' }) });
    await call('DELETE', `/api/v1/nodes/${ns}-a`);
    await until('pods on b, d and e, all of the new template', async () => {
      for (const p of await livePods(call, ns, 'app=agent')) if (!isReady(p)) await setPodStatus(call, ns, p.metadata.name, runningStatus(true));
      const d = (await call('GET', apps(ns, 'daemonsets', 'agent'))).json;
      return (await onNodes()).join() === `${ns}-b,${ns}-d,${ns}-e` && d.status?.updatedNumberScheduled === 3 && d.status?.numberAvailable === 3;
    }, { timeoutMs: 20_000 });
    const revisions = (await call('GET', apps(ns, 'controllerrevisions'))).json.items;
    expect(revisions.map((r: any) => r.revision).sort()).toEqual([1, 2]);
    for (const n of nodes.slice(1)) await call('DELETE', `/api/v1/nodes/${n.metadata.name}`);
    await call('DELETE', `/api/v1/nodes/${ns}-e`);
  });
});
