/**
 * PodDisruptionBudgets honoured, as a user meets them with kubectl against a cluster of two node
 * agents (simulated nginx containers) and the scheduler: the disruption controller fills a budget's
 * status (`kubectl get pdb` shows ALLOWED 1 for 3 Ready pods and minAvailable 2), one eviction
 * spends it, the next is 429 with Kubernetes' message and DisruptionBudget cause until the
 * replacement is Ready, then allowed again; `kubectl drain` of a node whose pods a satisfiable budget
 * covers completes, the replacements running on the other node. Malformed budgets are 422.
 */
import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { KubeApiError, Resources, type KubeClient, type Status } from '@func/kube-client';
import { isReady, useNodeCluster, type Obj } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const kubectlBin = '/usr/bin/kubectl';
const run = promisify(execFile);
const current = useNodeCluster({ nodes: [{ name: 'node-a' }, { name: 'node-b' }] });
let kube: KubeClient;
let env: NodeJS.ProcessEnv;

const kubectl = async (...args: string[]): Promise<string> => {
  try {
    return (await run(kubectlBin, args, { env, timeout: 150_000 })).stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`kubectl ${args.join(' ')}: ${e.stderr ?? ''}${e.stdout ?? ''}`);
  }
};

const pdbPath = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';
const budget = (name: string, app: string, extra: Record<string, unknown>) => ({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec: { selector: { matchLabels: { app } }, ...extra } });
const live = async (app: string) => (await kube.list<Obj>(Resources.pods, { namespace: 'default', labelSelector: `app=${app}` })).items.filter((p) => !p.metadata.deletionTimestamp);
const readyPods = (app: string, n: number) => until(`${n} ready ${app} pods`, async () => {
  const pods = await live(app);
  return pods.length === n && pods.every(isReady) && pods;
}, { timeoutMs: 90_000, everyMs: 200 });
const pdbStatus = async (name: string): Promise<Obj> => JSON.parse(String((await kube.raw({ method: 'GET', path: `${pdbPath}/${name}` })).body));
const evict = (pod: string): Promise<{ code: number; status?: Status }> => kube.raw({ method: 'POST', path: `/api/v1/namespaces/default/pods/${pod}/eviction`, body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod } } })
  .then(() => ({ code: 201 }), (e: KubeApiError) => ({ code: e.code, status: e.status }));

beforeAll(() => {
  kube = current.kube;
  const dir = current.cluster.dir;
  const config = join(dir, 'kubeconfig');
  writeFileSync(config, [
    'apiVersion: v1', 'kind: Config', 'current-context: test',
    'clusters: [{name: test, cluster: {server: "' + current.cluster.server.url + '"}}]',
    'users: [{name: test, user: {}}]',
    'contexts: [{name: test, context: {cluster: test, user: test, namespace: default}}]',
  ].join('\n'));
  env = { PATH: process.env.PATH, HOME: dir, KUBECONFIG: config, KUBECACHEDIR: join(dir, 'cache') };
});

