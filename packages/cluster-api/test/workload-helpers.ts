/**
 * For the workload controller tests: waiting for a condition (never a fixed sleep), and pods driven
 * through their status subresource as a node agent (or kwok) would drive them — Running and Ready
 * with a pod IP, a readiness that fails, a container that exits.
 */
import type { Reply } from './helpers.js';

export type Call = (method: string, path: string, init?: { body?: unknown; headers?: Record<string, string> }) => Promise<Reply>;

/** Polls `probe` until it returns something truthy; fails with `what` and the last value after `ms`. */
export async function waitFor<T>(probe: () => Promise<T> | T, what: string, ms = 15_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  let last: T | undefined;
  for (;;) {
    last = await probe();
    if (last) return last as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)?.slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const now = () => `${new Date().toISOString().slice(0, 19)}Z`;

/** The status a kubelet writes for a running pod, ready or not. */
export const runningStatus = (ready: boolean, podIP?: string) => ({
  phase: 'Running',
  ...(podIP && { podIP, podIPs: [{ ip: podIP }] }),
  conditions: [
    { type: 'PodScheduled', status: 'True', lastTransitionTime: now() },
    { type: 'Initialized', status: 'True', lastTransitionTime: now() },
    { type: 'ContainersReady', status: ready ? 'True' : 'False', lastTransitionTime: now() },
    { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: now() },
  ],
  containerStatuses: [{ name: 'app', ready, restartCount: 0, image: 'nginx', imageID: '', started: true, state: { running: { startedAt: now() } } }],
});

/** A finished pod's status (a Job's pods). */
export const finishedStatus = (succeeded: boolean, restartCount = 0) => ({
  phase: succeeded ? 'Succeeded' : 'Failed',
  conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: now(), reason: 'PodCompleted' }],
  containerStatuses: [{
    name: 'app', ready: false, restartCount, image: 'busybox', imageID: '', started: false,
    state: { terminated: { exitCode: succeeded ? 0 : 1, reason: succeeded ? 'Completed' : 'Error', startedAt: now(), finishedAt: now() } },
  }],
});

export const podsPath = (ns: string) => `/api/v1/namespaces/${ns}/pods`;

/** Sets a pod's status through /status (a merge patch: what a node agent owns). */
export async function setPodStatus(call: Call, ns: string, name: string, status: unknown): Promise<Reply> {
  return call('PATCH', `${podsPath(ns)}/${name}/status`, { body: { status }, headers: { 'content-type': 'application/merge-patch+json' } });
}

/** Every pod of `ns` matching `selector` that is not being deleted. */
export async function livePods(call: Call, ns: string, selector = ''): Promise<any[]> {
  const r = await call('GET', `${podsPath(ns)}${selector ? `?labelSelector=${encodeURIComponent(selector)}` : ''}`);
  return (r.json?.items ?? []).filter((p: any) => !p.metadata.deletionTimestamp);
}

/** Marks every live, not yet ready pod matching `selector` Running and Ready; answers how many it marked. */
export async function readyAll(call: Call, ns: string, selector = ''): Promise<number> {
  const pods = (await livePods(call, ns, selector)).filter((p) => !(p.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True'));
  await Promise.all(pods.map((p) => setPodStatus(call, ns, p.metadata.name, runningStatus(true))));
  return pods.length;
}

export const deployment = (name: string, replicas: number, image = 'nginx:1.25', extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
    ...extra,
  },
});

export const conditionOf = (o: any, type: string): any => (o?.status?.conditions ?? []).find((c: any) => c.type === type);
