/**
 * The event recorder (client-go's tools/record) writing through kube-client to the real cluster API:
 * a repeat patches the stored event's count, ten distinct messages of one reason become one
 * aggregate, the spam filter holds an object to 25 events, a patch of an event gone starts a new
 * one, and a refused write is logged and does not stop the writer.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EventBroadcaster, KubeClient, kubeEventSink, type KubeObject, loadConnection, Resources } from '../src/index.js';
import { type Cluster, startCluster } from './cluster.js';

type Event = KubeObject & { involvedObject: { name: string; fieldPath?: string }; reason: string; message: string; count: number; source: { component: string; host?: string }; reportingComponent: string; reportingInstance: string; firstTimestamp: string };

describe('EventBroadcaster against cluster-api serve', () => {
  let cluster: Cluster;
  let kube: KubeClient;
  let broadcaster: EventBroadcaster;
  const logged: Record<string, unknown>[] = [];
  const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ev', uid: `uid-${name}` } });
  const about = async (name: string): Promise<Event[]> => (await kube.list<Event>(Resources.events, { namespace: 'ev' })).items.filter((e) => e.involvedObject.name === name);
  /** The events about `name`, once there is one. */
  const written = (name: string) => vi.waitFor(async () => {
    const events = await about(name);
    if (events.length === 0) throw new Error(`no event about ${name} yet`);
    return events;
  }, { timeout: 20_000, interval: 50 });
  /** Events are written in order: once `marker`'s is stored, every event recorded before it was written. */
  const flushed = async (recorder: ReturnType<EventBroadcaster['recorder']>, marker: string) => {
    recorder.event(pod(marker), 'Normal', 'Marker', 'written last');
    await written(marker);
  };

  beforeAll(async () => {
    cluster = await startCluster();
    kube = new KubeClient(loadConnection({ kubeconfig: cluster.kubeconfig, namespace: 'ev' }));
    await kube.create(Resources.namespaces, { metadata: { name: 'ev' } });
    broadcaster = new EventBroadcaster(kubeEventSink(kube), (e) => logged.push(e));
  });
  afterAll(async () => {
    await broadcaster?.close();
    kube?.close();
    await cluster?.stop();
  });

  it('writes an event once and counts its repeats on it', async () => {
    const recorder = broadcaster.recorder({ component: 'kubelet', host: 'node-a', instance: 'node-a' });
    recorder.event({ kind: 'Pod', apiVersion: 'v1', name: 'web', namespace: 'ev', uid: 'uid-web', fieldPath: 'spec.containers{app}' }, 'Normal', 'Pulled', 'image present');
    recorder.event({ kind: 'Pod', apiVersion: 'v1', name: 'web', namespace: 'ev', uid: 'uid-web', fieldPath: 'spec.containers{app}' }, 'Normal', 'Pulled', 'image present');
    recorder.event({ kind: 'Pod', apiVersion: 'v1', name: 'web', namespace: 'ev', uid: 'uid-web', fieldPath: 'spec.containers{side}' }, 'Normal', 'Pulled', 'image present');
    await flushed(recorder, 'after-web');
    const events = await about('web');
    expect(events.map((e) => [e.involvedObject.fieldPath, e.count]).sort()).toEqual([['spec.containers{app}', 2], ['spec.containers{side}', 1]]);
    const [e] = events;
    expect(e!.metadata!.name).toMatch(/^web\.[0-9a-f]+$/);
    expect([e!.source, e!.reportingComponent, e!.reportingInstance]).toEqual([{ component: 'kubelet', host: 'node-a' }, 'kubelet', 'node-a']);
  });

  it('aggregates ten distinct messages of one reason into one event', async () => {
    const recorder = broadcaster.recorder({ component: 'default-scheduler' });
    for (let i = 0; i < 12; i++) recorder.event(pod('busy'), 'Warning', 'FailedScheduling', `0/${i} nodes are available`);
    await flushed(recorder, 'after-busy');
    const events = await about('busy');
    expect(events.filter((e) => !e.message.startsWith('(combined')).length).toBe(9);
    const combined = events.filter((e) => e.message.startsWith('(combined from similar events): '));
    expect(combined.map((e) => [e.count, e.message])).toEqual([[3, '(combined from similar events): 0/11 nodes are available']]);
  });

  it('holds one object to a burst of 25 events', async () => {
    const recorder = broadcaster.recorder({ component: 'replicaset-controller' });
    for (let i = 0; i < 40; i++) recorder.event(pod('noisy'), 'Normal', `Reason${i}`, 'created');
    await flushed(recorder, 'after-noisy');
    expect((await about('noisy')).length).toBe(25);
  });

  it('starts a new event when the one it would patch is gone', async () => {
    const recorder = broadcaster.recorder({ component: 'job-controller' });
    recorder.event(pod('gone'), 'Normal', 'Completed', 'done');
    const [first] = await written('gone');
    await kube.delete(Resources.events, first!.metadata!.name!, { namespace: 'ev' });
    recorder.event(pod('gone'), 'Normal', 'Completed', 'done');
    const [again] = await written('gone');
    expect(again!.metadata!.name).not.toBe(first!.metadata!.name);
    expect(again!.count).toBe(1);
  });

  it('logs a refused event and goes on; a missing namespace drops its events quietly', async () => {
    const recorder = broadcaster.recorder({ component: 'endpoint-controller' });
    logged.length = 0;
    recorder.event({ ...pod('x'), metadata: { name: 'Not A Name', namespace: 'ev' } }, 'Normal', 'Bad', 'an invalid event name');
    recorder.event({ ...pod('lost'), metadata: { name: 'lost', namespace: 'no-such-namespace' } }, 'Normal', 'Lost', 'nowhere');
    await flushed(recorder, 'after-refused');
    expect(logged.map((e) => [e.msg, e.reason])).toEqual([['event not recorded', 'Bad']]);
    expect(String(logged[0]!.error)).not.toMatch(/at .*\.js:\d+/);
  });
});
