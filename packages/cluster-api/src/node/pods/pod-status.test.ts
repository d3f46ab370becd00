import { describe, expect, it } from 'vitest';
import { phaseOf, podStatus, type PodFacts } from './pod-status.js';
import type { ContainerStatus, Pod } from '../types.js';

const running: ContainerStatus = { name: 'c', state: { running: { startedAt: 't' } }, lastState: {}, ready: true, restartCount: 0, image: 'i', imageID: '' };
const exited = (code: number): ContainerStatus => ({ ...running, ready: false, state: { terminated: { exitCode: code } } });
const backingOff: ContainerStatus = { ...running, ready: false, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1 } } };
const creating: ContainerStatus = { ...running, ready: false, state: { waiting: { reason: 'ContainerCreating' } } };

const facts = (restartPolicy: Pod['spec']['restartPolicy'], main: ContainerStatus[], extra: Partial<PodFacts> = {}): PodFacts => ({
  pod: { metadata: { name: 'p' }, spec: { restartPolicy, containers: main.map((c) => ({ name: c.name })) } },
  init: [], main, sandboxReady: true, podIP: '127.64.0.2', hostIP: '127.0.0.1', startTime: 't', terminal: false, kwok: false, ...extra,
});

describe('phaseOf (the kubelet\'s getPhase)', () => {
  it.each([
    ['Always', [creating], 'Pending'],
    ['Always', [running], 'Running'],
    ['Always', [backingOff], 'Running'],
    ['Always', [exited(0)], 'Running'],
    ['OnFailure', [exited(0)], 'Succeeded'],
    ['OnFailure', [exited(1)], 'Running'],
    ['Never', [exited(1)], 'Failed'],
    ['Never', [exited(0)], 'Succeeded'],
  ] as const)('restartPolicy %s with %j → %s', (policy, main, phase) => expect(phaseOf(facts(policy, [...main]))).toBe(phase));

  it('a deleted pod whose containers stopped is terminal whatever its policy', () => {
    expect(phaseOf(facts('Always', [exited(143)], { terminal: true }))).toBe('Failed');
    expect(phaseOf(facts('Always', [exited(0)], { terminal: true }))).toBe('Succeeded');
  });

  it('a failed init container fails a Never pod; a pending one keeps it Pending', () => {
    const init = { metadata: { name: 'p' }, spec: { restartPolicy: 'Never' as const, initContainers: [{ name: 'i' }], containers: [{ name: 'c' }] } };
    expect(phaseOf({ ...facts('Never', [creating]), pod: init, init: [{ ...exited(2), name: 'i' }] })).toBe('Failed');
    expect(phaseOf({ ...facts('Never', [creating]), pod: init, init: [{ ...running, name: 'i' }] })).toBe('Pending');
  });
});

describe('podStatus', () => {
  it('writes the kubelet\'s conditions in its order, after conditions others own, keeping transition times', () => {
    const previous = [{ type: 'DisruptionTarget', status: 'True' as const }, { type: 'Ready', status: 'True' as const, lastTransitionTime: '2020-01-01T00:00:00Z' }];
    const f = facts('Always', [running]);
    f.pod.status = { conditions: previous };
    const status = podStatus(f);
    expect(status.conditions!.map((c) => c.type)).toEqual(['DisruptionTarget', 'PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled']);
    expect(status.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime).toBe('2020-01-01T00:00:00Z');
    expect(status).toMatchObject({ phase: 'Running', podIP: '127.64.0.2', podIPs: [{ ip: '127.64.0.2' }], hostIPs: [{ ip: '127.0.0.1' }] });
  });

  it('names unready containers, and readiness gates that do not hold', () => {
    const unready = podStatus(facts('Always', [{ ...running, ready: false }]));
    expect(unready.conditions!.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [c]' });
    const gated = facts('Always', [running]);
    gated.pod.spec.readinessGates = [{ conditionType: 'example.com/lb' }];
    expect(podStatus(gated).conditions!.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'ReadinessGatesNotReady', message: 'corresponding condition of pod readiness gate "example.com/lb" does not exist.' });
  });
});
