/**
 * What the node agent answers, as the kubelet answers it, when a pod cannot run as asked: an image
 * that is not a function image on a node that refuses to simulate (ErrImagePull, then
 * ImagePullBackOff), a grpc probe (CreateContainerConfigError), a missing ConfigMap key
 * (CreateContainerConfigError until the key appears), a missing ConfigMap volume (FailedMount),
 * an unsupported volume type, and two containers on one port (the second crash-loops). Nothing else
 * on the node is disturbed: a healthy pod beside them keeps serving.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Resources, type ContainerStatus, type KubeClient } from '@func/kube-client';
import { eventsOf, isReady, type EventObj, type Obj, podUntil, useNodeCluster } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const current = useNodeCluster({ nodes: [{ name: 'strict', options: { simulate: false } }] });
let kube: KubeClient;

beforeAll(async () => {
  kube = current.kube;
  await kube.create(Resources.pods, { metadata: { name: 'healthy' }, spec: { containers: [{ name: 'fn', image: 'probe:v1' }] } });
});

const waiting = (p: Obj, i = 0) => p.status?.containerStatuses?.[i]?.state?.waiting;
const waitEvent = (name: string, test: (e: EventObj) => boolean) => until(`an event for ${name}`, async () => (await eventsOf(kube, name)).find(test));
const pod = (name: string, containers: object[], extra: object = {}) => kube.create(Resources.pods, { metadata: { name }, spec: { containers, ...extra } });

describe('refused', () => {
  it('an image that is not a function image: ErrImagePull saying so, then ImagePullBackOff', async () => {
    await pod('nginx', [{ name: 'web', image: 'nginx:1.27' }]);
    const pulled = await podUntil(kube, 'nginx', 'ErrImagePull', (p) => waiting(p)?.reason === 'ErrImagePull');
    expect(waiting(pulled)).toEqual({ reason: 'ErrImagePull', message: expect.any(String) });
    expect(waiting(pulled).message).toBe('image "nginx:1.27" cannot run on this node: only function images run here (not in this node\'s image store)');
    expect(pulled.status.phase).toBe('Pending');
    const failed = await waitEvent('nginx', (e) => e.reason === 'Failed' && e.message.startsWith('Failed to pull image'));
    expect(failed.type).toBe('Warning');
    const backoff = await podUntil(kube, 'nginx', 'ImagePullBackOff', (p) => waiting(p)?.reason === 'ImagePullBackOff', 30_000);
    expect(waiting(backoff).message).toMatch(/^Back-off pulling image "nginx:1\.27": ErrImagePull: image "nginx:1\.27" cannot run on this node/);
  }, 60_000);

  it('a grpc probe: CreateContainerConfigError with the reason, and a Failed event', async () => {
    await pod('grpc', [{ name: 'fn', image: 'probe:v1', readinessProbe: { grpc: { port: 8080 } } }]);
    const p = await podUntil(kube, 'grpc', 'CreateContainerConfigError', (x) => waiting(x)?.reason === 'CreateContainerConfigError');
    expect(waiting(p).message).toBe('readinessProbe uses grpc, which this node does not probe; use httpGet or tcpSocket');
    const failed = await waitEvent('grpc', (e) => e.reason === 'Failed');
    expect(failed.message).toBe(`Error: ${waiting(p).message}`);
  });
});

describe('configuration', () => {
  it('a missing ConfigMap key: CreateContainerConfigError as the kubelet words it, until the key exists', async () => {
    await kube.create(Resources.configMaps, { metadata: { name: 'partial' }, data: { other: 'x' } });
    await pod('keyless', [{ name: 'fn', image: 'probe:v1', env: [{ name: 'WANTED', valueFrom: { configMapKeyRef: { name: 'partial', key: 'wanted' } } }] }]);
    const p = await podUntil(kube, 'keyless', 'CreateContainerConfigError', (x) => waiting(x)?.reason === 'CreateContainerConfigError');
    expect(waiting(p).message).toBe("couldn't find key wanted in ConfigMap default/partial");
    expect((await waitEvent('keyless', (e) => e.reason === 'Failed')).message).toBe("Error: couldn't find key wanted in ConfigMap default/partial");
    await kube.patch(Resources.configMaps, 'partial', { data: { wanted: 'yes' } }, { type: 'merge' });
    const ready = await podUntil(kube, 'keyless', 'Ready once the key exists', isReady, 30_000);
    expect(await until('the function answers', () => fetch(`http://${ready.status.podIP}:8080/env?name=WANTED`).then((r) => r.text(), () => undefined))).toBe('yes');
  });

  it('a missing ConfigMap volume: FailedMount, the pod waits in ContainerCreating', async () => {
    await pod('volumeless', [{ name: 'fn', image: 'probe:v1', volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg' }] }], { volumes: [{ name: 'cfg', configMap: { name: 'absent' } }] });
    const mount = await waitEvent('volumeless', (e) => e.reason === 'FailedMount');
    expect(mount).toMatchObject({ type: 'Warning', message: 'MountVolume.SetUp failed for volume "cfg" : configmap "absent" not found' });
    const p = await kube.get<Obj>(Resources.pods, 'volumeless');
    expect(waiting(p)?.reason).toBe('ContainerCreating');
  });

  it('a volume type a process cannot use: FailedMount naming it', async () => {
    await pod('nfs', [{ name: 'fn', image: 'probe:v1' }], { volumes: [{ name: 'share', nfs: { server: 'nfs.example', path: '/x' } }] });
    const mount = await waitEvent('nfs', (e) => e.reason === 'FailedMount');
    expect(mount.message).toBe('MountVolume.SetUp failed for volume "share" : nfs volumes cannot be mounted here: containers run as processes on this node (supported: configMap, secret, downwardAPI, emptyDir, projected, hostPath)');
  });
});

describe('ports', () => {
  it('two containers on one port: the one that cannot listen crash-loops, the other keeps serving', async () => {
    await pod('clash', [{ name: 'first', image: 'probe:v1' }, { name: 'second', image: 'probe:v1' }]);
    const looping = (x: Obj) => (x.status?.containerStatuses ?? []).find((c: ContainerStatus) => c.state?.waiting?.reason === 'CrashLoopBackOff');
    const p = await podUntil(kube, 'clash', 'one container in CrashLoopBackOff', looping, 60_000);
    const loser = looping(p);
    const winner = p.status.containerStatuses.find((c: Obj) => c !== loser);
    expect(winner).toMatchObject({ ready: true, state: { running: {} } });
    expect(loser.lastState.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    const logs = await (await kube.logs('clash', { container: loser.name, previous: true })).setEncoding('utf8').toArray();
    expect(logs.join('')).toMatch(/EADDRINUSE|address already in use|already in use/i);
    expect(await fetch(`http://${p.status.podIP}:8080/`).then((r) => r.text())).toBe('hello from clash');
  }, 90_000);

  it('left the healthy pod alone throughout', async () => {
    const healthy = await podUntil(kube, 'healthy', 'Ready', isReady);
    expect(healthy.status.containerStatuses[0].restartCount).toBe(0);
    expect(await fetch(`http://${healthy.status.podIP}:8080/`).then((r) => r.text())).toBe('hello from healthy');
  });
});
