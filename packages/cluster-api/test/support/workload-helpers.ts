/**
 * For the workload controller tests: waiting for a condition (never a fixed sleep), and pods driven
 * through their status subresource as a node agent (or kwok) would drive them — Running and Ready
 * with a pod IP, a readiness that fails, a container that exits.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { AdminUser } from '../../src/auth/credentials.js';
import { startServer } from '../../src/server.js';
import { openStorage } from '../../src/storage/factory.js';
import { startEtcd } from '../../testing/src/etcd-cluster.js';
import { request, tempDir, TestToken, type Reply } from './helpers.js';

export type Call = (method: string, path: string, init?: { body?: unknown; headers?: Record<string, string> }) => Promise<Reply>;

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

/** A server with every controller, on a real SQLite file or a real etcd, and a caller with the test token. */
export async function startWorkloadServer(backend: 'sqlite' | 'etcd', controllers?: readonly string[]): Promise<{ url: string; call: Call; close(): Promise<void> }> {
  const dir = tempDir();
  const etcd = backend === 'etcd' ? await startEtcd({ members: 1, dataRoot: '/dev/shm' }) : undefined;
  const storage = await openStorage(etcd ? etcd.url : `sqlite:${join(dir, 'state.db')}`);
  const server = await startServer({ storage, authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])), log: () => {}, ...(controllers && { controllers }) });
  const call: Call = (method, path, init = {}) => request(server.url, method, path, { ...init, token: TestToken });
  return {
    url: server.url,
    call,
    async close() {
      await server.close();
      await etcd?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A namespace of its own for a test. */
export async function freshNamespace(call: Call, prefix: string): Promise<string> {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  const r = await call('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  if (r.status !== 201) throw new Error(`namespace ${name}: ${r.status} ${r.text}`);
  return name;
}

export const merge = (call: Call, path: string, body: unknown): Promise<Reply> =>
  call('PATCH', path, { body, headers: { 'content-type': 'application/merge-patch+json' } });

/** The events of an object, oldest first, as `reason: message`. */
export async function eventsOf(call: Call, ns: string, kind: string, name: string): Promise<string[]> {
  const selector = encodeURIComponent(`involvedObject.kind=${kind},involvedObject.name=${name}`);
  const items = (await call('GET', `/api/v1/namespaces/${ns}/events?fieldSelector=${selector}`)).json?.items ?? [];
  return items.map((e: any) => `${e.reason}: ${e.message}`);
}
