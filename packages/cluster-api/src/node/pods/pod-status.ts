/**
 * A pod's status as the kubelet generates it (generateAPIPodStatus, getPhase, the pod condition
 * generators): the phase from the container statuses, the kubelet-owned conditions in its order
 * (PodReadyToStartContainers, Initialized, Ready, ContainersReady, PodScheduled) after any condition
 * others own, transition times kept while a condition's status stays, and the addresses. A pod whose
 * containers all run on a runtime reported kwok's way gets kwok's pod-ready status instead.
 */
import type { Condition, ContainerStatus, Pod, PodStatus } from '../types.js';
import { rfc3339 } from '../types.js';

export interface PodFacts {
  pod: Pod;
  init: ContainerStatus[];
  main: ContainerStatus[];
  /** Ephemeral containers (kubectl debug), when the pod has any. */
  ephemeral?: ContainerStatus[];
  sandboxReady: boolean;
  podIP: string;
  hostIP: string;
  startTime: string;
  /** The pod is being torn down for good (deleted, or done): its containers will not restart. */
  terminal: boolean;
  /** Every container runs on a runtime reported kwok's way (kwok's pod-ready fields). */
  kwok: boolean;
}

const KubeletConditions = new Set(['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled']);

type Phase = NonNullable<PodStatus['phase']>;

function initPending(facts: PodFacts): { pending: number; failed: number } {
  let pending = 0;
  let failed = 0;
  for (const c of facts.pod.spec.initContainers ?? []) {
    const s = facts.init.find((x) => x.name === c.name);
    const last = s?.lastState.terminated;
    if (!s || s.state.running) pending++;
    else if (s.state.terminated) failed += s.state.terminated.exitCode !== 0 ? 1 : 0;
    else if (last) failed += last.exitCode !== 0 ? 1 : 0;
    else pending++;
  }
  return { pending, failed };
}

/** The kubelet's getPhase. */
export function phaseOf(facts: PodFacts): Phase {
  const policy = facts.pod.spec.restartPolicy ?? 'Always';
  const { pending, failed } = initPending(facts);
  let running = 0, stopped = 0, succeeded = 0, waiting = 0, unknown = 0;
  for (const c of facts.pod.spec.containers) {
    const s = facts.main.find((x) => x.name === c.name);
    if (!s) unknown++;
    else if (s.state.running) running++;
    else if (s.state.terminated) (stopped++, (succeeded += s.state.terminated.exitCode === 0 ? 1 : 0));
    else if (s.state.waiting && s.lastState.terminated) stopped++;
    else if (s.state.waiting) waiting++;
    else unknown++;
  }
  if (failed > 0 && policy === 'Never') return 'Failed';
  const started = facts.main.some((s) => s.state.running || s.state.terminated || s.lastState.terminated);
  if ((pending > 0 && !started) || waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (facts.terminal) return stopped === succeeded ? 'Succeeded' : 'Failed';
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    return policy === 'Never' ? 'Failed' : 'Running';
  }
  return 'Pending';
}

const condition = (type: string, ok: boolean, reason?: string, message?: string): Condition =>
  ({ type, status: ok ? 'True' : 'False', lastProbeTime: null, ...(reason ? { reason } : {}), ...(message ? { message } : {}) });

function readiness(facts: PodFacts, phase: Phase): { containers: Condition; pod: Condition } {
  const done = phase === 'Succeeded' || phase === 'Failed';
  if (done) return { containers: condition('ContainersReady', false, 'PodCompleted'), pod: condition('Ready', false, 'PodCompleted') };
  const unknown = facts.pod.spec.containers.filter((c) => !facts.main.some((s) => s.name === c.name)).map((c) => c.name);
  const unready = facts.main.filter((s) => !s.ready).map((s) => s.name);
  const parts = [...(unknown.length ? [`containers with unknown status: [${unknown.join(' ')}]`] : []), ...(unready.length ? [`containers with unready status: [${unready.join(' ')}]`] : [])];
  const containers = parts.length ? condition('ContainersReady', false, 'ContainersNotReady', parts.join(', ')) : condition('ContainersReady', true);
  if (parts.length) return { containers, pod: { ...containers, type: 'Ready' } };
  for (const gate of facts.pod.spec.readinessGates ?? []) {
    const c = (facts.pod.status?.conditions ?? []).find((x) => x.type === gate.conditionType);
    if (!c) return { containers, pod: condition('Ready', false, 'ReadinessGatesNotReady', `corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`) };
    if (c.status !== 'True') return { containers, pod: condition('Ready', false, 'ReadinessGatesNotReady', `the status of pod readiness gate "${gate.conditionType}" is not "True", but ${c.status}`) };
  }
  return { containers, pod: condition('Ready', true) };
}

function initialized(facts: PodFacts, phase: Phase): Condition {
  const inits = facts.pod.spec.initContainers ?? [];
  if (inits.length === 0) return condition('Initialized', true);
  if (phase === 'Succeeded') return condition('Initialized', true, 'PodCompleted');
  const incomplete = inits.filter((c) => facts.init.find((s) => s.name === c.name)?.state.terminated?.exitCode !== 0).map((c) => c.name);
  return incomplete.length ? condition('Initialized', false, 'ContainersNotInitialized', `containers with incomplete status: [${incomplete.join(' ')}]`) : condition('Initialized', true);
}

/** Keeps a condition's lastTransitionTime while its status stays the same. */
function stamped(conditions: Condition[], previous: readonly Condition[] = []): Condition[] {
  const now = rfc3339();
  return conditions.map((c) => {
    const was = previous.find((p) => p.type === c.type);
    return { ...c, lastTransitionTime: was && was.status === c.status && was.lastTransitionTime ? was.lastTransitionTime : now };
  });
}

export function podStatus(facts: PodFacts): PodStatus {
  const previous = facts.pod.status?.conditions ?? [];
  const others = previous.filter((c) => !KubeletConditions.has(c.type));
  const ephemeral = facts.ephemeral?.length ? { ephemeralContainerStatuses: facts.ephemeral } : {};
  const addresses = { hostIP: facts.hostIP, hostIPs: [{ ip: facts.hostIP }], ...(facts.podIP ? { podIP: facts.podIP, podIPs: [{ ip: facts.podIP }] } : {}) };
  if (facts.kwok && !facts.terminal) {
    const gates = (facts.pod.spec.readinessGates ?? []).map((g) => condition(g.conditionType, true));
    const conditions = stamped([condition('Initialized', true), condition('Ready', true), condition('ContainersReady', true), ...gates, condition('PodScheduled', true)], previous);
    return { conditions: [...others, ...conditions], containerStatuses: facts.main, initContainerStatuses: facts.init, ...ephemeral, ...addresses, phase: 'Running', startTime: facts.startTime };
  }
  const phase = phaseOf(facts);
  const ready = readiness(facts, phase);
  const kubelet = [condition('PodReadyToStartContainers', facts.sandboxReady && !facts.terminal), initialized(facts, phase), ready.pod, ready.containers, condition('PodScheduled', true)];
  return {
    conditions: [...others, ...stamped(kubelet, previous)],
    containerStatuses: facts.main,
    ...(facts.init.length ? { initContainerStatuses: facts.init } : {}),
    ...ephemeral,
    ...addresses,
    phase,
    startTime: facts.startTime,
  };
}
