/**
 * issue 32 §1: `kubectl delete deploy --cascade=foreground` right after a rollout used to end `serve`.
 * The embedded node agent's last delete of a pod already gone got 403 from the Node authorizer (it no
 * longer knew the pod), instead of the 404 kube-apiserver answers a kubelet; the agent's promise
 * rejected and nothing caught it. Against the real process and kubectl, repeated.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { haveKubectl, startServe, type ServeProcess } from './process.js';

const Forbidden = /can only delete pods with spec\.nodeName set to itself|can only update pod status for pods with spec\.nodeName/;

describe.runIf(haveKubectl)('serve survives pods deleted under its node agent', () => {
  let s: ServeProcess;
  beforeEach(async () => {
    s = await startServe(['--storage', 'memory:', '--no-broker', '--node-name', 'vm']);
  });
  afterEach(() => s?.close());

  const ok = async (...args: string[]) => {
    const r = await s.kubectl(...args);
    expect(r.stderr, `kubectl ${args.join(' ')}`).toBe('');
    expect(r.code).toBe(0);
    return r.stdout;
  };

  it('a foreground cascade delete after a rollout, ten times over', async () => {
    for (let i = 0; i < 10; i++) {
      const name = `fg${i}`;
      await ok('create', 'deploy', name, '--image=nginx:1.27');
      await ok('rollout', 'status', `deploy/${name}`, '--timeout=60s');
      await ok('delete', 'deploy', name, '--cascade=foreground', '--timeout=60s');
      expect(s.alive(), `serve still running after round ${i}:\n${s.log().slice(-2000)}`).toBe(true);
    }
    // The pods are gone from the API, and no 403 about them was logged on the way.
    expect(await ok('get', 'pods', '-o', 'name')).toBe('');
    expect(s.log()).not.toMatch(Forbidden);
    expect((await s.kubectl('get', '--raw', '/readyz')).stdout).toBe('ok');
  }, 600_000);

  it('kubectl delete pod --force of a running pod', async () => {
    for (let i = 0; i < 3; i++) {
      const name = `forced${i}`;
      await ok('run', name, '--image=nginx:1.27', '--restart=Never');
      await ok('wait', `pod/${name}`, '--for=condition=Ready', '--timeout=60s');
      const r = await s.kubectl('delete', 'pod', name, '--force', '--grace-period=0');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`pod "${name}" force deleted`);
    }
    // The agent notices each removal and stops the pod; meanwhile it must not be refused anything.
    await ok('run', 'after', '--image=nginx:1.27', '--restart=Never');
    await ok('wait', 'pod/after', '--for=condition=Ready', '--timeout=60s');
    expect(s.alive()).toBe(true);
    expect(s.log()).not.toMatch(Forbidden);
  }, 300_000);
});
