/**
 * metrics.k8s.io/v1beta1 as clients read it: @kubernetes/client-node's `Metrics` and `topPods` /
 * `topNodes`, plain HTTP for selectors and the refusals (a bad selector, an unknown pod, a write),
 * and the node agent's /metrics/resource they come from (refused without credentials). An API
 * server and a node agent running function pods as processes; the metrics API scrapes every second.
 */
import { request as httpsRequest } from 'node:https';
import { CoreV1Api, KubeConfig, Metrics, topNodes, topPods } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '@func/kube-client';
import { isReady, podUntil, privatePodAddresses, useNodeCluster } from '../support/node-fixtures.js';
import { request } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

const current = useNodeCluster({ ...privatePodAddresses(), autoscaling: { metricResolutionMs: 1000 } });
let config: KubeConfig;
const api = (method: string, path: string, body?: unknown) => request(current.cluster.server.url, method, path, { token: null, ...(body !== undefined && { body }) });

beforeAll(async () => {
  config = new KubeConfig();
  // client-node refuses plain http unless told to skip TLS verification (there is none to skip).
  config.loadFromOptions({
    clusters: [{ name: 'c', server: current.cluster.server.url, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  await current.kube.create(Resources.pods, {
    metadata: { name: 'measured', labels: { app: 'measured' } },
    spec: { containers: [{ name: 'fn', image: 'probe:v1', resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '1', memory: '256Mi' } } }] },
  });
  await podUntil(current.kube, 'measured', 'Ready', isReady);
  await until('the pod has metrics', async () => ((await api('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/measured')).status === 200 ? true : undefined), { timeoutMs: 60_000 });
}, 120_000);

describe('the resource metrics API', () => {
  it('is discovered as metrics.k8s.io/v1beta1 with nodes and pods, get and list', async () => {
    const r = await api('GET', '/apis/metrics.k8s.io/v1beta1');
    expect(r.status).toBe(200);
    const byName = Object.fromEntries(r.json.resources.map((x: { name: string }) => [x.name, x]));
    expect(byName.nodes).toMatchObject({ kind: 'NodeMetrics', namespaced: false, verbs: ['get', 'list'] });
    expect(byName.pods).toMatchObject({ kind: 'PodMetrics', namespaced: true, verbs: ['get', 'list'] });
  });

  it('serves client-node\'s Metrics, topNodes and topPods', async () => {
    const metrics = new Metrics(config);
    const nodes = await metrics.getNodeMetrics();
    expect(nodes.items.map((n) => n.metadata.name)).toEqual(['node-a']);
    expect(nodes.items[0]!.usage.cpu).toMatch(/^\d+(n|u|m)?$/);
    expect(nodes.items[0]!.usage.memory).toMatch(/^\d+(Ki|Mi|Gi)?$/);
    const pods = await metrics.getPodMetrics('default');
    const measured = pods.items.find((p) => p.metadata.name === 'measured')!;
    expect(measured.containers.map((c) => c.name)).toEqual(['fn']);
    expect(measured.window).toMatch(/^\d+(\.\d+)?m?s$/);
    expect(Date.parse(measured.timestamp)).toBeGreaterThan(0);

    const core = config.makeApiClient(CoreV1Api);
    const top = await topPods(core, metrics, 'default');
    const row = top.find((p) => p.Pod.metadata?.name === 'measured')!;
    expect(row.Containers.map((c) => c.Container)).toEqual(['fn']);
    expect(Number(row.Memory.CurrentUsage)).toBeGreaterThan(1 << 20);
    expect(Number(row.CPU.RequestTotal)).toBe(0.1);
    const nodeTop = await topNodes(core);
    expect(nodeTop.map((n) => n.Node.metadata?.name)).toEqual(['node-a']);
  });

  it('filters by namespace, label selector and field selector; a pod without metrics is NotFound', async () => {
    const list = (path: string) => api('GET', `/apis/metrics.k8s.io/v1beta1${path}`);
    expect((await list('/namespaces/default/pods?labelSelector=app%3Dmeasured')).json.items.map((p: { metadata: { name: string } }) => p.metadata.name)).toEqual(['measured']);
    expect((await list('/namespaces/default/pods?labelSelector=app%3Dother')).json.items).toEqual([]);
    expect((await list('/namespaces/kube-system/pods')).json.items).toEqual([]);
    expect((await list('/pods?fieldSelector=metadata.name%3Dmeasured')).json.items.map((p: { metadata: { namespace: string } }) => p.metadata.namespace)).toEqual(['default']);
    const item = (await list('/namespaces/default/pods/measured')).json;
    expect(item).toMatchObject({ kind: 'PodMetrics', apiVersion: 'metrics.k8s.io/v1beta1', metadata: { name: 'measured', namespace: 'default', labels: { app: 'measured' } } });
    const missing = await list('/namespaces/default/pods/nobody');
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ kind: 'Status', reason: 'NotFound' });
    expect((await list('/namespaces/kube-system/pods/measured')).status).toBe(404);
  });

  it('refuses a malformed selector (400) and every write (405), as Status objects', async () => {
    const bad = await api('GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3D%3D%3D');
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    const badField = await api('GET', '/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=spec.nodeName%3Dx');
    expect(badField.status).toBe(400);
    const write = await api('POST', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', { apiVersion: 'metrics.k8s.io/v1beta1', kind: 'PodMetrics', metadata: { name: 'x' } });
    expect(write.status).toBe(405);
    expect(write.json.kind).toBe('Status');
    expect((await api('DELETE', '/apis/metrics.k8s.io/v1beta1/nodes/node-a')).status).toBe(405);
  });

  it('comes from the node agent\'s /metrics/resource, which an unauthenticated client is refused', async () => {
    const port = current.cluster.agents.get('node-a')!.port;
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port, path: '/metrics/resource', rejectUnauthorized: false }, (res) => (res.resume(), resolve(res.statusCode ?? 0)));
      req.once('error', reject).end();
    });
    expect(status).toBe(401);
  });
});
