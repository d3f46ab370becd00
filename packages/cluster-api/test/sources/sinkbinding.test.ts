/**
 * SinkBinding on `serve`: a Deployment named as its subject gets `K_SINK` (the Broker's address)
 * and `K_CE_OVERRIDES` in its pod template, so its pods have them; a new sink URL rewrites them; a
 * Deployment created later that its selector matches is bound as it is created (and stays bound when
 * its manifest is applied again); a subject that does not exist makes it not Ready
 * (SubjectMissing); deleted, it unbinds its subjects first. A ContainerSource is a Deployment of its template bound by a SinkBinding of its own.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources, resourceType } from '@func/kube-client';
import { until } from '../../testing/src/poll.js';
import { conditionOf, KUBECTL, source, Sources, startSourcesCluster, waitCondition, type SourcesCluster } from './helpers.js';

const brokers = resourceType('eventing.knative.dev/v1', 'Broker', 'brokers');
type Env = { name: string; value?: string }[];
type Workload = { metadata: { name: string; labels?: Record<string, string> }; spec: { template: { spec: { containers: { name: string; env?: Env }[] } } } };

const deployment = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'default', labels },
  spec: {
    replicas: 1, selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'emitter', image: 'emitter:v1', env: [{ name: 'OWN', value: 'kept' }] }] } },
  },
});
const envOf = (w: { spec: { template?: { spec: { containers: { env?: Env }[] } }; containers?: { env?: Env }[] } }): Env =>
  (w.spec.template?.spec.containers ?? w.spec.containers ?? [])[0]?.env ?? [];
const value = (env: Env, name: string) => env.find((e) => e.name === name)?.value;

describe.runIf(existsSync(KUBECTL))('SinkBinding', () => {
  let c: SourcesCluster;
  let brokerUrl: string;
  beforeAll(async () => {
    c = await startSourcesCluster();
    await c.apply({ apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', metadata: { name: 'default', namespace: 'default' } });
    brokerUrl = await until('the Broker\'s address', async () => (await c.kube.get<{ status?: { address?: { url?: string } } }>(brokers, 'default', { namespace: 'default' })).status?.address?.url, { timeoutMs: 30_000 });
  }, 60_000);
  afterAll(async () => {
    await c?.close();
  });

  it('gives a Deployment\'s pods K_SINK pointing at a Broker, and follows a new sink', async () => {
    const applied = await c.apply(deployment('emitter'), source('SinkBinding', 'bind-emitter', {
      subject: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'emitter' },
      sink: { ref: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'default' } },
      ceOverrides: { extensions: { origin: 'emitter' } },
    }));
    expect(applied.stderr).toBe('');
    const ready = await waitCondition(c.kube, 'sinkBinding', 'default', 'bind-emitter', 'Ready', 'True');
    expect(ready.status?.sinkUri).toBe(brokerUrl);
    expect(conditionOf(ready, 'SinkProvided')?.status).toBe('True');

    const pod = await until('a pod with K_SINK', async () => {
      const pods = await c.kube.list<{ metadata: { name: string }; spec: { containers: { env?: Env }[] } }>(Resources.pods, { namespace: 'default', labelSelector: 'app=emitter' });
      return pods.items.find((p) => value(envOf(p), 'K_SINK') === brokerUrl);
    }, { timeoutMs: 30_000 });
    expect(envOf(pod).map((e) => e.name)).toEqual(['OWN', 'K_SINK', 'K_CE_OVERRIDES']);
    expect(JSON.parse(value(envOf(pod), 'K_CE_OVERRIDES')!)).toEqual({ extensions: { origin: 'emitter' } });

    await c.kube.patch(Sources.sinkBinding, 'bind-emitter', { spec: { sink: { ref: null, uri: 'http://127.0.0.1:9/elsewhere' } } }, { namespace: 'default', type: 'merge' });
    await until('the template follows the new sink', async () =>
      value(envOf(await c.kube.get<Workload>(Resources.deployments, 'emitter', { namespace: 'default' })), 'K_SINK') === 'http://127.0.0.1:9/elsewhere' || undefined, { timeoutMs: 30_000 });
  }, 90_000);

  it('binds a Deployment its selector matches when one is created, and unbinds when deleted', async () => {
    await c.apply(source('SinkBinding', 'by-label', {
      subject: { apiVersion: 'apps/v1', kind: 'Deployment', selector: { matchLabels: { bind: 'yes' } } }, sink: { uri: 'http://127.0.0.1:9/' },
    }));
    await waitCondition(c.kube, 'sinkBinding', 'default', 'by-label', 'Ready', 'True');
    // Bound as it is created (the SinkBinding webhook): generation 1, no second rollout.
    expect((await c.apply(deployment('later', { bind: 'yes' }), deployment('other'))).stderr).toBe('');
    const later = await c.kube.get<Workload & { metadata: { generation?: number } }>(Resources.deployments, 'later', { namespace: 'default' });
    expect([value(envOf(later), 'K_SINK'), later.metadata.generation]).toEqual(['http://127.0.0.1:9/', 1]);
    expect(value(envOf(await c.kube.get<Workload>(Resources.deployments, 'other', { namespace: 'default' })), 'K_SINK')).toBeUndefined();
    // Applying the manifest again (without the variables) keeps them.
    expect((await c.apply(deployment('later', { bind: 'yes' }))).stderr).toBe('');
    const again = await c.kube.get<Workload & { metadata: { generation?: number } }>(Resources.deployments, 'later', { namespace: 'default' });
    expect([value(envOf(again), 'K_SINK'), again.metadata.generation]).toEqual(['http://127.0.0.1:9/', 1]);

    await c.kube.delete(Sources.sinkBinding, 'by-label', { namespace: 'default' });
    await until('the binding gone and its subject unbound', async () => {
      const gone = await c.kube.get(Sources.sinkBinding, 'by-label', { namespace: 'default' }).then(() => false, () => true);
      const env = envOf(await c.kube.get<Workload>(Resources.deployments, 'later', { namespace: 'default' }));
      return gone && env.map((e) => e.name).join() === 'OWN' ? true : undefined;
    }, { timeoutMs: 30_000 });
  }, 90_000);

  it('is not Ready while the subject it names does not exist', async () => {
    await c.apply(source('SinkBinding', 'orphan', { subject: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'absent' }, sink: { uri: 'http://127.0.0.1:9/' } }));
    const o = await waitCondition(c.kube, 'sinkBinding', 'default', 'orphan', 'Ready', 'False');
    expect(conditionOf(o, 'Ready')?.reason).toBe('SubjectMissing');
    expect(conditionOf(o, 'Ready')?.message).toBe('Deployment "default/absent" not found');
  }, 40_000);

  it('runs a ContainerSource as a Deployment bound to its sink by a SinkBinding', async () => {
    const applied = await c.apply(source('ContainerSource', 'heartbeats', {
      template: { spec: { containers: [{ name: 'beat', image: 'heartbeats:v1', args: ['--period=1'] }] } },
      sink: { ref: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'default' } },
    }));
    expect(applied.stderr).toBe('');
    const bound = await until('the Deployment bound to the Broker', async () => {
      const d = await c.kube.get<Workload>(Resources.deployments, 'heartbeats-deployment', { namespace: 'default' }).catch(() => undefined);
      return d && value(envOf(d), 'K_SINK') === brokerUrl ? d : undefined;
    }, { timeoutMs: 30_000 });
    expect(bound.metadata.labels).toEqual({ 'sources.knative.dev/source': 'container-source-controller', 'sources.knative.dev/name': 'heartbeats' });
    const sb = await waitCondition(c.kube, 'sinkBinding', 'default', 'heartbeats-sinkbinding', 'Ready', 'True');
    expect(sb.spec?.subject).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'heartbeats-deployment' });
    const cs = await waitCondition(c.kube, 'container', 'default', 'heartbeats', 'SinkBindingReady', 'True');
    expect(cs.status?.sinkUri).toBe(brokerUrl);
    // No node runs its pod here: the Deployment is not Available, so neither is the source.
    expect(conditionOf(cs, 'Ready')?.status).not.toBe('True');
    expect((await c.kubectl('get', 'containersources')).stdout).toMatch(/NAME\s+SINK\s+AGE\s+READY\s+REASON/);
  }, 60_000);
});
