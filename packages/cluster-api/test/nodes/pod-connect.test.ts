/** pods/{name}/log, exec, attach, portforward over a real server: Kubernetes' answers for a cluster with no kubelets. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grant, namespace, startServerWithUsers, startTestServer, type TestServer } from '../support/helpers.js';

const base = '/api/v1/namespaces/conn/pods';

describe('pod connect subresources', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer('memory');
    expect((await s.request('POST', '/api/v1/namespaces', { body: namespace('conn') })).status).toBe(201);
    const pod = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec });
    for (const body of [
      pod('one', { containers: [{ name: 'app', image: 'nginx' }] }),
      pod('two', { initContainers: [{ name: 'init', image: 'busybox' }], containers: [{ name: 'a', image: 'nginx' }, { name: 'b', image: 'nginx' }] }),
      pod('bound', { nodeName: 'node-1', containers: [{ name: 'app', image: 'nginx' }] }),
    ]) expect((await s.request('POST', base, { body })).status).toBe(201);
  });
  afterAll(() => s.close());

  it('lists log, exec, attach and portforward in discovery with their verbs', async () => {
    const resources = (await s.request('GET', '/api/v1')).json.resources as { name: string; kind: string; verbs: string[] }[];
    const find = (name: string) => resources.find((r) => r.name === name);
    expect(find('pods/log')).toMatchObject({ kind: 'Pod', verbs: ['get'] });
    expect(find('pods/exec')).toMatchObject({ kind: 'PodExecOptions', verbs: ['create', 'get'] });
    expect(find('pods/attach')).toMatchObject({ kind: 'PodAttachOptions', verbs: ['create', 'get'] });
    expect(find('pods/portforward')).toMatchObject({ kind: 'PodPortForwardOptions', verbs: ['create', 'get'] });
  });

  it('answers 204 with no body for the logs of a pod no node runs, followed or not', async () => {
    for (const query of ['', '?follow=true', '?container=app&tailLines=10']) {
      const r = await s.request('GET', `${base}/one/log${query}`);
      expect([r.status, r.text]).toEqual([204, '']);
    }
  });

  it('checks the container as Kubernetes does', async () => {
    const wrong = await s.request('GET', `${base}/one/log?container=nope`);
    expect([wrong.status, wrong.json.message]).toEqual([400, 'container nope is not valid for pod one']);
    const which = await s.request('GET', `${base}/two/log`);
    expect([which.status, which.json.message]).toEqual([400, 'a container name must be specified for pod two, choose one of: [init a b]']);
    expect((await s.request('GET', `${base}/two/log?container=init`)).status).toBe(204);
  });

  it('refuses exec, attach and portforward on a pod with no host, and names the missing node of a bound pod', async () => {
    for (const [method, sub] of [['POST', 'exec?command=ls'], ['GET', 'exec?command=ls'], ['POST', 'attach'], ['POST', 'portforward?ports=80'], ['GET', 'portforward']] as const) {
      const r = await s.request(method, `${base}/one/${sub}`);
      expect([r.status, r.json.reason, r.json.message]).toEqual([400, 'BadRequest', 'pod one does not have a host assigned']);
    }
    for (const sub of ['log', 'exec']) {
      const r = await s.request('GET', `${base}/bound/${sub}`);
      expect([r.status, r.json.message]).toEqual([404, 'nodes "node-1" not found']);
    }
  });

  it('answers 404 for a missing pod and 405 for a verb the subresource does not take', async () => {
    expect((await s.request('GET', `${base}/nosuch/log`)).json).toMatchObject({ code: 404, details: { name: 'nosuch', kind: 'pods' } });
    expect((await s.request('PUT', `${base}/one/log`, { body: {} })).status).toBe(405);
    expect((await s.request('DELETE', `${base}/one/exec`)).status).toBe(405);
    expect((await s.request('GET', '/api/v1/namespaces/conn/secrets/x/log')).status).toBe(404);
  });
});

describe('pod connect subresources and RBAC', () => {
  let s: TestServer;
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  beforeAll(async () => {
    s = await startServerWithUsers();
    expect((await s.request('POST', '/api/v1/namespaces', { body: namespace('conn') })).status).toBe(201);
    expect((await s.request('POST', base, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'one' }, spec: { containers: [{ name: 'app', image: 'nginx' }] } } })).status).toBe(201);
    const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'exec-get' }, rules: [{ apiGroups: [''], resources: ['pods/exec', 'pods/log'], verbs: ['get'] }] };
    expect((await s.request('POST', `${rbac}/clusterroles`, { body: role })).status).toBe(201);
    await grant(s, { name: 'bob-exec-get', role: 'exec-get', namespace: 'conn', subjects: [{ kind: 'User', name: 'bob' }] }, { verb: 'get', resource: 'pods/exec' });
  });
  afterAll(() => s.close());

  it('asks `create` too of exec by GET (a WebSocket upgrade), as kube-apiserver does; not of logs', async () => {
    const exec = await s.request('GET', `${base}/one/exec?command=ls&stdout=true`, { token: 'bob-token' });
    // kube-apiserver's ensureAuthorizedForVerb: the authorizer's reason alone, which RBAC leaves empty.
    expect([exec.status, exec.json.message]).toEqual([403, 'pods "one" is forbidden: ']);
    expect((await s.request('GET', `${base}/one/log`, { token: 'bob-token' })).status).toBe(204);
    const create = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'exec-create' }, rules: [{ apiGroups: [''], resources: ['pods/exec'], verbs: ['create'] }] };
    expect((await s.request('POST', `${rbac}/clusterroles`, { body: create })).status).toBe(201);
    await grant(s, { name: 'bob-exec-create', role: 'exec-create', namespace: 'conn', subjects: [{ kind: 'User', name: 'bob' }] }, { verb: 'create', resource: 'pods/exec' });
    const allowed = await s.request('GET', `${base}/one/exec?command=ls&stdout=true`, { token: 'bob-token' });
    expect([allowed.status, allowed.json.message]).toEqual([400, 'pod one does not have a host assigned']);
  });
});
