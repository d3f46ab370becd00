/**
 * The scheduler both ways: in `serve`, in process (as system:kube-scheduler); and as
 * `cluster-api scheduler --kubeconfig …` beside a `serve --disable scheduler`, over HTTP with the
 * kubeconfig's credentials. Either way a pod is bound to the embedded node with a Scheduled event
 * from default-scheduler.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeClient, Resources, type KubeObject } from '@func/kube-client';
import { cli, startServe, type ServeProcess } from './process.js';
import { until } from '../../testing/src/poll.js';

type Obj = KubeObject & { spec?: { nodeName?: string }; reason?: string; source?: { component?: string }; involvedObject?: { name?: string } };

let serve: ServeProcess | undefined;
let scheduler: ChildProcess | undefined;

afterEach(async () => {
  if (scheduler && scheduler.exitCode === null) await new Promise((r) => (scheduler!.once('exit', r), scheduler!.kill('SIGTERM')));
  scheduler = undefined;
  await serve?.close();
  serve = undefined;
});

const kubeconfig = (s: ServeProcess) => join(s.dir, 'data', 'kubeconfig.yaml');

/** A pod, then its node once bound and the Scheduled event about it. */
async function placed(s: ServeProcess, name: string): Promise<{ node: string; event: Obj }> {
  const kube = KubeClient.fromKubeconfig({ kubeconfig: kubeconfig(s) });
  try {
    await kube.create(Resources.pods, { metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }, { namespace: 'default' });
    const node = await until(`${name} bound`, async () => (await kube.get<Obj>(Resources.pods, name, { namespace: 'default' })).spec?.nodeName, { timeoutMs: 60_000 });
    const event = await until(`Scheduled event of ${name}`, async () =>
      (await kube.list<Obj>(Resources.events, { namespace: 'default' })).items.find((e) => e.involvedObject?.name === name && e.reason === 'Scheduled'), { timeoutMs: 60_000 });
    return { node, event };
  } finally {
    kube.close();
  }
}

describe('the scheduler, in process and as a role command', () => {
  it('in serve: binds a pod to the embedded node', async () => {
    serve = await startServe(['--storage', 'memory:', '--disable', 'broker']);
    const { node, event } = await placed(serve, 'inside');
    expect(node).toBeTruthy();
    expect(event.source?.component).toBe('default-scheduler');
  });

  it('cluster-api scheduler beside serve --disable scheduler: binds over HTTP, the pod made before it ran included', async () => {
    serve = await startServe(['--storage', 'memory:', '--disable', 'scheduler,broker']);
    const kube = KubeClient.fromKubeconfig({ kubeconfig: kubeconfig(serve) });
    try {
      await kube.create(Resources.pods, { metadata: { name: 'waiting' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }, { namespace: 'default' });
      let log = '';
      scheduler = spawn(process.execPath, [cli, 'scheduler', '--kubeconfig', kubeconfig(serve)], { stdio: ['ignore', 'ignore', 'pipe'] });
      scheduler.stderr!.on('data', (d: Buffer) => (log += d.toString()));
      await until('scheduler running', () => log.includes('"msg":"scheduler running"'), { timeoutMs: 60_000 });
      const { node, event } = await placed(serve, 'outside');
      expect(node).toBeTruthy();
      expect(event.source?.component).toBe('default-scheduler');
      // The pod created before the scheduler ran is placed too (its first list).
      expect(await until('waiting bound', async () => (await kube.get<Obj>(Resources.pods, 'waiting', { namespace: 'default' })).spec?.nodeName)).toBe(node);
    } finally {
      kube.close();
    }
  });
});
