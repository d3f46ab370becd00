/** The review kinds over a real server: answered in their status, refused when malformed, never stored. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProtobuf, encodeProtobuf, ProtobufMediaType } from '../src/protobuf/codec.js';
import { ApiAudience } from '../src/auth/authenticator.js';
import { TestToken, namespace, startTestServer, type TestServer } from './helpers.js';

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
