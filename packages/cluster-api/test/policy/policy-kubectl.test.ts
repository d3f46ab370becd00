/**
 * The policy kinds enforced, as a user meets them with /usr/bin/kubectl and @kubernetes/client-node
 * against `serve` (TLS, its controllers running): a LimitRange's defaults and max, a ResourceQuota's
 * count refusing the third pod and `kubectl describe quota` following creates and deletes, 50
 * parallel creates against `pods: 10` admitting exactly 10, and Pod Security's enforce and warn
 * labels as kubectl prints them.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../testing/src/poll.js';
import { runKubectl, startKubectlServer, type KubectlServer } from '../support/helpers.js';

const kubectlBin = '/usr/bin/kubectl';

describe.runIf(existsSync(kubectlBin))('policy with kubectl and client-node', () => {
  let server: KubectlServer;
  let core: CoreV1Api;
  const kubectl = (...args: string[]) => runKubectl(kubectlBin, server.env, args);
  const ok = async (...args: string[]) => {
    const r = await kubectl(...args);
    expect(r.code, r.stderr).toBe(0);
    return r;
  };
  const file = (name: string, yaml: string): string => {
    const path = join(server.dir, name);
    writeFileSync(path, yaml);
    return path;
  };
  /** `kubectl describe quota`'s rows (`pods 2 2`), cells joined by one space. */
  const describeQuota = async (ns: string, name: string): Promise<string[]> =>
    (await ok('describe', 'quota', name, '-n', ns)).stdout.trim().split('\n').slice(2).map((l) => l.trim().split(/\s+/).join(' '));

  beforeAll(async () => {
    server = await startKubectlServer();
    const config = new KubeConfig();
    config.loadFromString(readFileSync(server.served.kubeconfig!, 'utf8'));
    core = config.makeApiClient(CoreV1Api);
  }, 60_000);
  afterAll(async () => server?.close());

  it('a LimitRange gives a pod without resources its defaults and refuses one over max with Kubernetes\' message', async () => {
    await ok('create', 'namespace', 'limited');
    await ok('create', '-n', 'limited', '-f', file('limits.yaml', [
      'apiVersion: v1', 'kind: LimitRange', 'metadata: {name: mem}', 'spec:', '  limits:',
      '  - type: Container', '    max: {memory: 1Gi}', '    default: {memory: 512Mi, cpu: 500m}', '    defaultRequest: {memory: 256Mi, cpu: 100m}',
    ].join('\n')));
    await ok('run', 'plain', '--image=nginx', '-n', 'limited');
    const got = JSON.parse((await ok('get', 'pod', 'plain', '-n', 'limited', '-o', 'json')).stdout);
    expect(got.spec.containers[0].resources).toEqual({ limits: { cpu: '500m', memory: '512Mi' }, requests: { cpu: '100m', memory: '256Mi' } });
    expect(got.metadata.annotations['kubernetes.io/limit-ranger']).toBe('LimitRanger plugin set: cpu, memory request for container plain; cpu, memory limit for container plain');
    const big = file('big.yaml', [
      'apiVersion: v1', 'kind: Pod', 'metadata: {name: big}', 'spec:', '  containers:', '  - name: app', '    image: nginx', '    resources: {limits: {memory: 2Gi}}',
    ].join('\n'));
    const refused = await kubectl('create', '-n', 'limited', '-f', big);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(`Error from server (Forbidden): error when creating "${big}": pods "big" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi`);
  });

  it('a quota of two pods refuses the third, and kubectl describe quota follows creates and deletes', async () => {
    await ok('create', 'namespace', 'two');
    await ok('create', 'quota', 'q1', '--hard=pods=2,count/configmaps=10', '-n', 'two');
    await until('the quota counted', async () => (await describeQuota('two', 'q1')).includes('pods 0 2') || undefined);
    await ok('run', 'a', '--image=nginx', '-n', 'two');
    await until('describe shows 1/2', async () => (await describeQuota('two', 'q1')).includes('pods 1 2') || undefined);
    await ok('run', 'b', '--image=nginx', '-n', 'two');
    await ok('create', 'configmap', 'settings', '--from-literal=a=b', '-n', 'two');
    expect(await until('describe shows 2/2', async () => {
      const rows = await describeQuota('two', 'q1');
      return rows.includes('pods 2 2') && rows;
    })).toEqual(['Resource Used Hard', '-------- ---- ----', 'count/configmaps 1 10', 'pods 2 2']);
    const third = await kubectl('run', 'c', '--image=nginx', '-n', 'two');
    expect(third.code).toBe(1);
    expect(third.stderr.trim()).toBe('Error from server (Forbidden): pods "c" is forbidden: exceeded quota: q1, requested: pods=1, used: pods=2, limited: pods=2');
    // Deleting gives the unit back (the quota controller recounts); the third pod then fits.
    await ok('delete', 'pod', 'a', '-n', 'two', '--grace-period=0', '--force');
    await until('describe shows 1/2 after the delete', async () => (await describeQuota('two', 'q1')).includes('pods 1 2') || undefined);
    await ok('run', 'c', '--image=nginx', '-n', 'two');
    // A finished pod counts no more (count/pods would still count it).
    await ok('patch', 'pod', 'b', '-n', 'two', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Failed"}}');
    await until('describe shows 1/2 once b failed', async () => (await describeQuota('two', 'q1')).includes('pods 1 2') || undefined);
    // A quota counts what was there before it: a new quota over these pods (c running, b failed) starts at 1.
    await ok('create', 'quota', 'late', '--hard=pods=5', '-n', 'two');
    await until('the late quota counted', async () => (await describeQuota('two', 'late')).includes('pods 1 5') || undefined);
  });

  it('50 parallel creates through client-node against pods: 10 admit exactly 10', async () => {
    await core.createNamespace({ body: { metadata: { name: 'burst' } } });
    await core.createNamespacedResourceQuota({ namespace: 'burst', body: { metadata: { name: 'ten' }, spec: { hard: { pods: '10' } } } });
    await until('the quota counted', async () => (await core.readNamespacedResourceQuota({ namespace: 'burst', name: 'ten' })).status?.used?.pods === '0' || undefined);
    const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) =>
      core.createNamespacedPod({ namespace: 'burst', body: { metadata: { name: `p${i}` }, spec: { containers: [{ name: 'app', image: 'nginx' }] } } })));
    const admitted = results.filter((r) => r.status === 'fulfilled');
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as ApiException<string>] : []));
    expect(admitted).toHaveLength(10);
    expect(refused.map((e) => e.code)).toEqual(Array(40).fill(403));
    expect(JSON.parse(refused[0]!.body).message).toMatch(/^pods "p\d+" is forbidden: exceeded quota: ten, requested: pods=1, used: pods=10, limited: pods=10$/);
    expect((await core.listNamespacedPod({ namespace: 'burst' })).items).toHaveLength(10);
    expect((await core.readNamespacedResourceQuota({ namespace: 'burst', name: 'ten' })).status).toEqual({ hard: { pods: '10' }, used: { pods: '10' } });
  });

  it('enforce=restricted refuses a root pod with the upstream message; warn prints a Warning and admits', async () => {
    await ok('create', 'namespace', 'strict');
    await ok('label', 'namespace', 'strict', 'pod-security.kubernetes.io/enforce=restricted');
    const refused = await kubectl('run', 'root', '--image=nginx', '-n', 'strict');
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe('Error from server (Forbidden): pods "root" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "root" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "root" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "root" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "root" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")');
    await ok('create', 'namespace', 'warned');
    await ok('label', 'namespace', 'warned', 'pod-security.kubernetes.io/warn=baseline');
    const warned = await ok('run', 'host', '--image=nginx', '-n', 'warned', '--overrides={"spec":{"hostNetwork":true}}');
    expect(warned.stderr.trim()).toBe('Warning: would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)');
    expect(warned.stdout.trim()).toBe('pod/host created');
    const label = await kubectl('label', 'namespace', 'warned', 'pod-security.kubernetes.io/enforce=everything');
    expect(label.code).toBe(1);
    expect(label.stderr).toContain('Invalid value: "everything": must be one of privileged, baseline, restricted');
    // Trying a stricter level first, as the docs advise: the pods that would break it are named.
    const dry = await ok('label', 'namespace', 'warned', 'pod-security.kubernetes.io/enforce=baseline', '--dry-run=server');
    expect(dry.stderr.trim().split('\n')).toEqual(['Warning: existing pods in namespace "warned" violate the new PodSecurity enforce level "baseline:latest"', 'Warning: host: host namespaces']);
    expect(dry.stdout.trim()).toBe('namespace/warned labeled (server dry run)');
  });
});
