/**
 * The broker reading Brokers and Triggers from a real cluster API (TLS, SQLite, its generated
 * kubeconfig), with Knative's own CRDs applied by kubectl, unchanged: started before the CRDs exist,
 * statuses written as `kubectl get` shows them (and only on change), subscribers resolved through
 * Services and Endpoints or an Addressable's address, every malformed Trigger and Broker a condition
 * saying why with its events kept, the CRDs deleted and applied again. Every request the broker made
 * is one its ClusterRole allows.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient, resourceType } from '@func/kube-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startClusterBroker, type ClusterBroker } from '../../src/broker/cluster/start.js';
import { brokerRoleAllows } from '../../src/broker/cluster/role.js';
import { jsonLogger, silentLogger } from '../../src/broker/metrics.js';
import { binaryEvent, post, type Subscriber, subscriber } from './helpers.js';
import {type ApiCluster, BROKER_CRD_FILE, brokerOf, brokers, conditionOf, KUBECTL, KNATIVE_CRDS, manifest, namespace, type Obj, type Recorded, recordRequests, startApi, TRIGGER_CRD_FILE, triggerOf, triggers, waitCondition} from './cluster-helpers.js';
import { until } from '../../testing/src/poll.js';

const services = resourceType('v1', 'Service', 'services');
const endpoints = resourceType('v1', 'Endpoints', 'endpoints');

describe.runIf(existsSync(KUBECTL) && existsSync(KNATIVE_CRDS))('the broker as a client of the cluster API', () => {
  let api: ApiCluster;
  let broker: ClusterBroker;
  let dir: string;
  const requests: Recorded[] = [];
  const sinks: Subscriber[] = [];
  const sink = async (...a: Parameters<typeof subscriber>) => {
    const s = await subscriber(...a);
    sinks.push(s);
    return s;
  };
  const ingress = (ns: string, name = 'default') => `${broker.broker.url}/${ns}/${name}`;
  const send = (ns: string, attrs: Record<string, string> = {}, name = 'default') => {
    const e = binaryEvent(attrs);
    return post(ingress(ns, name), e.headers, e.body);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'broker-cluster-'));
    api = await startApi();
    const client = recordRequests(KubeClient.fromKubeconfig({ kubeconfig: api.kubeconfig }), requests);
    broker = await startClusterBroker({ client, store: `sqlite:${join(dir, 'broker.db')}`, resyncMs: 200, logger: process.env.BROKER_TEST_LOG ? jsonLogger : silentLogger, minBackoffMs: 50, maxBackoffMs: 500 });
  });
  afterEach(async () => {
    for (const s of sinks.splice(0)) await s.close();
  });
  afterAll(async () => {
    await broker?.stop();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts before the CRDs exist, then serves what kubectl applies once they are installed', async () => {
    await until('an empty first snapshot', () => broker.source.synced, { timeoutMs: 30_000 });
    const fn = await sink();
    const installed = await api.kubectl('apply', '-f', BROKER_CRD_FILE, '-f', TRIGGER_CRD_FILE);
    expect(installed.stdout).toContain('customresourcedefinition.apiextensions.k8s.io/brokers.eventing.knative.dev created');
    const ns = await namespace(api.kube, 'shop');
    await api.apply(manifest(brokerOf('default', ns), triggerOf('orders', ns, { broker: 'default', filter: { attributes: { type: 'order.created' } }, subscriber: { uri: fn.url } })));
    const b = await waitCondition(api.kube, 'Broker', ns, 'default', 'Ready', 'True');
    expect(b.status!.address!.url).toBe(`${broker.broker.url}/${ns}/default`);
    expect(b.status!.observedGeneration).toBe(b.metadata.generation);
    const t = await waitCondition(api.kube, 'Trigger', ns, 'orders', 'Ready', 'True');
    expect(t.status).toMatchObject({ subscriberUri: fn.url, observedGeneration: t.metadata.generation });
    expect(t.status!.conditions!.map((c) => `${c.type}=${c.status}`).sort()).toEqual([
      'BrokerReady=True', 'DeadLetterSinkResolved=True', 'DependencyReady=True', 'OIDCIdentityCreated=True', 'Ready=True', 'SubscriberResolved=True', 'SubscriptionReady=True',
    ]);
    const table = (await api.kubectl('get', 'brokers,triggers', '-n', ns)).stdout;
    expect(table).toMatch(new RegExp(`broker\\.eventing\\.knative\\.dev/default\\s+${broker.broker.url}/${ns}/default\\s+\\S+\\s+True`));
    expect(table).toMatch(new RegExp(`trigger\\.eventing\\.knative\\.dev/orders\\s+default\\s+${fn.url}\\s+\\S+\\s+True`));
    // The webhook's default class, in the broker's view only: the stored object is as applied.
    expect((await api.kubectl('get', 'broker', 'default', '-n', ns, '-o', 'jsonpath={.metadata.annotations.eventing\\.knative\\.dev/broker\\.class}')).stdout).toBe('');

    expect((await send(ns, { type: 'order.created', id: 'o1' })).status).toBe(202);
    expect((await send(ns, { type: 'order.deleted', id: 'o2' })).status).toBe(202);
    const [got] = await fn.until(1);
    expect(got!.headers['ce-id']).toBe('o1');

    // Statuses are written on change only: resyncs and this broker's own writes leave them alone.
    const before = await api.kube.get<Obj>(triggers, 'orders', { namespace: ns });
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await api.kube.get<Obj>(triggers, 'orders', { namespace: ns })).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(fn.received).toHaveLength(1);
  });

  it('turns each malformed Trigger and Broker into a condition saying why, and keeps its events until fixed', async () => {
    const ns = await namespace(api.kube, 'malformed');
    const fn = await sink();
    const uri = { uri: fn.url };
    await api.apply(manifest(
      brokerOf('default', ns),
      brokerOf('slow', ns, { delivery: { backoffPolicy: 'sometimes' } }),
      triggerOf('orphan', ns, { broker: 'nope', subscriber: uri }),
      triggerOf('nobroker', ns, { subscriber: uri }),
      triggerOf('badfilter', ns, { broker: 'default', filters: [{ cesql: 'type = ' }], subscriber: uri }),
      triggerOf('baddelivery', ns, { broker: 'default', delivery: { backoffDelay: 'soon' }, subscriber: uri }),
      triggerOf('unresolved', ns, { broker: 'default', subscriber: { ref: { apiVersion: 'v1', kind: 'Service', name: 'later' } } }),
      triggerOf('nokind', ns, { broker: 'default', subscriber: { ref: { apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: 'fn' } } }),
    ));
    const reason = async (name: string, type: string, status: string, why: string) =>
      conditionOf(await waitCondition(api.kube, 'Trigger', ns, name, type, status, why), type)!.message;
    expect(await reason('orphan', 'BrokerReady', 'False', 'BrokerDoesNotExist')).toBe('Broker "nope" does not exist');
    expect(await reason('nobroker', 'BrokerReady', 'False', 'BrokerDoesNotExist')).toBe('missing field(s): spec.broker');
    expect(await reason('badfilter', 'SubscriptionReady', 'False', 'InvalidFilter')).toMatch(/^spec\.filters\[0\]\.cesql: invalid CESQL expression: /);
    expect(await reason('baddelivery', 'SubscriptionReady', 'False', 'InvalidDeliverySpec')).toMatch(/^spec\.delivery\.backoffDelay: invalid value: soon/);
    expect(await reason('unresolved', 'SubscriberResolved', 'False', "Unable to get the Subscriber's URI")).toBe(`services "later" not found in namespace "${ns}"`);
    expect(await reason('nokind', 'SubscriberResolved', 'False', "Unable to get the Subscriber's URI")).toMatch(/^failed to get Service "malformed\/fn": /);
    const slow = await waitCondition(api.kube, 'Broker', ns, 'slow', 'FilterReady', 'False', 'InvalidDeliverySpec');
    expect(conditionOf(slow, 'FilterReady')!.message).toMatch(/spec\.delivery\.backoffPolicy: invalid value: sometimes/);
    for (const name of ['orphan', 'nobroker', 'badfilter', 'baddelivery', 'unresolved', 'nokind'])
      expect(conditionOf(await api.kube.get<Obj>(triggers, name, { namespace: ns }), 'Ready')!.status).toBe('False');
    expect((await api.kubectl('get', 'triggers', '-n', ns, 'orphan')).stdout).toMatch(/orphan\s+nope\s+\S+\s+\S+\s+False\s+BrokerDoesNotExist/);

    // Events accepted while Triggers are broken wait for them; fixing each delivers what waited.
    for (const id of ['w1', 'w2']) expect((await send(ns, { id, type: 'order.created' })).status).toBe(202);
    await api.kube.patch(triggers, 'badfilter', { spec: { filters: [{ cesql: "type = 'order.created'" }] } }, { namespace: ns, type: 'merge' });
    await api.kube.patch(triggers, 'baddelivery', { spec: { delivery: { backoffDelay: 'PT0.1S' } } }, { namespace: ns, type: 'merge' });
    const later = await sink();
    await exposeService(api.kube, ns, 'later', later.url);
    await waitCondition(api.kube, 'Trigger', ns, 'unresolved', 'Ready', 'True');
    await fn.until(4);
    expect(fn.received.map((r) => r.headers['ce-id']).sort()).toEqual(['w1', 'w1', 'w2', 'w2']);
    expect((await later.until(2)).map((r) => r.headers['ce-id']).sort()).toEqual(['w1', 'w2']);
    // A Broker created after its Trigger: the Trigger follows.
    await api.apply(manifest(brokerOf('nope', ns)));
    await waitCondition(api.kube, 'Trigger', ns, 'orphan', 'Ready', 'True');
  });

  it('reaches a Service through its Endpoints, and follows them as they change', async () => {
    const ns = await namespace(api.kube, 'services');
    const [a, b, dls] = [await sink(), await sink(), await sink((_r, _n, res) => void res.writeHead(202).end())];
    const failing = await sink((_r, _n, res) => void res.writeHead(503).end('busy'));
    await exposeService(api.kube, ns, 'fn', a.url);
    await exposeService(api.kube, ns, 'dead-letters', dls.url);
    await exposeService(api.kube, ns, 'failing', failing.url);
    const service = (name: string) => ({ ref: { apiVersion: 'v1', kind: 'Service', name } });
    await api.apply(manifest(
      brokerOf('default', ns),
      triggerOf('fn', ns, { broker: 'default', filter: { attributes: { type: 'greet' } }, subscriber: { ...service('fn'), uri: '/events?x=1' } }),
      triggerOf('failing', ns, {
        broker: 'default', filter: { attributes: { type: 'fail' } }, subscriber: service('failing'),
        delivery: { retry: 1, backoffDelay: 'PT0.05S', deadLetterSink: service('dead-letters') },
      }),
    ));
    const port = (url: string) => new URL(url).port;
    const t = await waitCondition(api.kube, 'Trigger', ns, 'fn', 'Ready', 'True');
    expect(t.status!.subscriberUri).toBe(`http://127.0.0.1:${port(a.url)}/events?x=1`);
    const f = await waitCondition(api.kube, 'Trigger', ns, 'failing', 'Ready', 'True');
    expect(f.status).toMatchObject({ subscriberUri: `http://127.0.0.1:${port(failing.url)}/`, deadLetterSinkUri: `http://127.0.0.1:${port(dls.url)}/` });

    expect((await send(ns, { type: 'greet', id: 'g1' })).status).toBe(202);
    expect((await a.until(1))[0]!.path).toBe('/events?x=1');
    expect((await send(ns, { type: 'fail', id: 'f1' })).status).toBe(202);
    const [dead] = await dls.until(1);
    expect(dead!.headers).toMatchObject({ 'ce-id': 'f1', 'ce-knativeerrorcode': '503', 'ce-knativeerrordest': `http://127.0.0.1:${port(failing.url)}/` });
    expect(failing.received).toHaveLength(2);

    // The Endpoints move to another address: the Trigger follows without a change to itself.
    await api.kube.patch(endpoints, 'fn', { subsets: [subset(b.url)] }, { namespace: ns, type: 'merge' });
    await until('subscriberUri on the new endpoint', async () => (await api.kube.get<Obj>(triggers, 'fn', { namespace: ns })).status?.subscriberUri === `http://127.0.0.1:${port(b.url)}/events?x=1`, { timeoutMs: 30_000 });
    expect((await send(ns, { type: 'greet', id: 'g2' })).status).toBe(202);
    expect((await b.until(1))[0]!.headers['ce-id']).toBe('g2');

    // No endpoint: unresolved, and the events wait for one.
    await api.kube.delete(endpoints, 'fn', { namespace: ns });
    const gone = await waitCondition(api.kube, 'Trigger', ns, 'fn', 'SubscriberResolved', 'False');
    expect(conditionOf(gone, 'SubscriberResolved')!.message).toBe(`Service "${ns}/fn" has no Endpoints`);
    expect(gone.status!.subscriberUri).toBe('');
    expect((await send(ns, { type: 'greet', id: 'g3' })).status).toBe(202);
    await api.kube.create(endpoints, { metadata: { name: 'fn', namespace: ns }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'other', port: 1 }] }] });
    const noPort = await waitCondition(api.kube, 'Trigger', ns, 'fn', 'SubscriberResolved', 'False');
    await until('the port-name message', async () => conditionOf(await api.kube.get<Obj>(triggers, 'fn', { namespace: ns }), 'SubscriberResolved')?.message === `Service "${ns}/fn" has no ready endpoint for port "http"`, { timeoutMs: 30_000 });
    expect(noPort.status!.subscriberUri).toBe('');
    await api.kube.patch(endpoints, 'fn', { subsets: [subset(a.url)] }, { namespace: ns, type: 'merge' });
    expect((await a.until(2))[1]!.headers['ce-id']).toBe('g3');
  });

  it('resolves any Addressable through its status.address.url, e.g. another Broker', async () => {
    const ns = await namespace(api.kube, 'chain');
    const end = await sink();
    await api.apply(manifest(
      brokerOf('default', ns),
      brokerOf('second', ns),
      triggerOf('forward', ns, { broker: 'default', subscriber: { ref: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'second' } } }),
      triggerOf('end', ns, { broker: 'second', subscriber: { uri: end.url } }),
    ));
    const t = await waitCondition(api.kube, 'Trigger', ns, 'forward', 'Ready', 'True');
    expect(t.status!.subscriberUri).toBe(`${broker.broker.url}/${ns}/second`);
    await waitCondition(api.kube, 'Trigger', ns, 'end', 'Ready', 'True');
    expect((await send(ns, { id: 'hop' })).status).toBe(202);
    expect((await end.until(1))[0]!.headers['ce-id']).toBe('hop');
  });

  it('drops Brokers and Triggers with their CRDs, and serves them again when the CRDs are applied again', async () => {
    const ns = 'shop';
    expect((await api.kubectl('delete', '-f', BROKER_CRD_FILE, '-f', TRIGGER_CRD_FILE)).code).toBe(0);
    await until('the ingress forgets the Broker', async () => (await send(ns)).status === 404, { timeoutMs: 30_000 });
    const fn = await sink();
    await api.kubectl('apply', '-f', BROKER_CRD_FILE, '-f', TRIGGER_CRD_FILE);
    await until('the CRDs served again', async () => (await api.kubectl('get', 'brokers', '-n', ns)).code === 0, { timeoutMs: 30_000 });
    await api.apply(manifest(brokerOf('default', ns), triggerOf('again', ns, { broker: 'default', subscriber: { uri: fn.url } })));
    await waitCondition(api.kube, 'Trigger', ns, 'again', 'Ready', 'True');
    expect((await send(ns, { id: 'back' })).status).toBe(202);
    expect((await fn.until(1))[0]!.headers['ce-id']).toBe('back');
    expect(await api.kube.get<Obj>(brokers, 'default', { namespace: ns }).then((b) => conditionOf(b, 'Ready')?.status)).toBe('True');
  });

  it('made only requests its ClusterRole allows', () => {
    const kinds = new Set(requests.map((r) => `${r.verb} ${r.group}/${r.resource}`));
    expect([...kinds].filter((k) => k.startsWith('watch ') || k.startsWith('patch '))).not.toEqual([]);
    expect(requests.filter((r) => !brokerRoleAllows(r.verb, r.group, r.resource))).toEqual([]);
  });
});

const subset = (url: string) => ({ addresses: [{ ip: new URL(url).hostname }], ports: [{ name: 'http', port: Number(new URL(url).port) }] });

/** A Service without selector on port 80 (named http) and the Endpoints behind it, by hand. */
async function exposeService(kube: KubeClient, namespace: string, name: string, url: string): Promise<void> {
  await kube.create(services, { metadata: { name, namespace }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] } });
  await kube.create(endpoints, { metadata: { name, namespace }, subsets: [subset(url)] });
}
