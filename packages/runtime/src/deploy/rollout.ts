/**
 * Waiting for a rollout, as `kubectl rollout status` judges a Deployment (the controller has seen
 * the new generation; every replica is updated, the old ones are gone, the updated ones are
 * available) and as Knative judges its Service (Ready=True for the latest generation). The pods are
 * watched beside it for the progress display and to fail fast: a new pod whose image cannot be
 * pulled, or whose process exits, will not become ready by waiting, so the wait ends there with the
 * reason instead of at the timeout.
 */
import type { KubeClient } from '@func/kube-client';
import type { ContainerStatus, Deployment, Pod, Service } from './kube-types.js';
import { CONTAINER_NAME, NAME_LABEL } from './manifests.js';

export interface PodSummary {
  name: string;
  /** kubectl's STATUS column: Pending, ContainerCreating, Running, CrashLoopBackOff, Terminating… */
  status: string;
  ready: boolean;
  restarts: number;
  image: string;
  podIP?: string;
  nodeName?: string;
}

export interface RolloutState {
  desired: number;
  updated: number;
  available: number;
  pods: PodSummary[];
  done: boolean;
  /** Why the new version cannot start, naming the pod: the wait is over. */
  failure?: { pod: string; reason: string; message: string };
}

const REVISION_LABEL = 'serving.knative.dev/revision';

const PULL_OR_CONFIG = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull', 'CreateContainerConfigError', 'CreateContainerError', 'RunContainerError', 'CrashLoopBackOff']);

function userContainer(pod: Pod): ContainerStatus | undefined {
  return pod.status?.containerStatuses?.find((c) => c.name === CONTAINER_NAME) ?? pod.status?.containerStatuses?.[0];
}

export function podSummary(pod: Pod): PodSummary {
  const c = userContainer(pod);
  const state = c?.state;
  const status = pod.metadata.deletionTimestamp ? 'Terminating' : state?.waiting?.reason ?? state?.terminated?.reason ?? (state?.running ? 'Running' : pod.status?.reason ?? pod.status?.phase ?? 'Pending');
  const spec = pod.spec.containers.find((x) => x.name === CONTAINER_NAME) ?? pod.spec.containers[0];
  return { name: pod.metadata.name, status, ready: c?.ready ?? false, restarts: c?.restartCount ?? 0, image: spec?.image ?? '', podIP: pod.status?.podIP, nodeName: pod.spec.nodeName };
}

/** A reason the pod's function will not start: a pull or config error, or a process that exited with an error. */
export function podFailure(pod: Pod): { reason: string; message: string } | undefined {
  const c = userContainer(pod);
  const waiting = c?.state?.waiting;
  if (waiting?.reason && PULL_OR_CONFIG.has(waiting.reason)) return { reason: waiting.reason, message: waiting.message ?? '' };
  const exited = c?.state?.terminated ?? c?.lastState?.terminated;
  if (exited && exited.exitCode !== 0) return { reason: exited.reason ?? 'Error', message: exited.message ?? `exit code ${exited.exitCode}` };
  return undefined;
}

/** Pods running `image` are the new version's; failures of the old version's pods are not this rollout's. */
export function deploymentProgress(dep: Deployment | undefined, pods: Pod[], image: string): RolloutState {
  const s = dep?.status ?? {};
  const desired = dep?.spec.replicas ?? 1;
  const summaries = pods.map(podSummary).sort((a, b) => a.name.localeCompare(b.name));
  const observed = dep !== undefined && (s.observedGeneration ?? 0) >= (dep.metadata.generation ?? 1);
  const updated = observed ? s.updatedReplicas ?? 0 : 0;
  const available = observed ? s.availableReplicas ?? 0 : 0;
  const done = observed && updated >= desired && (s.replicas ?? 0) <= updated && available >= updated;
  const failing = pods.filter((p) => !p.metadata.deletionTimestamp && podSummary(p).image === image).map((p) => ({ pod: p.metadata.name, ...podFailure(p) })).find((f) => f.reason);
  return { desired, updated, available, pods: summaries, done, ...(failing && !done ? { failure: failing as RolloutState['failure'] } : {}) };
}

