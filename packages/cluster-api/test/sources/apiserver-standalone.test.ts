/**
 * ApiServerSource under the controller manager in a process of its own (`cluster-api
 * controller-manager`, here through its library entry against `serve` started without one): the
 * adapter acts as the ServiceAccount the source names by impersonation (the eventing-controller
 * ServiceAccount may impersonate ServiceAccounts), so the server authorizes its list and watch as
 * that account's; the source becomes Ready and a ConfigMap created reaches the sink.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient, Resources } from '@func/kube-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig, resolveControllerManagerConfig } from '../../src/config.js';
import type { Controller } from '../../src/controllers/shared.js';
import { runControllerManager } from '../../src/controllers/standalone.js';
import { serve } from '../../src/server.js';
import { until } from '../../testing/src/poll.js';
import { conditionOf, KUBECTL, Sources, source, startReceiver, waitCondition } from './helpers.js';

describe.runIf(existsSync(KUBECTL))('ApiServerSource with the controller manager apart from the API server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sources-standalone-'));
  let served: Awaited<ReturnType<typeof serve>>;
  let kube: KubeClient;
  let manager: Controller;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    served = await serve(resolveConfig({ port: 0, dataDir: join(dir, 'data'), brokerPort: 0, disable: 'node,gateway,controller-manager' }), () => {});
    kube = KubeClient.fromKubeconfig({ kubeconfig: served.kubeconfig! });
    receiver = await startReceiver();
    manager = await runControllerManager(kube, resolveControllerManagerConfig({ controllers: 'source-apiserver-controller' }));
  }, 60_000);
  afterAll(async () => {
    await manager?.stop();
    kube?.close();
    await receiver?.close();
    await served?.server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('watches as the ServiceAccount it names and delivers what that account may see', async () => {
    const ns = 'apart';
    await kube.create(Resources.namespaces, { metadata: { name: ns } });
    await kube.create(Resources.serviceAccounts, { metadata: { name: 'watcher', namespace: ns } }, { namespace: ns });
    const rbac = 'rbac.authorization.k8s.io';
    await kube.raw({ method: 'POST', path: `/apis/${rbac}/v1/namespaces/${ns}/roles`, body: { apiVersion: `${rbac}/v1`, kind: 'Role', metadata: { name: 'cm' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }] } });
    await kube.raw({ method: 'POST', path: `/apis/${rbac}/v1/namespaces/${ns}/rolebindings`, body: { apiVersion: `${rbac}/v1`, kind: 'RoleBinding', metadata: { name: 'cm' }, roleRef: { apiGroup: rbac, kind: 'Role', name: 'cm' }, subjects: [{ kind: 'ServiceAccount', name: 'watcher', namespace: ns }] } });
    await kube.create(Sources.apiServer, source('ApiServerSource', 'cms', { mode: 'Reference', serviceAccountName: 'watcher', resources: [{ apiVersion: 'v1', kind: 'ConfigMap' }], sink: { uri: receiver.url } }, ns), { namespace: ns });
    const ready = await waitCondition(kube, 'apiServer', ns, 'cms', 'Ready', 'True');
    expect(conditionOf(ready, 'Deployed')?.status).toBe('True');
    const subject = `/apis/v1/namespaces/${ns}/configmaps/seen`;
    const event = await until('the ref.add event', async () => {
      await kube.create(Resources.configMaps, { metadata: { name: 'seen', namespace: ns }, data: {} }, { namespace: ns }).catch(() => undefined);
      return receiver.received.find((r) => r.headers['ce-subject'] === subject);
    }, { timeoutMs: 30_000 });
    expect(event.headers['ce-type']).toBe('dev.knative.apiserver.ref.add');
    expect(JSON.parse(event.body)).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', name: 'seen', namespace: ns });
  }, 90_000);
});
