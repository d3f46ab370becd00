/**
 * The Done-when of the autoscaling issue for the HorizontalPodAutoscaler, with the real kubectl
 * 1.32 against an API server and a node agent running function pods as processes: `kubectl
 * autoscale deploy web --cpu-percent=50 --min=1 --max=3` creates the autoscaler; pods that burn CPU
 * (the burn fixture, a fifth of a CPU each against a request of 100m) scale the Deployment to 3,
 * and once they idle it goes back to 1 after the stabilization window the test sets through
 * `behavior`; `kubectl top pod`, `top pod --containers` and `top node` print the usage the node
 * measured. The metrics API scrapes every second and the autoscaler syncs every second here.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '@func/kube-client';
import { burnFunction, eventsOf, functionImage, privatePodAddresses, useNodeCluster, type Obj } from '../support/node-fixtures.js';
import { runKubectl } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

const kubectlBin = '/usr/bin/kubectl';
const current = useNodeCluster({ ...privatePodAddresses(), autoscaling: { metricResolutionMs: 1000, horizontalPodAutoscaler: { syncPeriodMs: 1000 } } });
let work: string;
let env: NodeJS.ProcessEnv;
let burnFile: string;

const kubectl = (...args: string[]) => runKubectl(kubectlBin, env, [`--server=${current.cluster.server.url}`, ...args]);
const deployment = () => current.kube.get<Obj>(Resources.deployments, 'web', { namespace: 'default' });
const hpa = () => current.kube.get<Obj>({ group: 'autoscaling', version: 'v2', plural: 'horizontalpodautoscalers', kind: 'HorizontalPodAutoscaler', namespaced: true }, 'web', { namespace: 'default' });

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'hpa-kubectl-'));
  env = { PATH: process.env.PATH, HOME: work, KUBECACHEDIR: join(work, 'cache') };
  burnFile = join(work, 'burn');
  await functionImage(current.cluster.images, burnFunction, 'burn:v1');
}, 180_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.runIf(existsSync(kubectlBin))('kubectl autoscale and kubectl top over the metrics API', () => {
  it('scales a CPU-busy Deployment up to --max and back to --min after the stabilization window', async () => {
    const manifest = {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' },
      spec: {
        replicas: 1, selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'fn', image: 'burn:v1', env: [{ name: 'BURN_FILE', value: burnFile }], resources: { requests: { cpu: '100m', memory: '32Mi' } } }] } },
      },
    };
    writeFileSync(join(work, 'web.json'), JSON.stringify(manifest));
    expect((await kubectl('apply', '-f', join(work, 'web.json'))).code).toBe(0);

    // `kubectl top` prints what the node measured.
    // (Until the pod has settled: a function's start-up costs CPU for a moment.)
    const topPod = await until('kubectl top pod lists the pod, idle', async () => {
      const r = await kubectl('top', 'pod', '-l', 'app=web');
      const m = /^web-\S+\s+(\d+)m\s+\d+Mi\s*$/m.exec(r.stdout);
      return r.code === 0 && m && Number(m[1]) < 20 ? r : undefined;
    }, { timeoutMs: 90_000 });
    expect(topPod.stdout).toMatch(/^NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
    const containers = await kubectl('top', 'pod', '-l', 'app=web', '--containers');
    expect(containers.code, containers.stderr).toBe(0);
    expect(containers.stdout).toMatch(/^web-\S+\s+fn\s+\d+m\s+\d+Mi\s*$/m);
    const topNode = await kubectl('top', 'node');
    expect(topNode.code, topNode.stderr).toBe(0);
    expect(topNode.stdout).toMatch(/^node-a\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%\s*$/m);

    const autoscale = await kubectl('autoscale', 'deploy', 'web', '--cpu-percent=50', '--min=1', '--max=3');
    expect(autoscale.stderr).toBe('');
    expect(autoscale.stdout.trim()).toBe('horizontalpodautoscaler.autoscaling/web autoscaled');
    // Back down within seconds once idle, rather than kube-controller-manager's default 5 minutes.
    const patched = await kubectl('patch', 'hpa', 'web', '--type=merge', '-p', JSON.stringify({ spec: { behavior: { scaleDown: { stabilizationWindowSeconds: 3 } } } }));
    expect(patched.code, patched.stderr).toBe(0);
    expect((await hpa()).spec.behavior.scaleDown).toEqual({ stabilizationWindowSeconds: 3, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });

    // Idle at one pod: the autoscaler measures it and keeps it.
    const idle = await until('the autoscaler measures the idle pod', async () => {
      const h = await hpa();
      return h.status?.currentMetrics?.[0]?.resource?.current?.averageUtilization !== undefined ? h : undefined;
    }, { timeoutMs: 90_000 });
    expect(idle.status.currentMetrics[0].resource.current.averageUtilization).toBeLessThan(50);
    expect((await deployment()).spec.replicas).toBe(1);

    // Busy: 3 pods (the fifth of a CPU each is 200 % of the request, four times the target; --max caps it).
    writeFileSync(burnFile, '');
    await until('the Deployment is scaled to 3', async () => ((await deployment()).spec.replicas === 3 ? true : undefined), { timeoutMs: 120_000 });
    const up = await until('the autoscaler reports 3', async () => {
      const h = await hpa();
      return h.status?.desiredReplicas === 3 ? h : undefined;
    }, { timeoutMs: 30_000 });
    expect(up.status.lastScaleTime).toBeTypeOf('string');
    const conditions = Object.fromEntries(up.status.conditions.map((c: Obj) => [c.type, c]));
    expect(conditions.AbleToScale.status).toBe('True');
    expect(conditions.ScalingActive).toMatchObject({ status: 'True', reason: 'ValidMetricFound', message: 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)' });
    const rescales = (await eventsOf(current.kube, 'web')).filter((e) => e.reason === 'SuccessfulRescale');
    expect(rescales.map((e) => e.message)).toContain('New size: 3; reason: cpu resource utilization (percentage of request) above target');
    const listed = await kubectl('get', 'hpa', 'web');
    expect(listed.stdout).toMatch(/^web\s+Deployment\/web\s+cpu: \d+%\/50%\s+1\s+3\s+\d\s+/m);

    // Idle again: back to 1 after the window.
    rmSync(burnFile);
    await until('the Deployment is scaled back to 1', async () => ((await deployment()).spec.replicas === 1 ? true : undefined), { timeoutMs: 120_000 });
    const down = (await eventsOf(current.kube, 'web')).filter((e) => e.reason === 'SuccessfulRescale').map((e) => e.message);
    expect(down).toContain('New size: 1; reason: All metrics below target');
  }, 400_000);
});
