import { describe, expect, it } from 'vitest';
import type { Condition, Pod, Service } from './kube-types.js';
import { parseSplit, rollbackTarget, type RevisionLine } from './revisions.js';
import { knativeProgress } from './rollout.js';

const IMAGE = `localhost/hello@sha256:${'b'.repeat(64)}`;
const rev = (n: number, ready = true, percent = 0): RevisionLine => ({ name: `hello-0000${n}`, generation: n, ready, percent, tags: [] });
const ksvc = (status: Service['status'], generation = 2): Service =>
  ({ apiVersion: 'serving.knative.dev/v1', kind: 'Service', metadata: { name: 'hello', generation }, spec: { ports: [] }, status }) as Service;
const pod = (revision: string, image: string, ready: boolean): Pod => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name: `${revision}-deployment-abc-x`, labels: { 'serving.knative.dev/revision': revision } },
  spec: { containers: [{ name: 'user-container', image }] },
  status: { phase: 'Running', containerStatuses: [{ name: 'user-container', ready, restartCount: 0, image, imageID: '', state: { running: {} }, lastState: {} }] },
});

describe('rollbackTarget', () => {
  const serving = ksvc({ traffic: [{ revisionName: 'hello-00003', percent: 100 }], latestReadyRevisionName: 'hello-00003' });
  it('is the newest ready revision older than the one serving', () => {
    expect(rollbackTarget(serving, [rev(3, true, 100), rev(2, false), rev(1)])).toBe('hello-00001');
  });
  it('after a rollback, is the one before the revision that now serves', () => {
    const pinned = ksvc({ traffic: [{ revisionName: 'hello-00002', percent: 100 }], latestReadyRevisionName: 'hello-00003' });
    expect(rollbackTarget(pinned, [rev(3), rev(2, true, 100), rev(1)])).toBe('hello-00001');
  });
  it('is the named revision when it is ready', () => {
    expect(rollbackTarget(serving, [rev(3, true, 100), rev(2), rev(1)], 'hello-00003')).toBe('hello-00003');
  });
  it('refuses a revision that does not exist, one that is not ready, and a Service with nothing earlier', () => {
    expect(() => rollbackTarget(serving, [rev(3, true, 100), rev(1)], 'hello-00009')).toThrow('Knative Service hello has no revision hello-00009; its revisions: hello-00003, hello-00001.');
    expect(() => rollbackTarget(serving, [rev(3, true, 100), rev(2, false)], 'hello-00002')).toThrow('Revision hello-00002 of hello is not ready');
    expect(() => rollbackTarget(serving, [rev(3, true, 100), rev(2, false)])).toThrow('Knative Service hello has no ready revision before hello-00003 to roll back to.');
  });
});

describe('knativeProgress (Knative Ready for this image)', () => {
  const ready: Condition[] = [{ type: 'Ready', status: 'True' }];
  it('is done once the latest ready revision is the latest created, runs the image and has the traffic', () => {
    const s = ksvc({ observedGeneration: 2, conditions: ready, latestCreatedRevisionName: 'hello-00002', latestReadyRevisionName: 'hello-00002', traffic: [{ revisionName: 'hello-00002', percent: 100 }] });
    expect(knativeProgress(s, [pod('hello-00002', IMAGE, true)], IMAGE).done).toBe(true);
  });
  it('is not done while the status still speaks of the previous template, or the Route serves another revision', () => {
    const stale = ksvc({ observedGeneration: 2, conditions: ready, latestCreatedRevisionName: 'hello-00001', latestReadyRevisionName: 'hello-00001', traffic: [{ revisionName: 'hello-00001', percent: 100 }] });
    expect(knativeProgress(stale, [pod('hello-00001', 'old', true), pod('hello-00002', IMAGE, true)], IMAGE).done).toBe(false);
    const pinned = ksvc({ observedGeneration: 2, conditions: ready, latestCreatedRevisionName: 'hello-00002', latestReadyRevisionName: 'hello-00002', traffic: [{ revisionName: 'hello-00001', percent: 100 }] });
    expect(knativeProgress(pinned, [pod('hello-00002', IMAGE, true)], IMAGE).done).toBe(false);
    const unobserved = ksvc({ observedGeneration: 1, conditions: ready, latestCreatedRevisionName: 'hello-00002', latestReadyRevisionName: 'hello-00002' });
    expect(knativeProgress(unobserved, [pod('hello-00002', IMAGE, true)], IMAGE).done).toBe(false);
  });
  it('names a failing pod of the new image (its log is read), else the Service\'s Ready=False reason', () => {
    const failing = pod('hello-00002', IMAGE, false);
    failing.status!.containerStatuses![0]!.state = { waiting: { reason: 'CrashLoopBackOff', message: 'back-off' } };
    const s = ksvc({ observedGeneration: 2, conditions: [{ type: 'Ready', status: 'False', reason: 'RevisionFailed', message: 'x' }], latestCreatedRevisionName: 'hello-00002', latestReadyRevisionName: 'hello-00001' });
    expect(knativeProgress(s, [failing], IMAGE).failure).toEqual({ pod: failing.metadata.name, reason: 'CrashLoopBackOff', message: 'back-off' });
    expect(knativeProgress(s, [], IMAGE).failure).toEqual({ pod: 'hello-00002', reason: 'RevisionFailed', message: 'x' });
  });
});

describe('parseSplit (kn\'s --traffic form)', () => {
  const revisions = [rev(2), rev(1)];
  it('reads <revision>=<percent> and @latest=<percent>', () => {
    expect(parseSplit(['hello-00001=90', '@latest=10'], revisions, 'hello')).toEqual([{ revisionName: 'hello-00001', percent: 90 }, { latestRevision: true, percent: 10 }]);
  });
  it.each([
    [['hello-00001=90'], 'Traffic targets sum to 90, want 100: --split hello-00001=90.'],
    [['hello-00001=101'], '--split "hello-00001=101" is not <revision>=<percent>'],
    [['hello-00001=-1', '@latest=101'], '--split "hello-00001=-1" is not'],
    [['Hello=100'], '--split "Hello=100" is not'],
    [['=100'], '--split "=100" is not'],
    [['hello-00007=100'], 'Knative Service hello has no revision hello-00007; its revisions: hello-00002, hello-00001.'],
  ])('refuses %j', (specs, message) => {
    expect(() => parseSplit(specs, revisions, 'hello')).toThrow(message);
  });
});
