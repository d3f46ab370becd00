/**
 * ApiServerSource on `serve`: on ConfigMaps, under a ServiceAccount a Role lets get, list and watch
 * them, a ConfigMap created is a `dev.knative.apiserver.resource.add` event at the receiver (the
 * object as data), updated and deleted ones follow; mode Reference sends `ref.*` events with a
 * reference; through a Broker named as the sink, a Trigger's subscriber gets them; a
 * ServiceAccount without `list` makes the source not Ready (SufficientPermissions False with
 * Knative's message) and sends nothing, and granting it makes the source Ready.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '@func/kube-client';
import { until } from '../../testing/src/poll.js';
import { conditionOf, KUBECTL, source, startReceiver, startSourcesCluster, waitCondition, type SourcesCluster } from './helpers.js';

const serviceAccount = (name: string, namespace: string) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
const role = (name: string, namespace: string, verbs: string[]) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs }],
});
const binding = (name: string, namespace: string, sa: string) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name, namespace },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name }, subjects: [{ kind: 'ServiceAccount', name: sa, namespace }],
});
const configMap = (name: string, namespace: string, data: Record<string, string>, labels?: Record<string, string>) =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, ...(labels && { labels }) }, data });

describe.runIf(existsSync(KUBECTL))('ApiServerSource', () => {
  let c: SourcesCluster;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    [c, receiver] = await Promise.all([startSourcesCluster(), startReceiver()]);
    await c.kube.create(Resources.namespaces, { metadata: { name: 'watched' } });
  }, 60_000);
  afterAll(async () => {
    await c?.close();
    await receiver?.close();
  });
  const eventsOf = (subject: string) => receiver.received.filter((r) => r.headers['ce-subject'] === subject);

  it('sends resource.add, update and delete for ConfigMaps, as the ServiceAccount it names', async () => {
    const applied = await c.apply(
      serviceAccount('watcher', 'watched'), role('cm-reader', 'watched', ['get', 'list', 'watch']), binding('cm-reader', 'watched', 'watcher'),
      source('ApiServerSource', 'configmaps', {
        mode: 'Resource', serviceAccountName: 'watcher', resources: [{ apiVersion: 'v1', kind: 'ConfigMap', selector: { matchLabels: { app: 'demo' } } }],
        sink: { uri: receiver.url },
      }, 'watched'),
    );
    expect(applied.stderr).toBe('');
    const ready = await waitCondition(c.kube, 'apiServer', 'watched', 'configmaps', 'Ready', 'True');
    expect(['SinkProvided', 'Deployed', 'SufficientPermissions'].map((t) => conditionOf(ready, t)?.status)).toEqual(['True', 'True', 'True']);
    expect(ready.status?.sinkUri).toBe(receiver.url);

    // The source's watch starts just after it is Ready: create until the first add arrives.
    const subject = '/apis/v1/namespaces/watched/configmaps/settings';
    await until('the add event', async () => {
      await c.kube.create(Resources.configMaps, configMap('settings', 'watched', { color: 'red' }, { app: 'demo' })).catch(() => undefined);
      return eventsOf(subject).find((e) => e.headers['ce-type'] === 'dev.knative.apiserver.resource.add');
    }, { timeoutMs: 20_000 });
    const add = eventsOf(subject).find((e) => e.headers['ce-type'] === 'dev.knative.apiserver.resource.add')!;
    expect(add.headers['ce-source']).toBe(c.served.server.url);
    expect(add.headers['ce-specversion']).toBe('1.0');
    expect(add.headers['content-type']).toBe('application/json');
    expect(JSON.parse(add.body)).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'watched' }, data: { color: 'red' } });

    await c.kube.create(Resources.configMaps, configMap('unlabelled', 'watched', { a: 'b' }));
    await c.kube.patch(Resources.configMaps, 'settings', { data: { color: 'blue' } }, { namespace: 'watched', type: 'merge' });
    await c.kube.delete(Resources.configMaps, 'settings', { namespace: 'watched' });
    await until('the delete event', () => eventsOf(subject).find((e) => e.headers['ce-type'] === 'dev.knative.apiserver.resource.delete'), { timeoutMs: 20_000 });
    const types = eventsOf(subject).map((e) => e.headers['ce-type']);
    expect(types.indexOf('dev.knative.apiserver.resource.update')).toBeGreaterThan(types.indexOf('dev.knative.apiserver.resource.add'));
    expect(types.at(-1)).toBe('dev.knative.apiserver.resource.delete');
    expect(eventsOf('/apis/v1/namespaces/watched/configmaps/unlabelled')).toEqual([]);
  }, 60_000);

  it('sends ref.* events with a reference in mode Reference', async () => {
    await c.apply(source('ApiServerSource', 'refs', {
      mode: 'Reference', serviceAccountName: 'watcher', resources: [{ apiVersion: 'v1', kind: 'ConfigMap' }], sink: { uri: receiver.url },
    }, 'watched'));
    await waitCondition(c.kube, 'apiServer', 'watched', 'refs', 'Ready', 'True');
    const subject = '/apis/v1/namespaces/watched/configmaps/by-ref';
    const ref = await until('the ref.add event', async () => {
      await c.kube.create(Resources.configMaps, configMap('by-ref', 'watched', { x: 'y' })).catch(() => undefined);
      return eventsOf(subject).find((e) => e.headers['ce-type'] === 'dev.knative.apiserver.ref.add');
    }, { timeoutMs: 20_000 });
    expect(JSON.parse(ref.body)).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', name: 'by-ref', namespace: 'watched' });
  }, 60_000);

  it('sends through a Broker it names as its sink, on to a Trigger\'s subscriber', async () => {
    const applied = await c.apply(
      { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', metadata: { name: 'default', namespace: 'watched' } },
      { apiVersion: 'eventing.knative.dev/v1', kind: 'Trigger', metadata: { name: 'configmap-adds', namespace: 'watched' }, spec: { broker: 'default', filter: { attributes: { type: 'dev.knative.apiserver.ref.add' } }, subscriber: { uri: `${receiver.url}via-broker` } } },
      source('ApiServerSource', 'to-broker', { serviceAccountName: 'watcher', resources: [{ apiVersion: 'v1', kind: 'ConfigMap' }], sink: { ref: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'default' } } }, 'watched'),
    );
    expect(applied.stderr).toBe('');
    const ready = await waitCondition(c.kube, 'apiServer', 'watched', 'to-broker', 'Ready', 'True');
    expect(ready.status?.sinkUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/watched\/default$/);
    const delivered = await until('a ref.add through the Broker', async () => {
      await c.kube.create(Resources.configMaps, configMap('through-broker', 'watched', {})).catch(() => undefined);
      return receiver.received.find((r) => r.path === '/via-broker' && r.headers['ce-subject'] === '/apis/v1/namespaces/watched/configmaps/through-broker');
    }, { timeoutMs: 30_000 });
    expect(delivered.headers['ce-type']).toBe('dev.knative.apiserver.ref.add');
    expect(delivered.headers['ce-source']).toBe(c.served.server.url);
  }, 60_000);

  it('is not Ready while its ServiceAccount may not list ConfigMaps, and sends nothing', async () => {
    await c.apply(
      serviceAccount('weak', 'watched'), role('cm-getter', 'watched', ['get', 'watch']), binding('cm-getter', 'watched', 'weak'),
      source('ApiServerSource', 'denied', { serviceAccountName: 'weak', resources: [{ apiVersion: 'v1', kind: 'ConfigMap' }], sink: { uri: `${receiver.url}denied` } }, 'watched'),
    );
    const o = await waitCondition(c.kube, 'apiServer', 'watched', 'denied', 'SufficientPermissions', 'False');
    expect(conditionOf(o, 'SufficientPermissions')?.message).toBe('User system:serviceaccount:watched:weak cannot list resource "configmaps" in API group "" in Namespace "watched"');
    expect(conditionOf(o, 'Ready')?.status).toBe('False');
    expect(conditionOf(o, 'Ready')?.message).toBe(conditionOf(o, 'SufficientPermissions')?.message);
    const table = await c.kubectl('get', 'apiserversources', '-n', 'watched', 'denied');
    expect(table.stdout).toMatch(/denied\s+\S+\s+\S+\s+False/);
    // A ConfigMap the Ready `refs` source reports, and `denied` does not.
    await c.kube.create(Resources.configMaps, configMap('unseen', 'watched', {}));
    await until('refs reports it', () => eventsOf('/apis/v1/namespaces/watched/configmaps/unseen').find((e) => e.headers['ce-type'] === 'dev.knative.apiserver.ref.add'), { timeoutMs: 20_000 });
    expect(receiver.received.filter((r) => r.path === '/denied')).toEqual([]);

    // Granting list makes it Ready, and it sends.
    await c.apply(role('cm-getter', 'watched', ['get', 'list', 'watch']));
    await waitCondition(c.kube, 'apiServer', 'watched', 'denied', 'Ready', 'True');
    await until('denied reports a change once granted', async () => {
      await c.kube.create(Resources.configMaps, configMap('seen', 'watched', {})).catch(() => undefined);
      return receiver.received.find((r) => r.path === '/denied');
    }, { timeoutMs: 20_000 });
  }, 60_000);
});
