/**
 * The local stack as a user runs it, with real processes: `cluster-api serve` (TLS, its embedded
 * node agent and scheduler), a second node joining with `cluster-api node` and a kubeconfig from
 * `cluster-api node-credentials` (client certificate, system:node:<name>), function images in the
 * server's image store; then kubectl (get nodes, run, logs with the function's JSON lines,
 * port-forward through the node agent's tunnel), @kubernetes/client-node (nodes, pod logs), and
 * `kill -9` of the second agent: its Node goes NotReady, its pods are evicted after their
 * toleration, and its function processes do not outlive it.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as k8s from '@kubernetes/client-node';
import { KubeClient, Resources } from '@func/kube-client';
import { condition, functionImage, isReady, podUntil, probeFunction, type Obj } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const kubectlBin = '/usr/bin/kubectl';
const run = promisify(execFile);

let dir: string;
let serve: ChildProcess;
let second: ChildProcess;
let kube: KubeClient;
let env: NodeJS.ProcessEnv;
const children = new Set<ChildProcess>();

/** A cluster-api process, resolved once `ready` appears in its (JSON) log on stderr. */
function start(args: string[], ready: RegExp): Promise<{ child: ChildProcess; log: () => string }> {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let log = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      log += d.toString();
      if (ready.test(log)) resolve({ child, log: () => log });
    });
    child.once('exit', (code) => reject(new Error(`${args[0]} exited ${code}: ${log}`)));
  });
}

const kubectl = async (...args: string[]) => {
  try {
    return (await run(kubectlBin, args, { env, timeout: 30_000 })).stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`kubectl ${args.join(' ')}: ${e.stderr ?? ''}${e.stdout ?? ''}`);
  }
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'node-e2e-'));
  const data = join(dir, 'data');
  await functionImage(join(data, 'images'), probeFunction, 'probe:v1');
  ({ child: serve } = await start(['serve', '--port', '0', '--data-dir', data, '--node-name', 'main', '--node-monitor-grace-period', '3', '--node-lease-duration-seconds', '2'], /"msg":"listening"/));
  env = { PATH: process.env.PATH, HOME: dir, KUBECONFIG: join(data, 'kubeconfig.yaml'), KUBECACHEDIR: join(dir, 'cache') };
  kube = KubeClient.fromKubeconfig({ kubeconfig: join(data, 'kubeconfig.yaml') });
  await run(process.execPath, [cli, 'node-credentials', '--data-dir', data, '--name', 'second', '--address', '127.0.0.1', '--out', join(dir, 'second.kubeconfig')]);
  const nodeArgs = ['--data-dir', join(dir, 'second'), '--images', join(data, 'images'), '--address', '127.0.0.1', '--kubelet-port', '0', '--node-lease-duration-seconds', '2'];
  ({ child: second } = await start(['node', '--kubeconfig', join(dir, 'second.kubeconfig'), ...nodeArgs], /"msg":"node agent running"/));
}, 180_000);

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 200));
  rmSync(dir, { recursive: true, force: true });
});

