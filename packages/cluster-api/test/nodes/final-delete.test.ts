/**
 * The node agent's final delete of a pod (grace 0, uid precondition) when the API server refuses
 * it: the refusal is logged and the delete retried, never dropped as an unhandled rejection, even
 * when the pod leaves the API while the refused delete is in flight (what ended `serve` on a
 * foreground cascade delete: the Node authorizer answered 403 for a pod already gone). The refusal
 * is a real Status (403 Forbidden) from the agent's client, held until the test lets it go.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeApiError, KubeClient, Resources, type ResourceType } from '@func/kube-client';
import { NodeAgent } from '../../src/node/agent.js';
import { functionImage, isReady, podUntil, probeFunction, startNodeCluster, type NodeCluster } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

/** A client whose final pod deletes (grace 0) are refused with 403 while `refusing`, each refusal answered once `release` is called. */
class RefusingClient extends KubeClient {
  refusing = true;
  held: (() => void)[] = [];
  override delete<T>(type: ResourceType, name: string, opts: Parameters<KubeClient['delete']>[2] = {}): Promise<T> {
    if (!this.refusing || type !== Resources.pods || opts.gracePeriodSeconds !== 0) return super.delete<T>(type, name, opts);
    const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 403, reason: 'Forbidden', message: `pods "${name}" is forbidden: node "node-a" can only delete pods with spec.nodeName set to itself` } as const;
    return new Promise<T>((_, reject) => this.held.push(() => reject(new KubeApiError(status, 403, `delete pods ${name}`))));
  }

  release(): void {
    for (const r of this.held.splice(0)) r();
  }
}

let cluster: NodeCluster;
let agent: NodeAgent;
let client: RefusingClient;
const logs: Record<string, unknown>[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  cluster = await startNodeCluster({ nodes: [] });
  await functionImage(cluster.images, probeFunction, 'probe:v1');
  client = new RefusingClient({ server: cluster.server.url, insecureSkipTlsVerify: false, credentials: {}, namespace: 'default', context: 'test', files: [] });
  agent = new NodeAgent({ kube: client, name: 'node-a', dataDir: join(cluster.dir, 'node-a'), images: cluster.images, retryMs: 1000, log: (e) => void logs.push(e) });
  await agent.start();
}, 180_000);

afterAll(async () => {
  client.refusing = false;
  client.release();
  await agent?.stop();
  await cluster?.close();
  process.off('unhandledRejection', onUnhandled);
});

const refusedLog = (pod: string) => logs.find((e) => e.msg === 'pod not deleted' && e.pod === `default/${pod}`);

describe('the final delete refused', () => {
  it('is logged and retried until the API server lets it through', async () => {
    const { kube } = cluster;
    await kube.create(Resources.pods, { metadata: { name: 'kept' }, spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'fn', image: 'probe:v1' }] } });
    await podUntil(kube, 'kept', 'Ready', isReady);
    await kube.delete(Resources.pods, 'kept');
    await until('the final delete asked', () => client.held.length > 0);
    client.release();
    expect((await until('the refusal logged', () => refusedLog('kept')))).toMatchObject({ level: 'warn', error: expect.stringMatching(/forbidden: node "node-a" can only delete pods/) });
    // Retried: the next attempt is held in turn, and the pod is still there.
    await until('the delete retried', () => client.held.length > 0);
    expect((await kube.get<{ metadata: { deletionTimestamp?: string } }>(Resources.pods, 'kept')).metadata.deletionTimestamp).toEqual(expect.any(String));
    client.refusing = false;
    client.release();
    await until('kept deleted for good', () => kube.get(Resources.pods, 'kept').then(() => false, (err: { code?: number }) => err.code === 404));
    expect(agent.pods().map((p) => p.metadata.name)).not.toContain('kept');
    expect(unhandled).toEqual([]);
  }, 60_000);

  it('of a pod that left the API meanwhile: the pod is cleaned up, nothing rejects unhandled', async () => {
    const { kube } = cluster;
    client.refusing = true;
    await kube.create(Resources.pods, { metadata: { name: 'gone' }, spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'fn', image: 'probe:v1' }] } });
    const pod = await podUntil(kube, 'gone', 'Ready', isReady);
    await kube.delete(Resources.pods, 'gone');
    await until('the final delete asked', () => client.held.length > 0);
    // The pod leaves the API while the agent's delete is in flight; then that delete is refused.
    await kube.delete(Resources.pods, 'gone', { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata!.uid } });
    await until('the agent saw it go', () => logs.some((e) => e.msg === 'pod removed from the API' && e.pod === 'default/gone'));
    client.release();
    await until('the pod released by the agent', () => !agent.pods().some((p) => p.metadata.name === 'gone'));
    await until('the refusal logged', () => refusedLog('gone'));
    await new Promise((r) => setImmediate(r));
    expect(unhandled).toEqual([]);
  }, 60_000);
});
