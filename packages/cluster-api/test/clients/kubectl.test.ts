/**
 * kubectl against `serve()` as a user runs it: TLS with the generated CA, the generated admin token,
 * the written kubeconfig. Nothing is configured by hand: that is the point of the kubeconfig.
 */
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl, startKubectlServer, type KubectlServer } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

const kubectlBin = '/usr/bin/kubectl';

const manifest = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: shop
  labels: {app: web}
spec:
  containers: [{name: web, image: nginx:1.25}]
`;

describe.runIf(existsSync(kubectlBin))('kubectl over TLS with the generated kubeconfig', () => {
  let k: KubectlServer;
  const kubectl = (...args: string[]) => runKubectl(kubectlBin, k.env, args);

  beforeAll(async () => {
    k = await startKubectlServer();
    writeFileSync(join(k.dir, 'app.yaml'), manifest);
  });
  afterAll(() => k?.close());

  it('writes a kubeconfig that kubectl uses in one step', async () => {
    expect(k.served.server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const r = await kubectl('get', 'ns');
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^NAME\s+STATUS\s+AGE\n/);
    expect(r.stdout).toMatch(/^default\s+Active\s+\d+s$/m);
  });

  it('creates a namespace', async () => {
    const r = await kubectl('create', 'namespace', 'shop');
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('namespace/shop created');
    expect((await kubectl('get', 'ns', 'shop', '-o', 'jsonpath={.status.phase}')).stdout).toBe('Active');
  });

  it('applies a Service + Pod manifest, twice', async () => {
    const first = await kubectl('apply', '-f', join(k.dir, 'app.yaml'));
    expect(first.stderr).toBe('');
    expect(first.stdout).toBe('service/web created\npod/web created\n');
    const second = await kubectl('apply', '-f', join(k.dir, 'app.yaml'));
    expect(second.stdout).toBe('service/web unchanged\npod/web unchanged\n');
    const svc = await kubectl('get', 'svc', '-n', 'shop');
    expect(svc.stdout).toMatch(/^web\s+ClusterIP\s+127\.\d+\.\d+\.\d+\s+<none>\s+80\/TCP\s+\d+s$/m);
  });

  it('gets pods as a table and as YAML', async () => {
    const table = await kubectl('get', 'pods', '-n', 'shop');
    expect(table.stdout).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\nweb\s+0\/1\s+Pending\s+0\s+\d+s\n$/);
    const yaml = await kubectl('get', 'pods', '-n', 'shop', '-o', 'yaml');
    expect(yaml.stdout).toMatch(/^kind: List$/m);
    expect(yaml.stdout).toMatch(/^ {4}name: web$/m);
    expect(yaml.stdout).toMatch(/^ {4}phase: Pending$/m);
  });

  it('labels and annotates', async () => {
    expect((await kubectl('label', 'pod', 'web', '-n', 'shop', 'tier=front')).stdout.trim()).toBe('pod/web labeled');
    expect((await kubectl('annotate', 'pod', 'web', '-n', 'shop', 'note=hello')).stdout.trim()).toBe('pod/web annotated');
    const got = await kubectl('get', 'pod', 'web', '-n', 'shop', '-o', 'jsonpath={.metadata.labels.tier} {.metadata.annotations.note}');
    expect(got.stdout).toBe('front hello');
    const selected = await kubectl('get', 'pods', '-n', 'shop', '-l', 'tier=front', '-o', 'name');
    expect(selected.stdout.trim()).toBe('pod/web');
  });

  it('lists api-resources and api-versions from discovery', async () => {
    const resources = await kubectl('api-resources');
    expect(resources.stdout).toMatch(/^pods\s+po\s+v1\s+true\s+Pod$/m);
    expect(resources.stdout).toMatch(/^namespaces\s+ns\s+v1\s+false\s+Namespace$/m);
    const versions = await kubectl('api-versions');
    expect(versions.stdout.split('\n')).toContain('v1');
  });

  it('watches with get -w: the current pods, then a new one as it is created', async () => {
    const child = spawn(kubectlBin, ['get', 'pods', '-n', 'shop', '-w'], { env: k.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    // A probe that throws counts as "not yet"; its message (the output so far) is what a timeout reports.
    const shows = (re: RegExp) => until(`${re} in the watch output`, () => re.test(out) || Promise.reject(new Error(`output so far: ${out}`)), { timeoutMs: 15_000 });
    try {
      await shows(/^web\s+0\/1\s+Pending/m);
      writeFileSync(join(k.dir, 'late.yaml'), manifest.split('---')[1]!.replace(/name: web/g, 'name: late'));
      expect((await kubectl('apply', '-f', join(k.dir, 'late.yaml'))).stdout.trim()).toBe('pod/late created');
      await shows(/^late\s+0\/1\s+Pending/m);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('scales a ReplicationController through its scale subresource', async () => {
    const rc = `apiVersion: v1
