/**
 * The workload controllers and the node agent together, as a user drives them with kubectl against
 * `serve` (TLS, generated kubeconfig, its embedded scheduler and node): a Deployment of a function
 * image becomes 3 Running and Ready processes, `rollout status` succeeds, `kubectl logs` shows the
 * function's JSON lines, `port-forward svc/…` reaches it; a deleted pod is replaced by the ReplicaSet
 * while the old process gets SIGTERM and drains; a failing readiness probe takes a pod out of the
 * Service's endpoints; a crashing function goes to CrashLoopBackOff with a BackOff Event; and the
 * same Deployment flow with `nginx` runs simulated.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient, Resources } from '@func/kube-client';
import { resolveConfig } from '../../src/config.js';
import { serve, type Served } from '../../src/server.js';
import { functionImage, isReady, probeFunction, type Obj } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const kubectlBin = '/usr/bin/kubectl';
const run = promisify(execFile);

let dir: string;
let served: Served;
let kube: KubeClient;
let env: NodeJS.ProcessEnv;
const forwards = new Set<ChildProcess>();

const kubectl = async (...args: string[]): Promise<string> => {
  try {
    return (await run(kubectlBin, args, { env, timeout: 90_000 })).stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`kubectl ${args.join(' ')}: ${e.stderr ?? ''}${e.stdout ?? ''}`);
  }
};

const podsOf = async (app: string) =>
  (await kube.list<Obj>(Resources.pods, { namespace: 'default', labelSelector: `app=${app}` })).items.filter((p) => !p.metadata.deletionTimestamp);
const readyPods = async (app: string, n: number) =>
  until(`${n} ready ${app} pods`, async () => {
    const pods = await podsOf(app);
    return pods.length === n && pods.every((p) => p.status?.phase === 'Running' && isReady(p)) && pods;
  }, { timeoutMs: 60_000, everyMs: 200 });
const endpointsOf = async (name: string) => {
  const ep = await kube.get<Obj & { subsets?: { addresses?: { targetRef?: { name: string } }[]; notReadyAddresses?: { targetRef?: { name: string } }[] }[] }>(Resources.endpoints, name, { namespace: 'default' });
  const names = (key: 'addresses' | 'notReadyAddresses') => (ep.subsets ?? []).flatMap((s) => (s[key] ?? []).map((a) => a.targetRef?.name ?? '')).sort();
  return { ready: names('addresses'), notReady: names('notReadyAddresses') };
};
const viaProxy = async (pod: string, path: string) =>
  (await kube.raw({ method: 'GET', path: `/api/v1/namespaces/default/pods/${pod}:8080/proxy${path}`, accept: '*/*' })).body;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'workloads-on-node-'));
  const data = join(dir, 'data');
  await functionImage(join(data, 'images'), probeFunction, 'hello:v1');
  served = await serve(resolveConfig({ port: 0, dataDir: data, nodeName: 'main', broker: false }), () => {});
  env = { PATH: process.env.PATH, HOME: dir, KUBECONFIG: served.kubeconfig, KUBECACHEDIR: join(dir, 'cache') };
  kube = KubeClient.fromKubeconfig({ kubeconfig: served.kubeconfig! });
}, 180_000);

