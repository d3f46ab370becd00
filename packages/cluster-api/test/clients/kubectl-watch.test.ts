/**
 * kubectl (whatever /usr/bin/kubectl is) for what depends on watch, patch and deletion: `get pods -w` prints an
 * added pod as it happens, `apply` twice in a row (create, then a client-side patch built from the
 * last-applied-configuration annotation), and `delete ns` waits until the namespace is gone.
 */
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl, startKubectlServer, type KubectlServer } from '../support/helpers.js';

const kubectlBin = '/usr/bin/kubectl';

const manifest = (image: string, replicas: number) => `apiVersion: v1
kind: ReplicationController
metadata:
  name: web
  namespace: kw
  labels: {app: web}
spec:
  replicas: ${replicas}
  selector: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: ${image}
        env: [{name: MODE, value: one}]
        ports: [{containerPort: 8080}]
`;

describe.runIf(existsSync(kubectlBin))('kubectl watch, apply and delete namespace', () => {
  let k: KubectlServer;
  const kubectl = (...args: string[]) => runKubectl(kubectlBin, k.env, args);

  beforeAll(async () => {
    k = await startKubectlServer();
    expect((await kubectl('create', 'namespace', 'kw')).code).toBe(0);
  });
  afterAll(() => k?.close());

  it('get pods -w prints a pod added after the watch started', async () => {
    const child = spawn(kubectlBin, ['get', 'pods', '-n', 'kw', '-w', '--request-timeout=20s'], { env: k.env });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    try {
      // kubectl lists first ("No resources found" on an empty namespace), then watches.
      for (let i = 0; i < 200 && !out.includes('No resources found'); i++) await new Promise((r) => setTimeout(r, 25));
      // A short grace period: the namespace deletion below waits for it.
      const short = '--overrides={"spec":{"terminationGracePeriodSeconds":1}}';
      const created = await kubectl('run', 'watched', '-n', 'kw', '--image=nginx:1.25', '--restart=Never', short);
      expect(created.stdout.trim()).toBe('pod/watched created');
      for (let i = 0; i < 200 && !/watched\s+0\/1\s+Pending/.test(out); i++) await new Promise((r) => setTimeout(r, 25));
      expect(out).toMatch(/^watched\s+0\/1\s+Pending\s+0\s+\d+s$/m);
    } finally {
      child.kill();
    }
  });

  it('apply twice: create, then an update patched from the last-applied configuration', async () => {
    writeFileSync(join(k.dir, 'rc.yaml'), manifest('nginx:1.25', 1));
    expect((await kubectl('apply', '-f', join(k.dir, 'rc.yaml'))).stdout.trim()).toBe('replicationcontroller/web created');
    writeFileSync(join(k.dir, 'rc.yaml'), manifest('nginx:1.27', 3));
    const second = await kubectl('apply', '-f', join(k.dir, 'rc.yaml'));
    expect([second.code, second.stdout.trim(), second.stderr]).toEqual([0, 'replicationcontroller/web configured', '']);
    const unchanged = await kubectl('apply', '-f', join(k.dir, 'rc.yaml'));
    expect(unchanged.stdout.trim()).toBe('replicationcontroller/web unchanged');
    const rc = JSON.parse((await kubectl('get', 'rc', 'web', '-n', 'kw', '-o', 'json')).stdout);
    expect(rc.spec.replicas).toBe(3);
    expect(rc.spec.template.spec.containers).toMatchObject([{ name: 'web', image: 'nginx:1.27', env: [{ name: 'MODE', value: 'one' }] }]);
    expect(JSON.parse(rc.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).spec.replicas).toBe(3);
  });

  it('delete namespace waits until the namespace and its contents are gone', async () => {
    // The pod run above, the ReplicationController and the three pods its manager made.
    const names = async () => (await kubectl('get', 'pods,rc', '-n', 'kw', '-o', 'name')).stdout.split('\n').filter(Boolean);
    for (let i = 0; i < 200 && (await names()).length < 5; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await names()).toHaveLength(5);
    const r = await kubectl('delete', 'namespace', 'kw', '--timeout=20s');
    expect([r.code, r.stdout.trim()]).toEqual([0, 'namespace "kw" deleted']);
    const after = await kubectl('get', 'namespace', 'kw');
    expect(after.stderr).toContain('namespaces "kw" not found');
  });
});
