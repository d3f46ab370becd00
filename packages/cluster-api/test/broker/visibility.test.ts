/**
 * Deliveries to a Service spread over its ready endpoints, and failed deliveries made visible: the
 * broker against a real cluster API (TLS, SQLite), Knative's CRDs applied by kubectl, real HTTP
 * subscribers. A Service with two ready endpoints gets events at both; a subscriber that is down
 * gets a `Warning` Event on its Trigger (seen by `kubectl get events`) with the last error, a `warn`
 * log line per failed attempt with the event's id, and the Trigger stays Ready, as Knative's does.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient, resourceType } from '@func/kube-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELIVERY_EVENT_SOURCE, DELIVERY_FAILED_REASON, startClusterBroker, type ClusterBroker } from '../../src/broker/cluster/start.js';
import type { LogLevel } from '../../src/broker/metrics.js';
import { binaryEvent, post, type Subscriber, subscriber } from './helpers.js';
import { type ApiCluster, BROKER_CRD_FILE, brokerOf, KUBECTL, KNATIVE_CRDS, manifest, namespace, startApi, TRIGGER_CRD_FILE, triggerOf, waitCondition } from './cluster-helpers.js';
import { until } from '../../testing/src/poll.js';

const services = resourceType('v1', 'Service', 'services');
const endpoints = resourceType('v1', 'Endpoints', 'endpoints');
const events = resourceType('v1', 'Event', 'events');

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe.runIf(existsSync(KUBECTL) && existsSync(KNATIVE_CRDS))('deliveries spread over endpoints, and failures made visible', () => {
  let api: ApiCluster;
  let broker: ClusterBroker;
  let dir: string;
  const subs: Subscriber[] = [];
  const logs: { level: LogLevel; msg: string; fields: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'broker-visibility-'));
    api = await startApi();
    await api.kubectl('apply', '-f', BROKER_CRD_FILE, '-f', TRIGGER_CRD_FILE);
    broker = await startClusterBroker({
      client: KubeClient.fromKubeconfig({ kubeconfig: api.kubeconfig }),
      store: `sqlite:${join(dir, 'broker.db')}`,
      resyncMs: 200,
      logger: (level, msg, fields = {}) => void logs.push({ level, msg, fields }),
      minBackoffMs: 50,
      maxBackoffMs: 500,
    });
  });
  afterAll(async () => {
    for (const s of subs) await s.close();
    await broker?.stop();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const send = (ns: string, attrs: Record<string, string>) => {
    const e = binaryEvent(attrs);
    return post(`${broker.broker.url}/${ns}/default`, e.headers, e.body);
  };

  it('delivers to every ready endpoint of a Service, not to one', async () => {
    const ns = await namespace(api.kube, 'spread');
    const [a, b] = [await subscriber(), await subscriber()];
    subs.push(a, b);
    const port = (s: Subscriber) => Number(new URL(s.url).port);
    await api.kube.create(services, { metadata: { name: 'fn', namespace: ns }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] } });
    // Two pods' endpoints (here two listeners on 127.0.0.1, each its own port).
    await api.kube.create(endpoints, { metadata: { name: 'fn', namespace: ns }, subsets: [a, b].map((s) => ({ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'http', port: port(s) }] })) });
    await api.apply(manifest(brokerOf('default', ns), triggerOf('fn', ns, { broker: 'default', subscriber: { ref: { apiVersion: 'v1', kind: 'Service', name: 'fn' }, uri: '/in' } })));
    const t = await waitCondition(api.kube, 'Trigger', ns, 'fn', 'Ready', 'True');
    // The status names one endpoint (the first, sorted); deliveries go to all.
    expect(t.status!.subscriberUri).toBe(`http://127.0.0.1:${Math.min(port(a), port(b))}/in`);
    for (let i = 0; i < 20; i++) expect((await send(ns, { id: `s${i}`, type: 'spread' })).status).toBe(202);
    await until('all 20 delivered', () => a.received.length + b.received.length >= 20, { timeoutMs: 30_000 });
    expect(a.received.length).toBeGreaterThan(0);
    expect(b.received.length).toBeGreaterThan(0);
    expect([...a.received, ...b.received].map((r) => r.path)).toEqual(Array(20).fill('/in'));
    expect(new Set([...a.received, ...b.received].map((r) => r.headers['ce-id'])).size).toBe(20);
  });

  it('records a Warning Event on the Trigger of a subscriber that is down, and logs each failed attempt with the event id', async () => {
    const ns = await namespace(api.kube, 'down');
    const down = `http://127.0.0.1:${await closedPort()}/`;
    await api.apply(manifest(brokerOf('default', ns), triggerOf('down', ns, { broker: 'default', subscriber: { uri: down }, delivery: { retry: 2, backoffDelay: 'PT0.05S', backoffPolicy: 'linear' } })));
    const t = await waitCondition(api.kube, 'Trigger', ns, 'down', 'Ready', 'True');
    expect((await send(ns, { id: 'lost-1', type: 'x' })).status).toBe(202);

    const warning = await until('a Warning Event on the Trigger', async () => {
      const list = await api.kube.list<{ type: string; reason: string; message: string; count: number; involvedObject: Record<string, string>; source: { component: string } }>(events, { namespace: ns });
      return list.items.find((e) => e.involvedObject.kind === 'Trigger' && e.involvedObject.name === 'down' && e.count >= 3);
    }, { timeoutMs: 30_000 });
    expect(warning).toMatchObject({
      type: 'Warning',
      reason: DELIVERY_FAILED_REASON,
      source: { component: DELIVERY_EVENT_SOURCE },
      involvedObject: { apiVersion: 'eventing.knative.dev/v1', kind: 'Trigger', namespace: ns, name: 'down', uid: t.metadata.uid },
    });
    // The last error, in the user's words: where it went and what happened.
    expect(warning.message).toBe(`delivery to ${down} failed: ECONNREFUSED`);
    // kubectl shows it as users look for it.
    const shown = (await api.kubectl('get', 'events', '-n', ns, '--field-selector', 'type=Warning', '-o', 'jsonpath={.items[*].reason}')).stdout;
    expect(shown).toContain(DELIVERY_FAILED_REASON);

    const attempts = logs.filter((l) => l.msg === 'delivery attempt failed' && l.fields.id === 'lost-1');
    expect(attempts.map((l) => [l.level, l.fields.attempt, l.fields.url, l.fields.trigger])).toEqual([1, 2, 3].map((n) => ['warn', n, down, `${ns}/down`]));
    await until('the event dropped after its retries', () => logs.some((l) => l.msg === 'event dropped' && l.fields.id === 'lost-1'), { timeoutMs: 10_000 });
    // Knative keeps such a Trigger Ready: its subscriber resolved, its subscription programmed.
    expect((await waitCondition(api.kube, 'Trigger', ns, 'down', 'Ready', 'True')).status!.subscriberUri).toBe(down);
  });
});