afterAll(async () => {
  for (const f of forwards) f.kill('SIGKILL');
  await served?.server.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.runIf(existsSync(kubectlBin))('Deployments of function images on the embedded node, with kubectl', () => {
  const out = () => join(dir, 'out');

  it('creates a Deployment of 3 function pods: Running and Ready, rollout status succeeds, logs are the function\'s JSON lines', async () => {
    await kubectl('create', 'deployment', 'hello', '--image=hello:v1', '--replicas=3', '--port=8080');
    // The runtime logs at warn by default: info shows its start-up lines (a second rollout, which status waits out).
    await kubectl('set', 'env', 'deployment/hello', 'FUNC_LOG_LEVEL=info');
    expect(await kubectl('rollout', 'status', 'deployment/hello', '--timeout=90s')).toMatch(/successfully rolled out/);
    const pods = await readyPods('hello', 3);
    expect(pods.every((p) => p.spec.nodeName === 'main')).toBe(true);
    const logs = await until('the listening line', async () => {
      const text = await kubectl('logs', 'deployment/hello');
      return /"msg":"listening"/.test(text) && text;
    });
    expect(JSON.parse(logs.split('\n').find((l) => l.includes('"listening"'))!)).toMatchObject({ msg: 'listening', port: 8080 });
  }, 150_000);

  it('exposes it as a Service that answers at its clusterIP and that kubectl port-forward svc/hello reaches', async () => {
    await kubectl('expose', 'deployment', 'hello', '--port=80', '--target-port=8080');
    await until('three endpoints', async () => (await endpointsOf('hello')).ready.length === 3, { timeoutMs: 30_000, everyMs: 200 });
    // serve's default --service-cluster-ip-range is loopback: the node's service proxy listens there.
    const { clusterIP } = (await kube.get<Obj>(Resources.services, 'hello', { namespace: 'default' })).spec as { clusterIP: string };
    expect(clusterIP).toMatch(/^127\.(12[89]|13\d|14[0-3])\./);
    const direct = await until('an answer at the clusterIP', async () => (await fetch(`http://${clusterIP}/`)).text(), { timeoutMs: 30_000, everyMs: 200 });
    expect(direct).toMatch(/^hello from hello-/);
    const fwd = spawn(kubectlBin, ['port-forward', 'svc/hello', ':80'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    forwards.add(fwd);
    let said = '';
    fwd.stdout!.on('data', (d: Buffer) => (said += d.toString()));
    const port = await until('the forwarded port', () => /Forwarding from 127\.0\.0\.1:(\d+)/.exec(said)?.[1], { timeoutMs: 30_000 });
    const answer = await until('an answer through the forward', async () => (await fetch(`http://127.0.0.1:${port}/`)).text());
    expect(answer).toMatch(/^hello from hello-/);
    fwd.kill();
    forwards.delete(fwd);
  }, 90_000);

  it('replaces a deleted pod through the ReplicaSet; the old process got SIGTERM and drained', async () => {
    mkdirSync(out(), { recursive: true });
    // The drain notes need a hostPath volume: a rolling update puts it in, new pods each. restricted-v2
    // forbids hostPath: the pods' ServiceAccount is granted hostmount-anyuid, as `oc adm policy
    // add-scc-to-user hostmount-anyuid -z default` grants it.
    await kubectl('create', 'rolebinding', 'default-hostmount', '--clusterrole=system:openshift:scc:hostmount-anyuid', '--serviceaccount=default:default');
    const patch = [
      { op: 'add', path: '/spec/template/spec/volumes', value: [{ name: 'out', hostPath: { path: out(), type: 'Directory' } }] },
      { op: 'add', path: '/spec/template/spec/containers/0/volumeMounts', value: [{ name: 'out', mountPath: '/out' }] },
      { op: 'add', path: '/spec/template/spec/containers/0/readinessProbe', value: { httpGet: { path: '/health/readiness', port: 8080 }, periodSeconds: 1, failureThreshold: 1 } },
    ];
    await kubectl('patch', 'deployment', 'hello', '--type=json', `-p=${JSON.stringify(patch)}`);
    expect(await kubectl('rollout', 'status', 'deployment/hello', '--timeout=90s')).toMatch(/successfully rolled out/);
    const before = await readyPods('hello', 3);
    const victim = before[0]!.metadata.name!;
    await kubectl('delete', 'pod', victim);
    const after = await readyPods('hello', 3);
    const names = after.map((p) => p.metadata.name);
    expect(names).not.toContain(victim);
    expect(names.filter((n) => before.some((b) => b.metadata.name === n))).toHaveLength(2);
    const notes = await until('the drain notes', () => {
      const text = existsSync(join(out(), 'events.log')) ? readFileSync(join(out(), 'events.log'), 'utf8') : '';
      return text.includes(`drained ${victim}`) && text;
    });
    expect(notes.indexOf(`SIGTERM ${victim}`)).toBeGreaterThanOrEqual(0);
    expect(notes.indexOf(`SIGTERM ${victim}`)).toBeLessThan(notes.indexOf(`drained ${victim}`));
  }, 200_000);

  it('takes a pod whose readiness probe fails out of the Service\'s endpoints, and back when it passes', async () => {
    const pods = await readyPods('hello', 3);
    const sick = pods[0]!.metadata.name!;
    expect(await viaProxy(sick, '/ready?set=false')).toBe('ready=false');
    const out1 = await until('the pod among notReadyAddresses', async () => {
      const ep = await endpointsOf('hello');
      return ep.notReady.includes(sick) && ep;
    }, { timeoutMs: 30_000, everyMs: 200 });
    expect(out1.ready).not.toContain(sick);
    expect(out1.ready).toHaveLength(2);
    expect(await viaProxy(sick, '/ready?set=true')).toBe('ready=true');
    await until('the pod back among addresses', async () => (await endpointsOf('hello')).ready.includes(sick), { timeoutMs: 30_000, everyMs: 200 });
  }, 90_000);

  it('puts a function that crashes on start into CrashLoopBackOff with a BackOff Event', async () => {
    await kubectl('create', 'deployment', 'crasher', '--image=hello:v1');
    await kubectl('set', 'env', 'deployment/crasher', 'CRASH_ON_START=yes');
    const pod = await until('a crasher pod in CrashLoopBackOff', async () =>
      (await podsOf('crasher')).find((p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff'), { timeoutMs: 90_000, everyMs: 250 });
    expect(pod.status.containerStatuses[0].restartCount).toBeGreaterThanOrEqual(1);
    const events = await until('the BackOff event', async () => {
      const text = await kubectl('get', 'events', '--field-selector', `involvedObject.name=${pod.metadata.name}`, '-o', 'json');
      const items = JSON.parse(text).items as { reason: string; message: string }[];
      return items.some((e) => e.reason === 'BackOff') && items;
    }, { timeoutMs: 60_000, everyMs: 500 });
    expect(events.find((e) => e.reason === 'BackOff')!.message).toMatch(/Back-off restarting failed container/);
    const rollout = await run(kubectlBin, ['rollout', 'status', 'deployment/crasher', '--timeout=2s'], { env }).then(() => 0, (e: { code?: number }) => e.code ?? -1);
    expect(rollout).not.toBe(0);
    await kubectl('delete', 'deployment', 'crasher');
  }, 150_000);

  it('runs an nginx Deployment simulated: Running and Ready, endpoints, rollout status', async () => {
    await kubectl('create', 'deployment', 'web', '--image=nginx', '--replicas=2', '--port=80');
    expect(await kubectl('rollout', 'status', 'deployment/web', '--timeout=60s')).toMatch(/successfully rolled out/);
    const pods = await readyPods('web', 2);
    await kubectl('expose', 'deployment', 'web', '--port=80');
    const ep = await until('two web endpoints', async () => {
      const e = await endpointsOf('web');
      return e.ready.length === 2 && e;
    }, { timeoutMs: 30_000, everyMs: 200 });
    expect(ep.ready).toEqual(pods.map((p) => p.metadata.name).sort());
    await kubectl('scale', 'deployment/web', '--replicas=4');
    await readyPods('web', 4);
  }, 120_000);
});
