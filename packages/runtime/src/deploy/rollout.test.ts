import { describe, expect, it } from 'vitest';
import type { ContainerStatus, Deployment, Pod } from './kube-types.js';
import { deploymentProgress, podFailure, podSummary } from './rollout.js';
import { describeRollout } from './progress.js';

const NEW = `localhost/hello@sha256:${'b'.repeat(64)}`;
const OLD = `localhost/hello@sha256:${'a'.repeat(64)}`;

const dep = (generation: number, status: Deployment['status'], replicas = 1): Deployment => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'hello', generation },
  spec: { replicas, selector: { matchLabels: {} }, template: { metadata: { labels: {} }, spec: { containers: [] } } }, status,
});
const pod = (name: string, image: string, c: Partial<ContainerStatus> | undefined, extra: Partial<Pod['metadata']> = {}): Pod => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, ...extra },
  spec: { containers: [{ name: 'user-container', image }] },
  status: { phase: 'Running', containerStatuses: c ? [{ name: 'user-container', ready: false, restartCount: 0, image, imageID: '', state: {}, lastState: {}, ...c }] : undefined },
});

describe('deploymentProgress (kubectl rollout status)', () => {
  it.each([
    ['the controller has not seen the new generation', dep(2, { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1 }), false],
    ['the new replica is not available yet', dep(2, { observedGeneration: 2, replicas: 2, updatedReplicas: 1, availableReplicas: 1 }), false],
    ['an old replica is still there', dep(2, { observedGeneration: 2, replicas: 2, updatedReplicas: 1, availableReplicas: 2 }), false],
    ['every replica updated and available', dep(2, { observedGeneration: 2, replicas: 1, updatedReplicas: 1, availableReplicas: 1 }), true],
    ['three of three', dep(5, { observedGeneration: 5, replicas: 3, updatedReplicas: 3, availableReplicas: 3 }, 3), true],
  ])('%s → done %s', (_, d, done) => {
    expect(deploymentProgress(d, [], NEW).done).toBe(done);
  });

  it('fails fast on a new pod that cannot pull or start, ignoring old pods', () => {
    const pending = dep(2, { observedGeneration: 2, replicas: 2, updatedReplicas: 1, availableReplicas: 1 });
    const crashingOld = pod('hello-old', OLD, { state: { waiting: { reason: 'CrashLoopBackOff' } } });
    expect(deploymentProgress(pending, [crashingOld], NEW).failure).toBeUndefined();
    const pullFail = pod('hello-new', NEW, { state: { waiting: { reason: 'ErrImagePull', message: 'not found' } } });
    expect(deploymentProgress(pending, [crashingOld, pullFail], NEW).failure).toEqual({ pod: 'hello-new', reason: 'ErrImagePull', message: 'not found' });
    const exited = pod('hello-new', NEW, { state: { waiting: { reason: 'ContainerCreating' } }, lastState: { terminated: { exitCode: 1, reason: 'Error' } } });
    expect(deploymentProgress(pending, [exited], NEW).failure).toMatchObject({ pod: 'hello-new', reason: 'Error' });
  });

  it('summarises pods as kubectl get pods does', () => {
    expect(podSummary(pod('a', NEW, { ready: true, restartCount: 2, state: { running: {} } }))).toMatchObject({ status: 'Running', ready: true, restarts: 2 });
    expect(podSummary(pod('b', NEW, { state: { waiting: { reason: 'ContainerCreating' } } })).status).toBe('ContainerCreating');
    expect(podSummary(pod('c', NEW, undefined)).status).toBe('Running');
    expect(podSummary(pod('d', NEW, { state: { running: {} } }, { deletionTimestamp: '2026-01-01T00:00:00Z' })).status).toBe('Terminating');
    expect(podFailure(pod('e', NEW, { state: { terminated: { exitCode: 0, reason: 'Completed' } } }))).toBeUndefined();
  });

  it('one progress line: ready count and each pod, old ones marked', () => {
    const state = deploymentProgress(dep(2, { observedGeneration: 2, replicas: 2, updatedReplicas: 1, availableReplicas: 1 }), [pod('hello-new', NEW, { state: { running: {} } }), pod('hello-old', OLD, { ready: true, state: { running: {} } })], NEW);
    expect(describeRollout(state, NEW)).toBe(`rolling out localhost/hello@sha256:bbbbbbbbbbbb…: 0/1 ready — hello-new Running, hello-old Running (ready) (old)`);
  });
});