describe.runIf(existsSync(kubectlBin))('PodDisruptionBudgets with the disruption controller, eviction and kubectl drain', () => {
  it('fills the status of a budget over a 3-replica Deployment; one eviction goes, the next is 429 until the replacement is Ready', async () => {
    await kubectl('create', 'deployment', 'web', '--image=nginx', '--replicas=3');
    await kubectl('create', 'pdb', 'web', '--selector=app=web', '--min-available=2');
    await readyPods('web', 3);
    const table = await until('ALLOWED 1', async () => {
      const out = await kubectl('get', 'pdb', 'web');
      return /^web\s+2\s+N\/A\s+1\s/m.test(out) && out;
    }, { timeoutMs: 30_000 });
    expect(table).toMatch(/NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE/);
    const st = (await pdbStatus('web')).status;
    expect(st).toMatchObject({ currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, disruptionsAllowed: 1, observedGeneration: 1 });
    expect(st.conditions).toEqual([expect.objectContaining({ type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', observedGeneration: 1 })]);

    const [first, second] = await live('web');
    expect((await evict(first!.metadata.name!)).code).toBe(201);
    const refused = await evict(second!.metadata.name!);
    expect(refused.code).toBe(429);
    expect(refused.status).toMatchObject({ reason: 'TooManyRequests', message: "Cannot evict pod as it would violate the pod's disruption budget." });
    expect(refused.status!.details!.causes).toEqual([{ reason: 'DisruptionBudget', message: expect.stringMatching(/^The disruption budget web needs 2 healthy pods and has 2 currently$|is still being processed/) }]);
    // The replacement becomes Ready: the budget allows one again, and the second eviction goes.
    await readyPods('web', 3);
    await until('a disruption allowed again', async () => (await pdbStatus('web')).status.disruptionsAllowed === 1, { timeoutMs: 30_000 });
    expect((await evict(second!.metadata.name!)).code).toBe(201);
    const spent = (await pdbStatus('web')).status;
    expect(spent.disruptionsAllowed).toBe(0);
    expect(spent.conditions[0]).toMatchObject({ status: 'False', reason: 'InsufficientPods' });
    await readyPods('web', 3);
  }, 240_000);

  it('counts a percentage against the Deployment\'s scale; two budgets over one pod refuse its eviction with 500', async () => {
    await kube.raw({ method: 'POST', path: pdbPath, body: budget('web-pct', 'web', { maxUnavailable: '34%' }) }).catch(() => undefined);
    // Two budgets over the same pods: the eviction subresource refuses, as kube-apiserver does.
    const pod = (await readyPods('web', 3))[0]!.metadata.name!;
    const two = await evict(pod);
    expect(two.code).toBe(500);
    expect(two.status!.message).toMatch(/^This pod has more than one PodDisruptionBudget, which the eviction subresource does not support\./);
    const st = await until('the percentage budget synced', async () => {
      const s = (await pdbStatus('web-pct')).status;
      return s.expectedPods === 3 && s;
    }, { timeoutMs: 30_000 });
    expect(st).toMatchObject({ expectedPods: 3, desiredHealthy: 1, currentHealthy: 3, disruptionsAllowed: 2 });
    await kubectl('delete', 'pdb', 'web-pct');
  }, 120_000);

  it('refuses malformed budgets with 422', async () => {
    const bad = [
      { minAvailable: 2, maxUnavailable: 1 },
      { minAvailable: '120%' },
      { minAvailable: -1 },
      { maxUnavailable: 'half' },
      { minAvailable: 1, unhealthyPodEvictionPolicy: 'Sometimes' },
      { minAvailable: 1, selector: { matchExpressions: [{ key: 'app', operator: 'Near' }] } },
    ];
    for (const extra of bad) {
      const err = await kube.raw({ method: 'POST', path: pdbPath, body: budget('bad', 'web', extra) }).then(() => undefined, (e: KubeApiError) => e);
      expect(err?.code, JSON.stringify(extra)).toBe(422);
      expect(JSON.stringify(err?.status)).not.toMatch(/at .*\.js|Error:/);
    }
    const badBody = await kube.raw({ method: 'POST', path: '/api/v1/namespaces/default/pods/x/eviction', body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'y' } } }).then(() => undefined, (e: KubeApiError) => e);
    expect(badBody?.code).toBe(400);
  });

  it('drains a node whose pods a satisfiable budget covers: kubectl drain completes, the pods run on the other node', async () => {
    const pods = await readyPods('web', 3);
    const node = pods[0]!.spec.nodeName as string;
    const other = node === 'node-a' ? 'node-b' : 'node-a';
    await until('the budget allows a disruption', async () => (await pdbStatus('web')).status.disruptionsAllowed === 1, { timeoutMs: 30_000 });
    const out = await kubectl('drain', node, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=120s');
    expect(out).toMatch(new RegExp(`node/${node} drained`));
    const after = await readyPods('web', 3);
    expect(after.every((p) => p.spec.nodeName === other)).toBe(true);
    expect(await kubectl('get', 'node', node)).toMatch(/SchedulingDisabled/);
    await kubectl('uncordon', node);
  }, 240_000);
});
