/** The review kinds over a real server: answered in their status, refused when malformed, never stored. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProtobuf, encodeProtobuf, ProtobufMediaType } from '../../src/protobuf/codec.js';
import { ApiAudience } from '../../src/auth/authenticator.js';
import { TestToken, grant, namespace, startServerWithUsers, startTestServer, type TestServer } from '../support/helpers.js';

const AuthzV1 = '/apis/authorization.k8s.io/v1';
const review = (kind: string, spec: unknown, apiVersion = 'authorization.k8s.io/v1') => ({ apiVersion, kind, spec });

describe('review kinds', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer('memory');
    expect((await s.request('POST', '/api/v1/namespaces', { body: namespace('team') })).status).toBe(201);
  });
  afterAll(() => s.close());

  it('answers a SelfSubjectAccessReview from the authorizer: system:masters may do anything, resource or not', async () => {
    for (const spec of [{ resourceAttributes: { verb: 'create', resource: 'pods', namespace: 'team' } }, { nonResourceAttributes: { path: '/logs', verb: 'get' } }]) {
      const r = await s.request('POST', `${AuthzV1}/selfsubjectaccessreviews`, { body: review('SelfSubjectAccessReview', spec) });
      expect(r.status).toBe(201);
      expect(r.json.spec).toEqual(spec);
      // The privileged-group authorizer gives no reason, so Kubernetes writes none.
      expect(r.json.status).toEqual({ allowed: true });
    }
  });

  it('refuses an access review with both attribute sets or neither (422, the field named)', async () => {
    const both = await s.request('POST', `${AuthzV1}/selfsubjectaccessreviews`, {
      body: review('SelfSubjectAccessReview', { resourceAttributes: { verb: 'get' }, nonResourceAttributes: { path: '/', verb: 'get' } }),
    });
    expect([both.status, both.json.details.causes[0].field]).toEqual([422, 'spec.nonResourceAttributes']);
    const neither = await s.request('POST', `${AuthzV1}/selfsubjectaccessreviews`, { body: review('SelfSubjectAccessReview', {}) });
    expect([neither.status, neither.json.details.causes[0].field]).toEqual([422, 'spec.resourceAttributes']);
  });

  it('answers a SubjectAccessReview for its subject: needs a user or group; RBAC decides', async () => {
    const attrs = { resourceAttributes: { verb: 'get', resource: 'secrets', namespace: 'team' } };
    const alice = await s.request('POST', `${AuthzV1}/subjectaccessreviews`, { body: review('SubjectAccessReview', { ...attrs, user: 'alice' }) });
    expect([alice.status, alice.json.status]).toEqual([201, { allowed: false }]);
    const master = await s.request('POST', `${AuthzV1}/subjectaccessreviews`, { body: review('SubjectAccessReview', { ...attrs, user: 'alice', groups: ['system:masters'] }) });
    expect(master.json.status).toEqual({ allowed: true });
    const anonymous = await s.request('POST', `${AuthzV1}/subjectaccessreviews`, { body: review('SubjectAccessReview', { ...attrs, user: 'system:anonymous' }) });
    expect(anonymous.json.status.allowed).toBe(false);
    // Discovery is bound to every authenticated user.
    const discovery = await s.request('POST', `${AuthzV1}/subjectaccessreviews`, {
      body: review('SubjectAccessReview', { nonResourceAttributes: { path: '/apis/apps', verb: 'get' }, user: 'alice', groups: ['system:authenticated'] }),
    });
    expect(discovery.json.status).toEqual({ allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated"' });
    const nobody = await s.request('POST', `${AuthzV1}/subjectaccessreviews`, { body: review('SubjectAccessReview', attrs) });
    expect([nobody.status, nobody.json.details.causes[0].message]).toEqual([422, expect.stringContaining('at least one of user or group')]);
    // v1beta1 names the list `group`.
    const beta = await s.request('POST', '/apis/authorization.k8s.io/v1beta1/subjectaccessreviews', {
      body: review('SubjectAccessReview', { ...attrs, group: ['system:masters'] }, 'authorization.k8s.io/v1beta1'),
    });
    expect([beta.status, beta.json.status.allowed]).toEqual([201, true]);
  });

  it('answers a LocalSubjectAccessReview only about its own namespace', async () => {
    const path = `${AuthzV1}/namespaces/team/localsubjectaccessreviews`;
    const ok = await s.request('POST', path, { body: review('LocalSubjectAccessReview', { resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'team' }, user: 'bob', groups: ['system:masters'] }) });
    expect([ok.status, ok.json.status.allowed]).toEqual([201, true]);
    const other = await s.request('POST', path, { body: review('LocalSubjectAccessReview', { resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'elsewhere' }, user: 'bob' }) });
    expect([other.status, other.json.message]).toEqual([400, 'spec.resourceAttributes.namespace must match namespace: team']);
  });

  it('answers a TokenReview with the token\'s user, authenticated false for an unknown token, 400 for none', async () => {
    const path = '/apis/authentication.k8s.io/v1/tokenreviews';
    const body = (token: string) => review('TokenReview', { token }, 'authentication.k8s.io/v1');
    const known = await s.request('POST', path, { body: body(TestToken) });
    expect(known.status).toBe(201);
    expect(known.json.status).toEqual({ authenticated: true, user: { username: 'admin', uid: 'admin', groups: expect.arrayContaining(['system:authenticated']) }, audiences: [ApiAudience] });
    expect((await s.request('POST', path, { body: body('not-a-token') })).json.status).toEqual({ authenticated: false, user: {} });
    const none = await s.request('POST', path, { body: body('') });
    expect([none.status, none.json.message]).toEqual([400, 'token is required for TokenReview in authentication']);
    // The token is not logged.
    expect(JSON.stringify(s.logs)).not.toContain(TestToken);
  });

  it('reads and answers a SelfSubjectAccessReview in protobuf, as kubectl sends it', async () => {
    const body = encodeProtobuf({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', metadata: {}, spec: { resourceAttributes: { verb: 'list', resource: 'pods' } } });
    const res = await fetch(`${s.url}${AuthzV1}/selfsubjectaccessreviews`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TestToken}`, 'content-type': ProtobufMediaType, accept: `${ProtobufMediaType}, application/json` },
      body,
    });
    expect([res.status, res.headers.get('content-type')]).toEqual([201, ProtobufMediaType]);
    const answered = decodeProtobuf(new Uint8Array(await res.arrayBuffer()));
    expect(answered).toMatchObject({ kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'list', resource: 'pods' } }, status: { allowed: true } });
  });

  it('answers a SelfSubjectRulesReview with the requester\'s rules, in JSON and in protobuf (kubectl auth can-i --list)', async () => {
    const path = `${AuthzV1}/selfsubjectrulesreviews`;
    const json = await s.request('POST', path, { body: review('SelfSubjectRulesReview', { namespace: 'team' }) });
    expect(json.status).toBe(201);
    expect(json.json.status.resourceRules).toContainEqual({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
    expect(json.json.status.nonResourceRules).toContainEqual({ verbs: ['*'], nonResourceURLs: ['*'] });
    expect(json.json.status.incomplete).toBe(false);
    const res = await fetch(`${s.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TestToken}`, 'content-type': ProtobufMediaType, accept: `${ProtobufMediaType}, application/json` },
      body: encodeProtobuf({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', metadata: {}, spec: { namespace: 'team' } }),
    });
    expect([res.status, res.headers.get('content-type')]).toEqual([201, ProtobufMediaType]);
    const answered = decodeProtobuf(new Uint8Array(await res.arrayBuffer())) as any;
    expect(answered.status.resourceRules).toContainEqual({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
    const none = await s.request('POST', path, { body: review('SelfSubjectRulesReview', {}) });
    expect([none.status, none.json.message]).toEqual([400, 'no namespace on request']);
  });

  it('answers a SelfSubjectReview with the requester, in JSON and in protobuf (kubectl auth whoami)', async () => {
    const path = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
    const json = await s.request('POST', path, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
    expect([json.status, json.json.status.userInfo]).toEqual([201, { username: 'admin', uid: 'admin', groups: ['system:masters', 'system:authenticated'] }]);
    const res = await fetch(`${s.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TestToken}`, 'content-type': ProtobufMediaType, accept: `${ProtobufMediaType}, application/json` },
      body: encodeProtobuf({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview', metadata: {} }),
    });
    expect([res.status, res.headers.get('content-type')]).toEqual([201, ProtobufMediaType]);
    expect(decodeProtobuf(new Uint8Array(await res.arrayBuffer()))).toMatchObject({ status: { userInfo: { username: 'admin', groups: ['system:masters', 'system:authenticated'] } } });
  });

  it('keeps nothing: reviews can only be created', async () => {
    expect((await s.request('GET', `${AuthzV1}/selfsubjectaccessreviews`)).status).toBe(405);
  });
});

describe('OpenShift\'s authorization.openshift.io reviews, answered by the same authorizer', () => {
  let s: TestServer;
  const OpenShift = '/apis/authorization.openshift.io/v1';
  const os = (kind: string, fields: object) => ({ apiVersion: 'authorization.openshift.io/v1', kind, ...fields });
  beforeAll(async () => {
    s = await startServerWithUsers();
    expect((await s.request('POST', '/api/v1/namespaces', { body: namespace('shop') })).status).toBe(201);
    await grant(s, { name: 'devs-view', role: 'view', namespace: 'shop', subjects: [{ kind: 'Group', name: 'devs' }] }, { verb: 'list', resource: 'pods' });
  });
  afterAll(() => s.close());

  it('answers SubjectAccessReview and LocalSubjectAccessReview with a SubjectAccessReviewResponse, as the Kubernetes review does', async () => {
    const asked = { verb: 'list', resource: 'pods', resourceAPIGroup: '', user: 'bob', groups: ['devs'] };
    const local = await s.request('POST', `${OpenShift}/namespaces/shop/localsubjectaccessreviews`, { body: os('LocalSubjectAccessReview', asked) });
    expect([local.status, local.json]).toEqual([201, {
      kind: 'SubjectAccessReviewResponse', apiVersion: 'authorization.openshift.io/v1', metadata: {}, namespace: 'shop', allowed: true,
      reason: 'RBAC: allowed by RoleBinding "devs-view/shop" of ClusterRole "view" to Group "devs"',
    }]);
    const elsewhere = await s.request('POST', `${OpenShift}/subjectaccessreviews`, { body: os('SubjectAccessReview', { ...asked, namespace: 'prod' }) });
    expect(elsewhere.json).toMatchObject({ kind: 'SubjectAccessReviewResponse', namespace: 'prod', allowed: false });
    const secrets = await s.request('POST', `${OpenShift}/subjectaccessreviews`, { body: os('SubjectAccessReview', { ...asked, resource: 'secrets', namespace: 'shop' }) });
    expect(secrets.json.allowed).toBe(false);
    // No user and no groups: the requester (here the admin).
    expect((await s.request('POST', `${OpenShift}/subjectaccessreviews`, { body: os('SubjectAccessReview', { verb: 'delete', resource: 'nodes' }) })).json.allowed).toBe(true);
    const mismatch = await s.request('POST', `${OpenShift}/namespaces/shop/localsubjectaccessreviews`, { body: os('LocalSubjectAccessReview', { ...asked, namespace: 'prod' }) });
    expect([mismatch.status, mismatch.json.message]).toEqual([400, 'namespace: Invalid value: "prod": namespace must be: shop']);
  });

  it('answers who may (ResourceAccessReview) and what one may (SubjectRulesReview, SelfSubjectRulesReview)', async () => {
    const who = await s.request('POST', `${OpenShift}/namespaces/shop/localresourceaccessreviews`, { body: os('LocalResourceAccessReview', { verb: 'get', resource: 'pods' }) });
    // The scheduler and the controllers whose roles say `get pods` (their bootstrap roles); devs through their binding; system:masters always.
    const controllers = ['deployment-controller', 'endpoint-controller', 'endpointslice-controller', 'eventing-controller', 'generic-garbage-collector', 'namespace-controller', 'node-controller', 'serving-controller', 'statefulset-controller'];
    const users = ['system:kube-scheduler', ...controllers.map((c) => `system:serviceaccount:kube-system:${c}`)];
    expect(who.json).toMatchObject({ kind: 'ResourceAccessReviewResponse', namespace: 'shop', users, evalutionError: '' });
    expect(who.json.groups).toEqual(expect.arrayContaining(['devs', 'system:masters']));
    const rules = await s.request('POST', `${OpenShift}/namespaces/shop/subjectrulesreviews`, { body: os('SubjectRulesReview', { spec: { user: 'bob', groups: ['devs', 'system:authenticated'] } }) });
    expect(rules.json.status.rules).toContainEqual({ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['namespaces'] });
    expect(rules.json.status.rules).toContainEqual({ verbs: ['get'], apiGroups: null, resources: null, nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] });
    const self = await s.request('POST', `${OpenShift}/namespaces/shop/selfsubjectrulesreviews`, { body: os('SelfSubjectRulesReview', { spec: {} }) });
    expect(self.json.status.rules).toContainEqual({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
    // bob may not ask: Kubernetes' bootstrap policy grants no OpenShift reviews.
    const refused = await s.request('POST', `${OpenShift}/namespaces/shop/selfsubjectrulesreviews`, { token: 'bob-token', body: os('SelfSubjectRulesReview', { spec: {} }) });
    expect(refused.status).toBe(403);
  });
});
