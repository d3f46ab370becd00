/**
 * An oci node keeps pod networks ready ahead of need (runtime/oci/sandbox-pool.ts): a pod takes
 * one and answers on its address; the pool is refilled; a pod with a hostPort makes its own (its
 * mappings are arguments of the CNI ADD); deleting the pod releases the pooled address and
 * namespace; the node's stop releases what is still pooled.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Resources } from '@func/kube-client';
import { nodeKey } from '../../src/node/runtime/oci/runtime.js';
import { privatePodCidr } from '../../src/node/runtime/oci/pod-cidr.js';
import { ociMissing, ociOf } from '../support/oci-fixtures.js';
import { isReady, podUntil, useNodeCluster } from '../support/node-fixtures.js';

/** A port free on the host now (for a hostPort). */
const freePort = () => new Promise<number>((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address() as { port: number };
    s.close(() => resolve(port));
  });
});
import { until } from '../../testing/src/poll.js';

const cidr = privatePodCidr(`oci-pool-test-${process.pid}`);

describe.skipIf(ociMissing)(`an oci node's pool of pod networks${ociMissing ? ` (skipped: ${ociMissing})` : ''}`, () => {
  const current = useNodeCluster({ nodes: [{ name: 'oci-p', options: { containerRuntime: 'oci' } }], nodeControllers: { clusterCidr: cidr, nodeCidrMaskSize: 24 } });
  const agent = () => current.cluster.agents.get('oci-p')!;
  const runtime = () => ociOf(agent());
  const dataDir = () => join(current.cluster.dir, 'oci-p');
  const key = () => nodeKey(dataDir());
  /** This node's network namespaces on the host. */
  const namespaces = () => execFileSync('ip', ['netns', 'list']).toString().split('\n').map((l) => l.split(' ')[0]!).filter((n) => n.startsWith(`func${key()}-`));
  /** host-local's records: address → the id it was given to. */
  const addresses = (): Record<string, string> => {
    const d = join(dataDir(), 'oci', 'ipam', `func${key()}`);
    let names: string[] = [];
    try {
      names = readdirSync(d).filter((n) => /^\d+\.\d+\.\d+\.\d+$/.test(n));
    } catch {
      /* none */
    }
    return Object.fromEntries(names.map((n) => [n, readFileSync(join(d, n), 'utf8').split(/\r?\n/)[0]!]));
  };
  const sandboxOf = (pod: string) => runtime().listPodSandbox().find((s) => s.metadata.name === pod)!;
  const poolFull = () => until('the pool holds 2', () => runtime().pooledNetworks.length === 2 && runtime().pooledNetworks.map((e) => e.id));

  it('a pod takes a pooled network: its sandbox is the pool entry, it answers on the entry\'s address; the pool is refilled', async () => {
    const { kube } = current;
    const pooled = await poolFull();
    const before = runtime().pooledNetworks.map((e) => ({ ...e }));
    await kube.create(Resources.pods, { metadata: { name: 'fn' }, spec: { containers: [{ name: 'fn', image: 'probe:v1' }] } });
    const pod = await podUntil(kube, 'fn', 'Ready', isReady, 60_000);
    const sandbox = sandboxOf('fn');
    expect(pooled).toContain(sandbox.id);
    expect(pod.status.podIP).toBe(before.find((e) => e.id === sandbox.id)!.ip);
    expect(addresses()[pod.status.podIP]).toBe(sandbox.id);
    await until('the function answers on its pod IP', () => fetch(`http://${pod.status.podIP}:8080/`).then((r) => r.ok, () => false));
    const refilled = await poolFull();
    expect(refilled).not.toContain(sandbox.id);
    // Every namespace of the node is the pod's or the pool's.
    expect(namespaces().sort()).toEqual([sandbox.id, ...refilled].map((id) => `func${key()}-${id.slice(0, 12)}`).sort());
  }, 90_000);

  it('a pod with a hostPort makes its own network (portmap needs its mappings at ADD), and answers on the host port', async () => {
    const { kube } = current;
    const hostPort = await freePort();
    const pooled = await poolFull();
    await kube.create(Resources.pods, { metadata: { name: 'hp' }, spec: { containers: [{ name: 'fn', image: 'probe:v1', ports: [{ containerPort: 8080, hostPort }] }] } });
    await podUntil(kube, 'hp', 'Ready', isReady, 60_000);
    const own = sandboxOf('hp');
    expect(pooled).not.toContain(own.id);
    expect(runtime().pooledNetworks.map((e) => e.id)).toEqual(pooled);
    expect(addresses()[own.network.ip]).toBe(own.id);
    await until('the function answers on the host port', () => fetch(`http://127.0.0.1:${hostPort}/`).then((r) => r.ok, () => false));
    await kube.delete(Resources.pods, 'hp', { gracePeriodSeconds: 0 });
    await until('its sandbox, namespace and address released', () => !sandboxOf('hp') && !namespaces().includes(`func${key()}-${own.id.slice(0, 12)}`) && !(own.network.ip in addresses()), { timeoutMs: 30_000 });
  }, 90_000);

  it('deleting the pod releases the pooled address and namespace (CNI DEL with the entry\'s id)', async () => {
    const { kube } = current;
    const sandbox = sandboxOf('fn');
    const ip = sandbox.network.ip;
    await kube.delete(Resources.pods, 'fn', { gracePeriodSeconds: 0 });
    await until('fn gone', () => kube.get(Resources.pods, 'fn').then(() => false, () => true), { timeoutMs: 60_000 });
    await until('its namespace and address released', () => !namespaces().includes(`func${key()}-${sandbox.id.slice(0, 12)}`) && !(ip in addresses()), { timeoutMs: 30_000 });
    expect(Object.values(addresses()).sort()).toEqual(runtime().pooledNetworks.map((e) => e.id).sort());
  }, 90_000);

  it('a pod deleted while its sandbox is being made leaves no sandbox, namespace or address behind (delete waits for the make)', async () => {
    const { kube } = current;
    await poolFull();
    // More pods than the pool holds: the first take pooled networks, the others make their own (a CNI ADD in flight as the delete comes).
    for (let round = 0; round < 3; round++) {
      const names = Array.from({ length: 4 }, (_, i) => `quick-${round}-${i}`);
      await Promise.all(names.map((name) => kube.create(Resources.pods, { metadata: { name }, spec: { containers: [{ name: 'fn', image: 'probe:v1' }] } })));
      await until('the node has started on them', () => names.some((n) => sandboxOf(n)) || runtime().pooledNetworks.length < 2, { timeoutMs: 30_000 });
      await Promise.all(names.map((name) => kube.delete(Resources.pods, name, { gracePeriodSeconds: 0 })));
    }
    await until('every quick pod\'s sandbox removed', () => !runtime().listPodSandbox().some((s) => s.metadata.name.startsWith('quick-')), { timeoutMs: 60_000 });
    // What is left on the host is the pool's (refilled meanwhile): namespaces and addresses alike.
    const pooled = await poolFull();
    await until('only the pool\'s namespaces and addresses', () => {
      const ns = namespaces().sort();
      return ns.length === 2 && ns.join() === pooled.map((id) => `func${key()}-${id.slice(0, 12)}`).sort().join() && Object.values(addresses()).sort().join() === [...pooled].sort().join();
    }, { timeoutMs: 30_000 });
  }, 120_000);

  it('a sandbox that cannot be made (its pod directory unwritable) releases the network it took or made', async () => {
    const pooled = await poolFull();
    const podDir = join(current.cluster.dir, 'broken-pod');
    mkdirSync(podDir, { recursive: true });
    writeFileSync(join(podDir, 'etc'), 'a file where the pod\'s /etc files go');
    const config = (name: string, ports: { containerPort: number; hostPort?: number }[]) => ({
      metadata: { name, namespace: 'default', uid: `uid-${name}`, attempt: 0 }, hostname: name, logDirectory: join(podDir, 'logs'), podDir, labels: {}, annotations: {},
      pod: { metadata: { name, namespace: 'default', uid: `uid-${name}` }, spec: { containers: [{ name: 'c', image: 'probe:v1', ports }] } } as never,
    });
    await expect(runtime().runPodSandbox(config('broken', []))).rejects.toThrow();
    // A port no other test relies on (a DNAT rule left on port 1 would turn other tests' "refused" into a hang).
    await expect(runtime().runPodSandbox(config('broken-hp', [{ containerPort: 8080, hostPort: await freePort() }]))).rejects.toThrow();
    expect(runtime().listPodSandbox().map((s) => s.metadata.name)).not.toContain('broken');
    // The pooled one it took is released (and the pool refilled); the one it made is released.
    const now = await until('the pool refilled', () => runtime().pooledNetworks.length === 2 && runtime().pooledNetworks.map((e) => e.id));
    expect(now).not.toEqual(pooled);
    expect(namespaces().sort()).toEqual(now.map((id) => `func${key()}-${id.slice(0, 12)}`).sort());
    expect(Object.values(addresses()).sort()).toEqual([...now].sort());
  }, 60_000);

  it('the node\'s stop releases what is pooled: no namespace of the node is left', async () => {
    const pooled = await poolFull();
    expect(namespaces()).toHaveLength(2);
    await agent().stop();
    current.cluster.agents.delete('oci-p');
    expect(namespaces()).toEqual([]);
    expect(Object.values(addresses()).filter((id) => pooled.includes(id))).toEqual([]);
  }, 60_000);
});
