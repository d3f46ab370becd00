/**
 * NodeRestriction through real clients over TLS: a node authenticated by the client certificate
 * `cluster-api node-credentials` issues (system:node:n1 in system:nodes), talking with
 * @kubernetes/client-node, kubectl and the Python client. Each refusal is kube-apiserver's 403 Status and leaves the
 * object as it was; what a kubelet does (its own labels and status, mirror pods bound to itself,
 * deleting its pods) goes through.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiException, CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeKubeconfig } from '../../src/auth/node-credentials.js';
import { resolveConfig } from '../../src/config.js';
import { serve, type Served } from '../../src/server.js';
import { tempDir } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

const run = promisify(execFile);
const kubectlBin = '/usr/bin/kubectl';
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const Mirror = 'kubernetes.io/config.mirror';

/** The Status of a refused call, as client-node hands it over. */
const refusal = async (call: Promise<unknown>): Promise<{ code: number; reason: string; message: string }> => {
  const err = await call.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ApiException);
  const e = err as ApiException<unknown>;
  const body = typeof e.body === 'string' ? JSON.parse(e.body) : (e.body as { reason: string; message: string });
  return { code: e.code, reason: body.reason, message: body.message };
};
const forbidden = (message: string) => ({ code: 403, reason: 'Forbidden', message });