describe.runIf(existsSync(kubectlBin))('two nodes, kubectl and client-node', () => {
  it('shows both nodes Ready, the second one authenticated by its client certificate', async () => {
    const out = await until('two Ready nodes', async () => {
      const o = await kubectl('get', 'nodes');
      return /^main\s+Ready/m.test(o) && /^second\s+Ready/m.test(o) && o;
    });
    expect(out).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/m);
    const whoami = await kubectl('auth', 'whoami', '--kubeconfig', join(dir, 'second.kubeconfig'), '-o', 'jsonpath={.status.userInfo}');
    expect(JSON.parse(whoami)).toEqual({ username: 'system:node:second', groups: ['system:nodes', 'system:authenticated'] });
  });

  it('spreads function pods over both nodes; each runs, logs JSON and answers', async () => {
    const pods = ['fn-0', 'fn-1', 'fn-2', 'fn-3'];
    for (const name of pods) await kubectl('run', name, '--image=probe:v1', '--labels=app=fn', '--env=FUNC_LOG_LEVEL=info', '--overrides={"spec":{"tolerations":[{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":2}]}}');
    const running = await Promise.all(pods.map((name) => podUntil(kube, name, 'Ready', isReady, 60_000)));
    expect(new Set(running.map((p) => p.spec.nodeName))).toEqual(new Set(['main', 'second']));
    const logs = await until('the function\'s listening line', async () => {
      const out = await kubectl('logs', 'fn-0');
      return /"msg":"listening"/.test(out) && out;
    });
    expect(JSON.parse(logs.split('\n').find((l) => l.includes('"listening"'))!)).toMatchObject({ level: 30, port: 8080, msg: 'listening' });
  }, 120_000);

  it('port-forwards to a function pod on the other node through its agent', async () => {
    const onSecond = (await kube.list<Obj>(Resources.pods, { labelSelector: 'app=fn' })).items.find((p) => p.spec.nodeName === 'second')!;
    const pf = spawn(kubectlBin, ['port-forward', `pod/${onSecond.metadata!.name}`, '0:8080'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(pf);
    try {
      let out = '';
      pf.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      const port = await until('kubectl forwarding', () => /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out)?.[1]);
      expect(await fetch(`http://127.0.0.1:${port}/`).then((r) => r.text())).toBe(`hello from ${onSecond.metadata!.name}`);
    } finally {
      pf.kill('SIGTERM');
    }
  });

  it('reads nodes and pod logs with @kubernetes/client-node', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(env.KUBECONFIG!);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const nodes = await core.listNode();
    expect(nodes.items.map((n) => n.metadata?.name).sort()).toEqual(['main', 'second']);
    expect(nodes.items.every((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))).toBe(true);
    const log = await core.readNamespacedPodLog({ name: 'fn-1', namespace: 'default', tailLines: 50 });
    expect(log).toMatch(/"msg":"listening"/);
  });

  it('kill -9 of the second agent: NotReady, its pods evicted after their toleration, its processes gone', async () => {
    const victims = (await kube.list<Obj>(Resources.pods, { labelSelector: 'app=fn' })).items.filter((p) => p.spec.nodeName === 'second');
    expect(victims.length).toBeGreaterThan(0);
    second.kill('SIGKILL');
    const node = await until('second NotReady', async () => {
      const n = await kube.get<Obj>(Resources.nodes, 'second');
      return condition(n, 'Ready')?.status === 'Unknown' && n;
    }, { timeoutMs: 30_000 });
    expect(condition(node, 'Ready').message).toBe('Kubelet stopped posting node status.');
    expect(await kubectl('get', 'node', 'second')).toMatch(/^second\s+NotReady/m);
    for (const v of victims) {
      const evicted = await podUntil(kube, v.metadata!.name!, 'evicted', (p) => p.metadata.deletionTimestamp, 30_000);
      expect(condition(evicted, 'DisruptionTarget')?.reason).toBe('DeletionByTaintManager');
      await until(`${v.metadata!.name} no longer answering`, () => fetch(`http://${v.status.podIP}:8080/`).then(() => false, () => true), { timeoutMs: 10_000 });
    }
    const survivors = (await kube.list<Obj>(Resources.pods, { labelSelector: 'app=fn' })).items.filter((p) => p.spec.nodeName === 'main');
    for (const s of survivors) expect(await fetch(`http://${s.status.podIP}:8080/`).then((r) => r.text())).toBe(`hello from ${s.metadata!.name}`);
    await kubectl('run', 'after', '--image=nginx');
    expect((await podUntil(kube, 'after', 'Running', isReady)).spec.nodeName).toBe('main');
  }, 90_000);

  it('stops cleanly on SIGTERM, taking its function processes with it', async () => {
    const running = (await kube.list<Obj>(Resources.pods, { labelSelector: 'app=fn' })).items.filter((p) => p.spec.nodeName === 'main' && !p.metadata!.deletionTimestamp);
    serve.kill('SIGTERM');
    expect(await new Promise((r) => serve.once('exit', (code) => r(code)))).toBe(0);
    for (const p of running) await until(`${p.metadata!.name} stopped`, () => fetch(`http://${p.status.podIP}:8080/`).then(() => false, () => true), { timeoutMs: 10_000 });
  });
});
