/**
 * Function containers through their lifecycle, as the kubelet drives them: a readiness probe takes
 * the pod out of Ready and back, a liveness failure restarts the container, a crashing one goes to
 * CrashLoopBackOff with a growing back-off, restartPolicy Never / OnFailure end the pod, init
 * containers run first, and deleting a pod sends SIGTERM, lets in-flight requests drain, and deletes
 * it for good.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Resources, type ContainerStatus } from '@func/kube-client';
import { condition, eventsOf, getText, isReady, type EventObj, type Obj, podUntil, useNodeCluster } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const current = useNodeCluster();
const get = getText;
const fn = (extra: object = {}) => ({ name: 'fn', image: 'probe:v1', ...extra });
const readinessProbe = { httpGet: { path: '/health/readiness', port: 8080 }, periodSeconds: 1, failureThreshold: 1 };
const podOf = (name: string) => current.kube.get<Obj>(Resources.pods, name);
const status = (p: Obj) => p.status?.containerStatuses?.[0] ?? {};
const waitEvent = (name: string, test: (e: EventObj) => boolean) => until(`an event for ${name}`, async () => (await eventsOf(current.kube, name)).find(test));

describe('probes', () => {
  it('a failing readiness probe takes the pod out of Ready with an Unhealthy event, and back in when it passes', async () => {
    await current.kube.create(Resources.pods, { metadata: { name: 'ready' }, spec: { containers: [fn({ readinessProbe })] } });
    const pod = await podUntil(current.kube, 'ready', 'Ready', isReady);
    await get(pod.status.podIP, '/ready?set=false');
    const down = await podUntil(current.kube, 'ready', 'not Ready', (p) => condition(p, 'Ready')?.status === 'False');
    expect(condition(down, 'Ready')).toMatchObject({ reason: 'ContainersNotReady', message: 'containers with unready status: [fn]' });
    expect(status(down)).toMatchObject({ ready: false, started: true, state: { running: {} } });
    const unhealthy = await waitEvent('ready', (e) => e.reason === 'Unhealthy' && /statuscode/.test(e.message));
    expect(unhealthy).toMatchObject({ type: 'Warning', message: 'Readiness probe failed: HTTP probe failed with statuscode: 503', involvedObject: { fieldPath: 'spec.containers{fn}' } });
    await get(pod.status.podIP, '/ready?set=true');
    await podUntil(current.kube, 'ready', 'Ready again', isReady);
  });

  it('a failing liveness probe restarts the container (Killing event, restartCount 1)', async () => {
    const livenessProbe = { httpGet: { path: '/fail', port: 8080 }, initialDelaySeconds: 1, periodSeconds: 1, failureThreshold: 2 };
    await current.kube.create(Resources.pods, { metadata: { name: 'alive' }, spec: { terminationGracePeriodSeconds: 2, containers: [fn({ livenessProbe })] } });
    await podUntil(current.kube, 'alive', 'restarted', (p) => status(p).restartCount >= 1, 60_000);
    const killing = await waitEvent('alive', (e) => e.reason === 'Killing');
    expect(killing.message).toBe('Container fn failed liveness probe, will be restarted');
    const unhealthy = await waitEvent('alive', (e) => e.reason === 'Unhealthy' && /statuscode/.test(e.message));
    expect(unhealthy.message).toBe('Liveness probe failed: HTTP probe failed with statuscode: 500');
  });

  it('a tcpSocket readiness probe on a port nothing listens on keeps the pod unready, with the dial error', async () => {
    await current.kube.create(Resources.pods, { metadata: { name: 'tcp' }, spec: { containers: [fn({ readinessProbe: { tcpSocket: { port: 9999 }, periodSeconds: 1 } })] } });
    const unhealthy = await waitEvent('tcp', (e) => e.reason === 'Unhealthy');
    const pod = await podOf('tcp');
    expect(unhealthy.message).toBe(`Readiness probe failed: dial tcp ${pod.status.podIP}:9999: connect: connection refused`);
    expect(condition(pod, 'Ready').status).toBe('False');
    expect(pod.status.phase).toBe('Running');
  });
});

describe('crashes', () => {
  it('goes to CrashLoopBackOff with a back-off that grows, and a BackOff event', async () => {
    await current.kube.create(Resources.pods, { metadata: { name: 'crashy' }, spec: { containers: [fn({ env: [{ name: 'CRASH_ON_START', value: 'yes' }] })] } });
    const first = await podUntil(current.kube, 'crashy', 'CrashLoopBackOff', (p) => status(p).state?.waiting?.reason === 'CrashLoopBackOff', 60_000);
    const uid = first.metadata.uid;
    expect(status(first).state.waiting.message).toBe(`back-off 10s restarting failed container=fn pod=crashy_default(${uid})`);
    expect(status(first).lastState.terminated).toMatchObject({ exitCode: 1, reason: 'Error', containerID: expect.stringMatching(/^func:\/\//) });
    expect(first.status.phase).toBe('Running');
    const later = await podUntil(current.kube, 'crashy', 'a longer back-off', (p) => /^back-off 20s /.test(status(p).state?.waiting?.message ?? ''), 60_000);
    expect(status(later).restartCount).toBeGreaterThan(status(first).restartCount);
    const backoff = await waitEvent('crashy', (e) => e.reason === 'BackOff');
    expect(backoff).toMatchObject({ type: 'Warning', message: `Back-off restarting failed container fn in pod crashy_default(${uid})` });
    await current.kube.delete(Resources.pods, 'crashy', { gracePeriodSeconds: 0 });
  }, 90_000);

  it('restartPolicy Never: a failed container fails the pod; OnFailure: a clean exit completes it', async () => {
    const exit = (code: number) => fn({ command: ['node', '-e', `console.log("exiting ${code}"); process.exit(${code})`], terminationMessagePolicy: 'FallbackToLogsOnError' });
    await current.kube.create(Resources.pods, { metadata: { name: 'never' }, spec: { restartPolicy: 'Never', containers: [exit(2)] } });
    await current.kube.create(Resources.pods, { metadata: { name: 'onfailure' }, spec: { restartPolicy: 'OnFailure', containers: [exit(0)] } });
    const failed = await podUntil(current.kube, 'never', 'Failed', (p) => p.status?.phase === 'Failed');
    expect(status(failed).state.terminated).toMatchObject({ exitCode: 2, reason: 'Error', message: 'exiting 2\n' });
    expect(condition(failed, 'Ready')).toMatchObject({ status: 'False', reason: 'PodCompleted' });
    const done = await podUntil(current.kube, 'onfailure', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
    expect(status(done).state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(status(done).restartCount).toBe(0);
  });

  it('runs init containers to completion, in order, before the others', async () => {
    const init = (n: number) => ({ name: `init-${n}`, image: 'probe:v1', command: ['node', '-e', `console.log("init ${n}")`] });
    await current.kube.create(Resources.pods, { metadata: { name: 'inited' }, spec: { initContainers: [init(1), init(2)], containers: [fn()] } });
    const pod = await podUntil(current.kube, 'inited', 'Ready', isReady);
    expect(pod.status.initContainerStatuses.map((s: ContainerStatus) => [s.name, s.state.terminated?.reason, s.state.terminated?.exitCode])).toEqual([['init-1', 'Completed', 0], ['init-2', 'Completed', 0]]);
    expect(condition(pod, 'Initialized').status).toBe('True');
  });
});

describe('termination', () => {
  it('sends SIGTERM, lets an in-flight request drain, reports and deletes the pod for good', async () => {
    const out = join(current.cluster.dir, 'out');
    mkdirSync(out, { recursive: true });
    const spec = { terminationGracePeriodSeconds: 10, volumes: [{ name: 'out', hostPath: { path: out, type: 'Directory' } }], containers: [fn({ volumeMounts: [{ name: 'out', mountPath: '/out' }] })] };
    await current.kube.create(Resources.pods, { metadata: { name: 'drain' }, spec });
    const pod = await podUntil(current.kube, 'drain', 'Ready', isReady);
    await until('the function answers', () => get(pod.status.podIP, '/').catch(() => undefined));
    const slow = fetch(`http://${pod.status.podIP}:8080/slow?ms=1500`).then(async (r) => [r.status, await r.text()]);
    await new Promise((r) => setTimeout(r, 200));
    await current.kube.delete(Resources.pods, 'drain');
    expect(await slow).toEqual([200, 'slow done']);
    await until('drain gone', () => current.kube.get(Resources.pods, 'drain').then(() => false, () => true));
    expect(readFileSync(join(out, 'events.log'), 'utf8')).toBe('SIGTERM drain\ndrained drain\n');
    const killing = (await eventsOf(current.kube, 'drain')).find((e) => e.reason === 'Killing');
    expect(killing?.message).toBe('Stopping container fn');
  });
});