describe('NodeRestriction for a node\'s x509 client certificate', () => {
  let dir: string;
  let served: Served;
  let admin: CoreV1Api;
  let node: CoreV1Api;
  let nodeConfig: string;
  let nodeUid: string;

  const pod = (name: string, extra: { annotations?: Record<string, string>; owners?: object[]; spec?: object } = {}): V1Pod => ({
    metadata: { name, annotations: extra.annotations ?? { [Mirror]: 'hash' }, ownerReferences: (extra.owners ?? [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: nodeUid, controller: true }]) as never },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'static:v1' }], ...extra.spec },
  });
  const absent = async (name: string) => expect((await refusal(admin.readNamespacedPod({ namespace: 'default', name }))).code).toBe(404);

  beforeAll(async () => {
    dir = tempDir();
    const dataDir = join(dir, 'data');
    served = await serve(resolveConfig({ port: 0, dataDir, storage: 'memory:', disableAgent: true, disableScheduler: true, broker: false }), () => {});
    const adminConfig = new KubeConfig();
    adminConfig.loadFromString(readFileSync(served.kubeconfig!, 'utf8'));
    admin = adminConfig.makeApiClient(CoreV1Api);
    // What `cluster-api node-credentials --name n1` writes.
    nodeConfig = join(dir, 'n1.kubeconfig');
    writeFileSync(nodeConfig, nodeKubeconfig({ dataDir, name: 'n1', addresses: ['127.0.0.1'] }));
    const kc = new KubeConfig();
    kc.loadFromFile(nodeConfig);
    node = kc.makeApiClient(CoreV1Api);
  });
  afterAll(async () => {
    await served?.server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('registers its Node only without labels kubelets may not set and without configSource', async () => {
    const labels = { 'node-restriction.kubernetes.io/pool': 'gpu', 'foo.k8s.io/x': '1', 'kubernetes.io/hostname': 'n1' };
    expect(await refusal(node.createNode({ body: { metadata: { name: 'n1', labels } } }))).toEqual(
      forbidden('nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: foo.k8s.io/x, node-restriction.kubernetes.io/pool'));
    expect(await refusal(node.createNode({ body: { metadata: { name: 'n1' }, spec: { configSource: { configMap: { name: 'c', namespace: 'kube-system', kubeletConfigKey: 'k' } } } } }))).toEqual(
      forbidden('nodes "n1" is forbidden: node "n1" is not allowed to create pods with a non-nil configSource'));
    expect((await refusal(admin.readNode({ name: 'n1' }))).code).toBe(404);
    const allowed = {
      'kubernetes.io/hostname': 'n1', 'kubernetes.io/os': 'linux', 'topology.kubernetes.io/zone': 'z1', 'node.kubernetes.io/instance-type': 'm',
      'kubelet.kubernetes.io/extra': 'x', 'sub.node.kubernetes.io/extra': 'y', 'team': 'blue',
    };
    const taints = [{ key: 'dedicated', value: 'ci', effect: 'NoSchedule' }];
    const created = await node.createNode({ body: { metadata: { name: 'n1', labels: allowed }, spec: { taints } } });
    expect(created.metadata?.labels).toEqual(allowed);
    expect(created.spec?.taints).toEqual(taints);
    nodeUid = created.metadata!.uid!;
  });

  it('changes its own allowed labels and its status', async () => {
    const patched = await node.patchNode({ name: 'n1', body: { metadata: { labels: { team: 'green', 'topology.kubernetes.io/zone': null, 'kubelet.kubernetes.io/more': 'z' } } } }, merge);
    expect(patched.metadata?.labels).toMatchObject({ team: 'green', 'kubelet.kubernetes.io/more': 'z' });
    expect(patched.metadata?.labels).not.toHaveProperty('topology.kubernetes.io/zone');
    const status = await node.patchNodeStatus({ name: 'n1', body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] } } }, merge);
    expect(status.status?.conditions?.[0]?.reason).toBe('KubeletReady');
  });

  it('may not add, change or remove a forbidden label, change taints or ownerReferences, nor delete its Node', async () => {
    await admin.patchNode({ name: 'n1', body: { metadata: { labels: { 'node-restriction.kubernetes.io/pool': 'gpu', 'node-role.kubernetes.io/worker': '' } } } }, merge);
    const before = await admin.readNode({ name: 'n1' });
    const tries: [object, string][] = [
      [{ metadata: { labels: { 'example.kubernetes.io/new': 'x' } } }, 'is not allowed to modify labels: example.kubernetes.io/new'],
      [{ metadata: { labels: { 'node-role.kubernetes.io/worker': null, 'node-restriction.kubernetes.io/pool': 'cpu' } } }, 'is not allowed to modify labels: node-restriction.kubernetes.io/pool, node-role.kubernetes.io/worker'],
      [{ spec: { taints: [] } }, 'node "n1" is not allowed to modify taints'],
      [{ spec: { taints: [{ key: 'dedicated', value: 'other', effect: 'NoSchedule' }] } }, 'node "n1" is not allowed to modify taints'],
      [{ metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: 'gone', uid: 'u' }] } }, 'node "n1" is not allowed to modify ownerReferences'],
      [{ spec: { configSource: { configMap: { name: 'c', namespace: 'kube-system', kubeletConfigKey: 'k' } } } }, 'node "n1" is not allowed to update configSource to a new non-nil configSource'],
    ];
    for (const [body, why] of tries) expect(await refusal(node.patchNode({ name: 'n1', body }, merge))).toEqual(forbidden(`nodes "n1" is forbidden: ${why}`));
    const del = await refusal(node.deleteNode({ name: 'n1' }));
    expect(del.code).toBe(403);
    expect(del.message).toMatch(/^nodes "n1" is forbidden: User "system:node:n1" cannot delete resource "nodes"/);
    // What the node tried to change is as it was (controllers may meanwhile set other fields: podCIDR).
    const after = await admin.readNode({ name: 'n1' });
    expect(after.metadata?.labels).toEqual(before.metadata?.labels);
    expect(after.metadata?.ownerReferences).toBeUndefined();
    expect(after.spec?.taints).toEqual([{ key: 'dedicated', value: 'ci', effect: 'NoSchedule' }]);
    expect(after.spec?.configSource).toBeUndefined();
  });

  it.runIf(existsSync(kubectlBin))('refuses kubectl label with kube-apiserver\'s words', async () => {
    const kubectl = (...args: string[]) => run(kubectlBin, ['--kubeconfig', nodeConfig, ...args], { env: { PATH: process.env.PATH, HOME: dir }, timeout: 30_000 });
    const err = await kubectl('label', 'node', 'n1', 'node-restriction.kubernetes.io/pool=cpu', '--overwrite').then(() => undefined, (e: { stderr: string }) => e);
    expect(err?.stderr.trim()).toBe('Error from server (Forbidden): nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/pool');
    expect((await kubectl('label', 'node', 'n1', 'team=red', '--overwrite')).stdout.trim()).toBe('node/n1 labeled');
    expect((await admin.readNode({ name: 'n1' })).metadata?.labels).toMatchObject({ team: 'red', 'node-restriction.kubernetes.io/pool': 'gpu' });
  });

  it('creates only mirror pods bound to itself, owned by its Node, naming no other object', async () => {
    const owner = { apiVersion: 'v1', kind: 'Node', name: 'n1', uid: nodeUid, controller: true };
    const cases: [V1Pod, string][] = [
      [pod('plain', { annotations: {} }), 'pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods'],
      [pod('elsewhere', { spec: { nodeName: 'n2' } }), 'node "n1" can only create pods with spec.nodeName set to itself'],
      [pod('orphan', { owners: [] }), 'node "n1" can only create pods with an owner reference set to itself'],
      [pod('two', { owners: [owner, { ...owner, name: 'n2' }] }), 'node "n1" can only create pods with a single owner reference set to itself'],
      [pod('other', { owners: [{ ...owner, name: 'n2' }] }), 'node "n1" can only create pods with an owner reference set to itself'],
      [pod('nocontrol', { owners: [{ ...owner, controller: false }] }), 'node "n1" can only create pods with a controller owner reference set to itself'],
      [pod('blocking', { owners: [{ ...owner, blockOwnerDeletion: true }] }), 'node "n1" must not set blockOwnerDeletion on an owner reference'],
      [pod('olduid', { owners: [{ ...owner, uid: 'stale' }] }), `node n1 UID mismatch: expected stale got ${nodeUid}`],
      [pod('account', { spec: { serviceAccountName: 'builder' } }), 'node "n1" can not create pods that reference a service account'],
      [pod('secret', { spec: { volumes: [{ name: 's', secret: { secretName: 'db' } }] } }), 'node "n1" can not create pods that reference secrets'],
      [pod('pull', { spec: { imagePullSecrets: [{ name: 'registry' }] } }), 'node "n1" can not create pods that reference secrets'],
      [pod('cm', { spec: { containers: [{ name: 'c', image: 'static:v1', envFrom: [{ configMapRef: { name: 'settings' } }] }] } }), 'node "n1" can not create pods that reference configmaps'],
      [pod('pvc', { spec: { volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] } }), 'node "n1" can not create pods that reference persistentvolumeclaims'],
    ];
    for (const [body, why] of cases) {
      expect(await refusal(node.createNamespacedPod({ namespace: 'default', body }))).toEqual(forbidden(`pods "${body.metadata!.name}" is forbidden: ${why}`));
      await absent(body.metadata!.name!);
    }
    const created = await node.createNamespacedPod({ namespace: 'default', body: pod('static-web') });
    expect(created.metadata?.annotations?.[Mirror]).toBe('hash');
    // No ServiceAccount defaulted in: the kubelet runs a static pod without one.
    expect(created.spec?.serviceAccountName).toBeUndefined();
  });

  it('writes the status of and deletes its own pods only, evicts no other node\'s, and changes no pod spec', async () => {
    await admin.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'theirs' }, spec: { nodeName: 'n2', containers: [{ name: 'c', image: 'x:v1' }] } } });
    const status = { status: { phase: 'Running' } };
    // The authorizer's graph follows pods by a watch: wait until it knows the mirror pod is n1's.
    const written = await until('n1 may write its mirror pod\'s status', () => node.patchNamespacedPodStatus({ namespace: 'default', name: 'static-web', body: status }, merge).catch(() => undefined));
    expect(written.status?.phase).toBe('Running');
    const other = [
      [() => node.patchNamespacedPodStatus({ namespace: 'default', name: 'theirs', body: status }, merge), 'patch resource "pods/status"', 'node "n1" can only update pod status for pods with spec.nodeName set to itself'],
      [() => node.deleteNamespacedPod({ namespace: 'default', name: 'theirs' }), 'delete resource "pods"', 'node "n1" can only delete pods with spec.nodeName set to itself'],
      [() => node.createNamespacedPodEviction({ namespace: 'default', name: 'theirs', body: { metadata: { name: 'theirs', namespace: 'default' } } }), 'create resource "pods/eviction"', 'node n1 can only evict pods with spec.nodeName set to itself'],
    ] as const;
    for (const [call, what, why] of other) {
      expect(await refusal(call())).toEqual(forbidden(`pods "theirs" is forbidden: User "system:node:n1" cannot ${what} in API group "" in the namespace "default": ${why}`));
    }
    expect((await admin.readNamespacedPod({ namespace: 'default', name: 'theirs' })).status?.phase).toBe('Pending');
    expect((await refusal(node.patchNamespacedPod({ namespace: 'default', name: 'static-web', body: { metadata: { labels: { a: 'b' } } } }, merge))).code).toBe(403);
    expect((await admin.readNamespacedPod({ namespace: 'default', name: 'static-web' })).metadata?.labels).toBeUndefined();
    await node.deleteNamespacedPod({ namespace: 'default', name: 'static-web', gracePeriodSeconds: 0 });
    await absent('static-web');
  });

  it('gets 404 for a pod that is gone, as a kubelet does, and NodeRestriction\'s 403 for one its graph has not placed', async () => {
    const status = { status: { phase: 'Running' } };
    const notFound = { code: 404, reason: 'NotFound', message: 'pods "gone" not found' };
    // Never existed, or force-deleted since: the store's answer, not the authorizer's.
    expect(await refusal(node.deleteNamespacedPod({ namespace: 'default', name: 'gone', gracePeriodSeconds: 0 }))).toEqual(notFound);
    expect(await refusal(node.patchNamespacedPodStatus({ namespace: 'default', name: 'gone', body: status }, merge))).toEqual(notFound);
    expect(await refusal(node.createNamespacedPodEviction({ namespace: 'default', name: 'gone', body: { metadata: { name: 'gone', namespace: 'default' } } }))).toEqual(notFound);
    const bound = await admin.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'bound' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x:v1' }] } } });
    await until('n1 may write its pod\'s status', () => node.patchNamespacedPodStatus({ namespace: 'default', name: 'bound', body: status }, merge).catch(() => undefined));
    await admin.deleteNamespacedPod({ namespace: 'default', name: 'bound', gracePeriodSeconds: 0 });
    expect(await refusal(node.deleteNamespacedPod({ namespace: 'default', name: 'bound', gracePeriodSeconds: 0, body: { preconditions: { uid: bound.metadata!.uid } } }))).toEqual({ ...notFound, message: 'pods "bound" not found' });
    // Not bound to any node, so never in the graph: the stored pod decides, in NodeRestriction's words.
    await admin.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'pending' }, spec: { containers: [{ name: 'c', image: 'x:v1' }] } } });
    expect(await refusal(node.deleteNamespacedPod({ namespace: 'default', name: 'pending' }))).toEqual(forbidden('pods "pending" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself'));
    expect(await refusal(node.patchNamespacedPodStatus({ namespace: 'default', name: 'pending', body: status }, merge))).toEqual(forbidden('pods "pending" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself'));
    expect(await refusal(node.createNamespacedPodEviction({ namespace: 'default', name: 'pending', body: { metadata: { name: 'pending', namespace: 'default' } } }))).toEqual(forbidden('pods "pending" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself'));
    const kept = await admin.readNamespacedPod({ namespace: 'default', name: 'pending' });
    expect([kept.status?.phase, kept.metadata?.deletionTimestamp]).toEqual(['Pending', undefined]);
  });

  it('asks for tokens only bound to a pod of its own, by uid', async () => {
    const mine = await admin.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'mine' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x:v1' }] } } });
    const theirs = await admin.readNamespacedPod({ namespace: 'default', name: 'theirs' });
    const ask = (boundObjectRef?: object) => node.createNamespacedServiceAccountToken({ namespace: 'default', name: 'default', body: { spec: { audiences: [], boundObjectRef } as never } });
    // The graph lets n1 ask for the account of its pod once it has seen the pod.
    await until('n1 may ask for a token bound to its pod', () => ask({ apiVersion: 'v1', kind: 'Pod', name: 'mine', uid: mine.metadata!.uid }).catch(() => undefined));
    const cases: [object | undefined, string][] = [
      [undefined, 'node requested token not bound to a pod'],
      [{ apiVersion: 'v1', kind: 'Pod', name: 'mine' }, 'node requested token with a pod binding without a uid'],
      [{ apiVersion: 'v1', kind: 'Pod', name: 'mine', uid: 'stale' }, 'the UID in the bound object reference (stale) does not match the UID in record. The object might have been deleted and then recreated'],
      [{ apiVersion: 'v1', kind: 'Pod', name: 'theirs', uid: theirs.metadata!.uid }, 'node requested token bound to a pod scheduled on a different node'],
    ];
    for (const [ref, why] of cases) expect(await refusal(ask(ref))).toEqual(forbidden(`serviceaccounts "default" is forbidden: ${why}`));
  });

  it('leaves everyone else untouched', async () => {
    const labels = { 'node-restriction.kubernetes.io/pool': 'gpu', 'example.k8s.io/x': 'y' };
    expect((await admin.createNode({ body: { metadata: { name: 'n2', labels }, spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } } })).metadata?.labels).toEqual(labels);
    expect((await admin.patchNode({ name: 'n2', body: { spec: { taints: [] } } }, merge)).spec?.taints).toEqual([]);
    expect((await admin.readNamespacedPod({ namespace: 'default', name: 'theirs' })).spec?.serviceAccountName).toBe('default');
  });

  it('refuses and allows the same through the Python client (python3-kubernetes with the node\'s kubeconfig)', async () => {
    const script = [
      'import json, sys',
      'from kubernetes import client, config',
      'from kubernetes.client.rest import ApiException',
      'config.load_kube_config(sys.argv[1])',
      'v1 = client.CoreV1Api()',
      'out = {}',
      'try:',
      '    v1.patch_node("n1", {"spec": {"taints": []}})',
      '    out["taints"] = "allowed"',
      'except ApiException as e:',
      '    out["taints"] = [e.status, json.loads(e.body)["message"]]',
      'out["label"] = v1.patch_node("n1", {"metadata": {"labels": {"rack": "r7"}}}).metadata.labels.get("rack")',
      'print(json.dumps(out))',
    ].join('\n');
    const { stdout } = await run('/usr/bin/python3', ['-c', script, nodeConfig], { env: { PATH: process.env.PATH, HOME: dir, PYTHONDONTWRITEBYTECODE: '1' } });
    expect(JSON.parse(stdout)).toEqual({ taints: [403, 'nodes "n1" is forbidden: node "n1" is not allowed to modify taints'], label: 'r7' });
    expect((await admin.readNode({ name: 'n1' })).spec?.taints).toEqual([{ key: 'dedicated', value: 'ci', effect: 'NoSchedule' }]);
  });
});