kind: ReplicationController
metadata: {name: web-rc, namespace: shop}
spec: {replicas: 1, selector: {app: rc}, template: {metadata: {labels: {app: rc}}, spec: {containers: [{name: web, image: nginx:1.25}]}}}
`;
    writeFileSync(join(k.dir, 'rc.yaml'), rc);
    expect((await kubectl('apply', '-f', join(k.dir, 'rc.yaml'))).code).toBe(0);
    expect((await kubectl('scale', 'rc', 'web-rc', '-n', 'shop', '--replicas=3')).stdout.trim()).toBe('replicationcontroller/web-rc scaled');
    expect((await kubectl('get', 'rc', 'web-rc', '-n', 'shop', '-o', 'jsonpath={.spec.replicas}')).stdout).toBe('3');
    const guarded = await kubectl('scale', 'rc', 'web-rc', '-n', 'shop', '--replicas=5', '--current-replicas=2');
    expect([guarded.code, guarded.stderr]).toEqual([1, expect.stringContaining('Expected replicas to be 2, was 3')]);
  });

  it('applies server-side: creates, prunes what the manifest dropped, reports a conflict, forces it, diffs', async () => {
    const svc = (labels: string, port: string) => `apiVersion: v1
kind: Service
metadata: {name: ssa, namespace: shop, labels: {${labels}}}
spec: {selector: {app: ssa}, ports: [${port}]}
`;
    writeFileSync(join(k.dir, 'ssa.yaml'), svc('app: ssa, tier: front', '{port: 80, targetPort: 8080, name: http}, {port: 443, name: https}'));
    const first = await kubectl('apply', '--server-side', '-f', join(k.dir, 'ssa.yaml'));
    expect([first.stderr, first.stdout]).toEqual(['', 'service/ssa serverside-applied\n']);
    writeFileSync(join(k.dir, 'ssa.yaml'), svc('app: ssa', '{port: 80, targetPort: 8080}'));
    expect((await kubectl('apply', '--server-side', '-f', join(k.dir, 'ssa.yaml'))).code).toBe(0);
    const get = (path: string) => kubectl('get', 'svc', 'ssa', '-n', 'shop', '-o', `jsonpath=${path}`);
    expect((await get('{.metadata.labels}')).stdout).toBe('{"app":"ssa"}');
    expect((await get('{.spec.ports[*].port}')).stdout).toBe('80');

    writeFileSync(join(k.dir, 'ssa-ops.yaml'), svc('app: ssa', '{port: 80, targetPort: 9090}'));
    const refused = await kubectl('apply', '--server-side', '--field-manager=ops', '-f', join(k.dir, 'ssa-ops.yaml'));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Apply failed with 1 conflict: conflict with "kubectl": .spec.ports[port=80].targetPort');
    const diff = await kubectl('diff', '--server-side', '--force-conflicts', '--field-manager=ops', '-f', join(k.dir, 'ssa-ops.yaml'));
    expect(diff.code).toBe(1); // 1: there are differences
    expect(diff.stdout).toMatch(/^-\s+targetPort: 8080$/m);
    expect(diff.stdout).toMatch(/^\+\s+targetPort: 9090$/m);
    expect((await get('{.spec.ports[0].targetPort}')).stdout).toBe('8080');
    const forced = await kubectl('apply', '--server-side', '--field-manager=ops', '--force-conflicts', '-f', join(k.dir, 'ssa-ops.yaml'));
    expect(forced.stdout).toBe('service/ssa serverside-applied\n');
    expect((await get('{.spec.ports[0].targetPort}')).stdout).toBe('9090');
    const owners = JSON.parse((await kubectl('get', 'svc', 'ssa', '-n', 'shop', '-o', 'json', '--show-managed-fields')).stdout).metadata.managedFields;
    expect(owners.map((e: { manager: string; operation: string }) => `${e.manager}/${e.operation}`)).toEqual(['kubectl/Apply', 'ops/Apply']);
    expect((await kubectl('delete', 'svc', 'ssa', '-n', 'shop')).code).toBe(0);
  });

  it('answers auth can-i and auth whoami from review kinds (no RBAC here: an authenticated user may do anything)', async () => {
    const pods = await kubectl('auth', 'can-i', 'create', 'pods', '-n', 'shop');
    expect([pods.code, pods.stdout.trim()]).toEqual([0, 'yes']);
    expect((await kubectl('auth', 'can-i', 'get', '/logs')).stdout.trim()).toBe('yes');
    const whoami = await kubectl('auth', 'whoami');
    expect(whoami.stdout).toMatch(/Username\s+admin/);
    expect(whoami.stdout).toMatch(/Groups\s+\[system:masters system:authenticated\]/);
  });

  it('runs, exposes, sets an image, edits, replaces with --force, describes and waits', async () => {
    expect((await kubectl('run', 'tool', '-n', 'shop', '--image=busybox:1.36', '--labels=app=tool')).stdout.trim()).toBe('pod/tool created');
    expect((await kubectl('expose', 'pod', 'tool', '-n', 'shop', '--port=80')).stdout.trim()).toBe('service/tool exposed');
    expect((await kubectl('get', 'svc', 'tool', '-n', 'shop', '-o', 'jsonpath={.spec.selector.app}')).stdout).toBe('tool');
    expect((await kubectl('set', 'image', 'pod/tool', '-n', 'shop', 'tool=busybox:1.37')).stdout.trim()).toBe('pod/tool image updated');
    const edited = await runKubectl(kubectlBin, { ...k.env, EDITOR: 'sed -i s/busybox:1.37/busybox:1.38/' }, ['edit', 'pod', 'tool', '-n', 'shop']);
    expect(edited.stdout.trim()).toBe('pod/tool edited');
    writeFileSync(join(k.dir, 'tool.yaml'), (await kubectl('get', 'pod', 'tool', '-n', 'shop', '-o', 'yaml')).stdout);
    const replaced = await kubectl('replace', '--force', '-f', join(k.dir, 'tool.yaml'));
    expect(replaced.stdout).toBe('pod "tool" deleted\npod/tool replaced\n');
    expect((await kubectl('describe', 'pod', 'tool', '-n', 'shop')).stdout).toMatch(/^\s+Image:\s+busybox:1\.38$/m);
    expect((await kubectl('cluster-info')).stdout).toContain('Kubernetes control plane is running at https://127.0.0.1:');
    await kubectl('delete', 'svc', 'tool', '-n', 'shop');
    const waited = await Promise.all([kubectl('wait', '--for=delete', 'pod/tool', '-n', 'shop', '--timeout=20s'), kubectl('delete', 'pod', 'tool', '-n', 'shop', '--wait=false')]);
    expect(waited[0].code, waited[0].stderr).toBe(0);
  });

  it('gets no logs and no exec from a pod no node runs, as Kubernetes answers', async () => {
    const logs = await kubectl('logs', 'web', '-n', 'shop');
    expect([logs.code, logs.stdout]).toEqual([0, '']);
    const exec = await kubectl('exec', 'web', '-n', 'shop', '--', 'ls');
    expect([exec.code, exec.stderr.trim()]).toEqual([1, 'Error from server (BadRequest): pod web does not have a host assigned']);
  });

  it('deletes and waits until the object is gone', async () => {
    // No grace period asked: the pod is unscheduled, so it goes at once and kubectl's wait ends at once.
    const r = await kubectl('delete', 'pod', 'web', '-n', 'shop', '--timeout=20s');
    expect(r.stdout.trim()).toBe('pod "web" deleted');
    expect((await kubectl('get', 'pod', 'web', '-n', 'shop')).stderr).toContain('NotFound');
    expect((await kubectl('delete', 'svc', 'web', '-n', 'shop')).stdout.trim()).toBe('service "web" deleted');
  });

  it('is refused without the token (401)', async () => {
    const r = await kubectl('get', 'ns', '--token=not-the-token');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Unauthorized|must be logged in/);
  });
});