/**
 * Knative's judgement: the Service has seen its generation, is Ready, its latest created revision
 * is the latest ready one, which runs this image and has the traffic. A pod of the new image that cannot
 * start is the failure named (its log says why); else the Service's own Ready=False reason.
 */
export function knativeProgress(ksvc: Service | undefined, pods: Pod[], image: string): RolloutState {
  const status = ksvc?.status;
  const ready = status?.conditions?.find((c) => c.type === 'Ready');
  const observed = ksvc !== undefined && (status?.observedGeneration ?? 0) >= (ksvc.metadata.generation ?? 1);
  const latestReady = status?.latestReadyRevisionName;
  const latest = latestReady !== undefined && status?.latestCreatedRevisionName === latestReady;
  // The status may still speak of the previous template for a moment: the latest ready revision
  // must be the one running this image, and the Route must send it the traffic.
  const runsImage = pods.some((p) => p.metadata.labels?.[REVISION_LABEL] === latestReady && podSummary(p).image === image);
  const routed = (status?.traffic ?? []).every((t) => !t.percent || t.revisionName === latestReady);
  const done = observed && ready?.status === 'True' && latest && runsImage && routed;
  const summaries = pods.map(podSummary).sort((a, b) => a.name.localeCompare(b.name));
  const failingPod = pods.filter((p) => !p.metadata.deletionTimestamp && podSummary(p).image === image).map((p) => ({ pod: p.metadata.name, ...podFailure(p) })).find((f) => f.reason);
  const failed = observed && ready?.status === 'False' ? { pod: status?.latestCreatedRevisionName ?? ksvc!.metadata.name, reason: ready.reason ?? 'NotReady', message: ready.message ?? '' } : undefined;
  const failing = failingPod ?? failed;
  const mine = summaries.filter((p) => p.image === image);
  return { desired: 1, updated: mine.length ? 1 : 0, available: done ? 1 : mine.filter((p) => p.ready).length ? 1 : 0, pods: summaries, done, ...(failing && !done ? { failure: failing as RolloutState['failure'] } : {}) };
}

export interface WaitOptions {
  kind: 'Deployment' | 'KnativeService';
  name: string;
  namespace: string;
  image: string;
  timeoutMs: number;
  onProgress?: (state: RolloutState) => void;
}

/** Resolves with the final state: done, failed, or (at the timeout) neither. */
export async function waitForRollout(kube: KubeClient, opts: WaitOptions): Promise<RolloutState & { timedOut: boolean }> {
  const { Informer, Resources } = await import('@func/kube-client');
  const selector = { namespace: opts.namespace, labelSelector: `${NAME_LABEL}=${opts.name}`, minBackoffMs: 100, maxBackoffMs: 1000 };
  const type = opts.kind === 'Deployment' ? Resources.deployments : Resources.knativeServices;
  const owner = new Informer<Deployment & Service>(kube, type, selector);
  const pods = new Informer<Pod>(kube, Resources.pods, selector);
  const evaluate = () => {
    const target = owner.get(opts.name, opts.namespace);
    return opts.kind === 'Deployment' ? deploymentProgress(target, pods.list(), opts.image) : knativeProgress(target, pods.list(), opts.image);
  };
  try {
    return await new Promise((resolve) => {
      const timer = setTimeout(() => resolve({ ...evaluate(), timedOut: true }), opts.timeoutMs);
      const check = () => {
        const state = evaluate();
        opts.onProgress?.(state);
        if (state.done || state.failure) {
          clearTimeout(timer);
          resolve({ ...state, timedOut: false });
        }
      };
      owner.on('add', check).on('update', check).on('delete', check).start();
      pods.on('add', check).on('update', check).on('delete', check).start();
      void Promise.all([owner.synced, pods.synced]).then(check);
    });
  } finally {
    await Promise.all([owner.stop(), pods.stop()]);
  }
}
