/**
 * Impersonation headers (`kubectl --as`, `--as-group`, `--as-uid`) as kube-apiserver checks them: each
 * of user, group, uid and extra needs the `impersonate` verb on it, then the request is authorized and
 * served as the impersonated user. And the authorization modes besides RBAC.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { serve } from '../../src/server.js';
import { grant, namespace, startServerWithUsers, tempDir, type TestServer } from '../support/helpers.js';

const whoami = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
const who = async (s: TestServer, headers: Record<string, string>, token?: string) =>
  (await s.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { body: whoami, headers, ...(token && { token }) })).json;

describe('impersonation', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServerWithUsers();
    for (const ns of ['shop', 'prod']) expect((await s.request('POST', '/api/v1/namespaces', { body: namespace(ns) })).status).toBe(201);
    await grant(s, { name: 'devs-edit', role: 'edit', namespace: 'shop', subjects: [{ kind: 'Group', name: 'devs' }] }, { verb: 'list', resource: 'pods' });
  });
  afterAll(() => s.close());

  it('acts as the impersonated user: its groups default to system:authenticated, or are the ones asked', async () => {
    expect((await who(s, { 'impersonate-user': 'bob' })).status.userInfo).toEqual({ username: 'bob', groups: ['system:authenticated'] });
    const full = await who(s, { 'impersonate-user': 'bob', 'impersonate-group': 'devs', 'impersonate-uid': 'u-1', 'impersonate-extra-reason': 'on call' });
    expect(full.status.userInfo).toEqual({ username: 'bob', uid: 'u-1', groups: ['devs', 'system:authenticated'], extra: { reason: ['on call'] } });
    const sa = await who(s, { 'impersonate-user': 'system:serviceaccount:shop:ci' });
    expect(sa.status.userInfo).toEqual({ username: 'system:serviceaccount:shop:ci', groups: ['system:serviceaccounts', 'system:serviceaccounts:shop', 'system:authenticated'] });
    // Authorized as bob: without the devs group he has nothing in shop.
    const pods = await s.request('GET', '/api/v1/namespaces/shop/pods', { headers: { 'impersonate-user': 'bob' } });
    expect([pods.status, pods.json.message]).toEqual([403, 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "shop"']);
    expect((await s.request('GET', '/api/v1/namespaces/shop/pods', { headers: { 'impersonate-user': 'bob', 'impersonate-group': 'devs' } })).status).toBe(200);
  });

  it('refuses an impersonation the requester may not make, naming what it asked for', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ 'impersonate-user': 'alice' }, 'users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope'],
      [{ 'impersonate-user': 'system:serviceaccount:prod:ci' }, 'serviceaccounts "ci" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "prod"'],
      [{ 'impersonate-user': 'system:serviceaccount:shop:ci', 'impersonate-group': 'system:masters' }, 'groups "system:masters" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope'],
      [{ 'impersonate-user': 'system:serviceaccount:shop:ci', 'impersonate-extra-scopes': 'all' }, 'userextras.authentication.k8s.io "all" is forbidden: User "bob" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope'],
      [{ 'impersonate-user': 'system:serviceaccount:shop:ci', 'impersonate-uid': 'x' }, 'uids.authentication.k8s.io "x" is forbidden: User "bob" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope'],
    ];
    for (const [headers, message] of cases) {
      const r = await s.request('GET', '/api', { headers, token: 'bob-token' });
      expect([r.status, r.json.message], JSON.stringify(headers)).toEqual([403, message]);
    }
    // edit lets bob impersonate the service accounts of shop, and nothing else.
    expect((await who(s, { 'impersonate-user': 'system:serviceaccount:shop:ci' }, 'bob-token')).status.userInfo.username).toBe('system:serviceaccount:shop:ci');
  });

  it('refuses groups, a uid or extras without a user to impersonate (400)', async () => {
    for (const headers of [{ 'impersonate-group': 'devs' }, { 'impersonate-uid': 'u' }, { 'impersonate-extra-a': 'b' }] as Record<string, string>[]) {
      const r = await s.request('GET', '/api', { headers });
      expect([r.status, r.json.reason, r.json.message]).toEqual([400, 'BadRequest', 'requested Impersonate-Group, Impersonate-Uid or Impersonate-Extra-* without impersonating a user (Impersonate-User)']);
    }
  });
});

describe.each([
  ['AlwaysAllow', 200, undefined],
  ['AlwaysDeny', 403, 'secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" in the namespace "default": Everything is forbidden.'],
] as const)('--authorization-mode %s', (mode, status, message) => {
  let s: TestServer;
  beforeAll(async () => (s = await startServerWithUsers('memory:', [mode])));
  afterAll(() => s.close());

  it('decides for every user but system:masters, who may always do anything', async () => {
    const bob = await s.request('GET', '/api/v1/namespaces/default/secrets', { token: 'bob-token' });
    expect([bob.status, bob.json.message]).toEqual([status, message]);
    expect((await s.request('GET', '/api/v1/namespaces/default/secrets')).status).toBe(200);
  });
});

describe('cluster-api serve --authorization-mode', () => {
  it('says at start that AlwaysAllow lets every authenticated user do anything, and says nothing with RBAC', async () => {
    const dir = tempDir();
    try {
      for (const [mode, warned] of [['AlwaysAllow', true], ['RBAC', false]] as const) {
        const logs: Record<string, unknown>[] = [];
        const served = await serve(resolveConfig({ port: 0, dataDir: join(dir, mode), storage: 'memory:', authorizationMode: mode, disableAgent: true }), (e) => logs.push(e));
        await served.server.close();
        expect(logs.some((l) => l.level === 'warn' && String(l.msg).startsWith('--authorization-mode AlwaysAllow: every authenticated user may do anything')), mode).toBe(warned);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
