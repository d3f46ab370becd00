/**
 * ServiceAccount tokens end to end: TokenRequest issues them, every request path accepts them while
 * the account (and a bound object) exist, TokenReview reports them; malformed requests and forged,
 * expired or revoked tokens are refused. Plus `kubectl create token` and a restart of `serve`.
 */
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { ApiAudience } from '../../src/auth/authenticator.js';
import { ServiceAccountTokens, ephemeralSigningKey, loadOrCreateSigningKey } from '../../src/auth/service-account-tokens.js';
import { serve } from '../../src/server.js';
import { grant, namespace, runKubectl, startKubectlServer, startTestServer, tempDir, TestToken, type TestServer } from '../support/helpers.js';

const ns = '/api/v1/namespaces/ci';
const tokenRequest = (spec: Record<string, unknown> = {}) => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec });

describe('service account tokens', () => {
  let s: TestServer;
  const issue = async (account: string, spec: Record<string, unknown> = {}) => {
    const r = await s.request('POST', `${ns}/serviceaccounts/${account}/token`, { body: tokenRequest(spec) });
    expect(r.status, r.text).toBe(201);
    return r.json.status.token as string;
  };
  const as = (token: string) => ({ token });

  beforeAll(async () => {
    s = await startTestServer('sqlite');
    expect((await s.request('POST', '/api/v1/namespaces', { body: namespace('ci') })).status).toBe(201);
    for (const name of ['builder', 'deployer'])
      expect((await s.request('POST', `${ns}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } } })).status).toBe(201);
    // The accounts' requests below read pods: what `view` in their namespace allows.
    await grant(s, { name: 'ci-view', role: 'view', namespace: 'ci', subjects: [{ kind: 'Group', name: 'system:serviceaccounts:ci' }] }, { verb: 'list', resource: 'pods' });
  });
  afterAll(() => s.close());

  it('issues a TokenRequest with the defaults Kubernetes applies', async () => {
    const r = await s.request('POST', `${ns}/serviceaccounts/builder/token`, { body: tokenRequest() });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: { name: 'builder', namespace: 'ci' }, spec: { audiences: [ApiAudience], expirationSeconds: 3600 } });
    const expires = Date.parse(r.json.status.expirationTimestamp);
    expect(Math.abs(expires - (Date.now() + 3600_000))).toBeLessThan(5_000);
    expect(r.json.status.token.split('.')).toHaveLength(3);
  });

  it('authenticates requests as system:serviceaccount:<ns>:<name>, and TokenReview says so', async () => {
    const token = await issue('builder');
    expect((await s.request('GET', `${ns}/pods`, as(token))).status).toBe(200);
    const review = await s.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } });
    const sa = (await s.request('GET', `${ns}/serviceaccounts/builder`)).json;
    expect(review.json.status).toEqual({
      authenticated: true,
      user: { username: 'system:serviceaccount:ci:builder', uid: sa.metadata.uid, groups: ['system:serviceaccounts', 'system:serviceaccounts:ci', 'system:authenticated'] },
      audiences: [ApiAudience],
    });
  });

  it('keeps a token for another audience out of this API, while TokenReview for that audience accepts it', async () => {
    const token = await issue('builder', { audiences: ['vault'] });
    expect((await s.request('GET', `${ns}/pods`, as(token))).status).toBe(401);
    const review = (audiences?: string[]) =>
      s.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, audiences } } });
    expect((await review(['vault'])).json.status).toMatchObject({ authenticated: true, audiences: ['vault'] });
    expect((await review()).json.status.authenticated).toBe(false);
    // A static token is good for this API server only, as kube-apiserver treats audience-less tokens.
    const staticReview = await s.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: TestToken, audiences: ['vault'] } } });
    expect(staticReview.json.status.authenticated).toBe(false);
  });

  it('revokes every token of a deleted account, also when an account of the same name comes back', async () => {
    const token = await issue('deployer');
    expect((await s.request('GET', `${ns}/pods`, as(token))).status).toBe(200);
    expect((await s.request('DELETE', `${ns}/serviceaccounts/deployer`)).status).toBe(200);
    expect((await s.request('GET', `${ns}/pods`, as(token))).status).toBe(401);
    expect((await s.request('POST', `${ns}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'deployer' } } })).status).toBe(201);
    expect((await s.request('GET', `${ns}/pods`, as(token))).status).toBe(401);
  });

  it('binds a token to a Pod: it works while the pod lives, and the uid named must be the pod\'s', async () => {
    const pod = await s.request('POST', `${ns}/pods`, { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'runner' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } });
    const token = await issue('builder', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'runner', uid: pod.json.metadata.uid } });
    expect((await s.request('GET', `${ns}/pods`, as(token))).status).toBe(200);
    const wrongUid = await s.request('POST', `${ns}/serviceaccounts/builder/token`, { body: tokenRequest({ boundObjectRef: { kind: 'Pod', name: 'runner', uid: 'not-its-uid' } }) });
    expect([wrongUid.status, wrongUid.json.reason]).toEqual([409, 'Conflict']);
    expect((await s.request('DELETE', `${ns}/pods/runner`)).status).toBe(200);
    expect((await s.request('GET', `${ns}/pods`, as(token))).status).toBe(401);
  });

  it('fills a service-account-token Secret with a token that lives as long as the Secret', async () => {
    const secret = (name: string, account: string, data?: Record<string, string>) => ({
      apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token',
      metadata: { name, annotations: { 'kubernetes.io/service-account.name': account } }, ...(data && { data }),
    });
    const created = await s.request('POST', `${ns}/secrets`, { body: secret('builder-token', 'builder') });
    expect(created.status).toBe(201);
    const sa = (await s.request('GET', `${ns}/serviceaccounts/builder`)).json;
    expect(created.json.metadata.annotations['kubernetes.io/service-account.uid']).toBe(sa.metadata.uid);
    expect(Buffer.from(created.json.data.namespace, 'base64').toString()).toBe('ci');
    expect(created.json.data['ca.crt']).toBeUndefined(); // plain HTTP: no CA to hand out
    const token = Buffer.from((await s.request('GET', `${ns}/secrets/builder-token`)).json.data.token, 'base64').toString();
    expect((await s.request('GET', `${ns}/pods`, as(token))).status).toBe(200);
    expect((await s.request('DELETE', `${ns}/secrets/builder-token`)).status).toBe(200);
    expect((await s.request('GET', `${ns}/pods`, as(token))).status).toBe(401);
    // An account that does not exist, or a token already there: left as created.
    expect((await s.request('POST', `${ns}/secrets`, { body: secret('ghost-token', 'ghost') })).json.data).toBeUndefined();
    expect((await s.request('POST', `${ns}/secrets`, { body: secret('own-token', 'builder', { token: 'b3du' }) })).json.data).toEqual({ token: 'b3du' });
    // The annotation naming the account is required, as Kubernetes requires it.
    const unnamed = await s.request('POST', `${ns}/secrets`, { body: { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token', metadata: { name: 'x' } } });
    expect(unnamed.status).toBe(422);
  });

  it('refuses malformed requests with a Status that says why', async () => {
    const post = (account: string, body: unknown) => s.request('POST', `${ns}/serviceaccounts/${account}/token`, { body });
    for (const expirationSeconds of [599, 2 ** 32 + 1, 'an hour', 1.5]) {
      const r = await post('builder', tokenRequest({ expirationSeconds }));
      expect([r.status, r.json.reason, r.json.details.causes[0].field]).toEqual([422, 'Invalid', 'spec.expirationSeconds']);
    }
    expect((await post('builder', { apiVersion: 'v1', kind: 'Pod', spec: {} })).status).toBe(400);
    expect((await post('builder', '[1,2]')).status).toBe(400);
    expect((await post('builder', '{"spec":')).status).toBe(400);
    const service = await post('builder', tokenRequest({ boundObjectRef: { kind: 'Service', name: 'web' } }));
    expect([service.status, service.json.message]).toEqual([400, 'cannot bind token for object of kind "Service"']);
    expect((await post('builder', tokenRequest({ boundObjectRef: { kind: 'Secret', name: 'nosuch' } }))).status).toBe(404);
    expect((await post('nosuch', tokenRequest())).json).toMatchObject({ code: 404, reason: 'NotFound', details: { name: 'nosuch', kind: 'serviceaccounts' } });
    // Only create: the token subresource is not something to read, and other kinds have none.
    expect((await s.request('GET', `${ns}/serviceaccounts/builder/token`)).status).toBe(405);
    expect((await s.request('POST', `${ns}/secrets/x/token`, { body: tokenRequest() })).status).toBe(404);
  });

  it('refuses forged, tampered, foreign and malformed tokens with 401, and never logs them', async () => {
    const token = await issue('builder');
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const altered = Buffer.from(JSON.stringify({ ...claims, sub: 'system:serviceaccount:ci:admin' })).toString('base64url');
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`;
    const foreign = new ServiceAccountTokens(ephemeralSigningKey).issue({ namespace: 'ci', name: 'builder', uid: claims['kubernetes.io'].serviceaccount.uid }, [], 3600).token;
    for (const bad of [`${header}.${altered}.${signature}`, unsigned, foreign, `${header}.${payload}`, `${header}.!!.${signature}`, 'eyJ.eyJ.x', `${token}x`]) {
      const r = await s.request('GET', `${ns}/pods`, as(bad));
      expect([r.status, r.json.reason]).toEqual([401, 'Unauthorized']);
    }
    expect(JSON.stringify(s.logs)).not.toContain(signature);
  });
});

describe('ServiceAccountTokens', () => {
  it('makes the signing key once, mode 0600, reuses it, and names an unreadable key file', () => {
    const dir = tempDir();
    const file = join(dir, 'keys', 'sa.key');
    const made = loadOrCreateSigningKey(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(loadOrCreateSigningKey(file).export({ type: 'pkcs8', format: 'pem' })).toEqual(made.export({ type: 'pkcs8', format: 'pem' }));
    writeFileSync(file, 'not a key');
    expect(() => loadOrCreateSigningKey(file)).toThrow(/service account key .*sa\.key: cannot be read/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a token once it expired', () => {
    const tokens = new ServiceAccountTokens(ephemeralSigningKey);
    const account = { namespace: 'a', name: 'b', uid: 'u' };
    expect(tokens.claims(tokens.issue(account, [], 600).token)?.sub).toBe('system:serviceaccount:a:b');
    expect(tokens.claims(tokens.issue(account, [], -1).token)).toBeUndefined();
  });
});

describe('service account tokens across a restart of serve', () => {
  it('keeps the signing key in the data dir, so a token issued before a restart still works', async () => {
    const dir = tempDir();
    const config = resolveConfig({ port: 0, dataDir: join(dir, 'data'), storage: `sqlite:${join(dir, 'state.db')}` });
    let served = await serve(config, () => {});
    const admin = { authorization: `Bearer ${readFileSync(join(dir, 'data', 'admin.token'), 'utf8').trim()}`, 'content-type': 'application/json' };
    const ca = readFileSync(join(dir, 'data', 'tls', 'ca.crt'), 'utf8');
    const call = (method: string, path: string, headers: Record<string, string>, body?: string) =>
      new Promise<{ status: number; json: any }>((resolve, reject) => {
        const req = request(`${served.server.url}${path}`, { method, ca, headers }, (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode!, json: text.startsWith('{') ? JSON.parse(text) : undefined }));
        });
        req.once('error', reject);
        req.end(body);
      });
    try {
      expect(existsSync(join(dir, 'data', 'service-account.key'))).toBe(true);
      await call('POST', '/api/v1/namespaces/default/serviceaccounts', admin, JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'ci' } }));
      const issued = await call('POST', '/api/v1/namespaces/default/serviceaccounts/ci/token', admin, JSON.stringify(tokenRequest()));
      const token = issued.json.status.token as string;
      await served.server.close();
      served = await serve(config, () => {});
      // Who the token is, which every authenticated account may ask (system:basic-user).
      const whoami = await call('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
      expect([whoami.status, whoami.json.status.userInfo.username]).toEqual([201, 'system:serviceaccount:default:ci']);
    } finally {
      await served.server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.runIf(existsSync('/usr/bin/kubectl'))('kubectl create token', () => {
  it('makes a token kubectl can use as the service account', async () => {
    const k = await startKubectlServer();
    try {
      const kubectl = (...args: string[]) => runKubectl('/usr/bin/kubectl', k.env, args);
      expect((await kubectl('create', 'serviceaccount', 'ci')).code).toBe(0);
      const created = await kubectl('create', 'token', 'ci', '--duration=15m');
      expect(created.code, created.stderr).toBe(0);
      const token = created.stdout.trim();
      // Nothing but discovery and self-review until an administrator binds the account a role.
      const who = await kubectl('auth', 'can-i', 'list', 'pods', `--token=${token}`);
      expect(who.stdout.trim()).toBe('no');
      expect((await kubectl('get', 'pods', `--token=${token}`)).stderr).toContain(
        'Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:default:ci" cannot list resource "pods" in API group "" in the namespace "default"');
      expect((await kubectl('create', 'rolebinding', 'ci-view', '--clusterrole=view', '--serviceaccount=default:ci')).code).toBe(0);
      for (const deadline = Date.now() + 10_000; (await kubectl('auth', 'can-i', 'list', 'pods', `--token=${token}`)).stdout.trim() !== 'yes';) {
        if (Date.now() > deadline) throw new Error('the binding was not in effect after 10 s');
      }
      expect((await kubectl('get', 'pods', `--token=${token}`)).code).toBe(0);
      const tooShort = await kubectl('create', 'token', 'ci', '--duration=5m');
      expect(tooShort.stderr).toContain('may not specify a duration less than 10 minutes');

      // A token Secret holds all a client needs: a kubeconfig built from it alone works.
      writeFileSync(join(k.dir, 'secret.yaml'), [
        'apiVersion: v1', 'kind: Secret', 'type: kubernetes.io/service-account-token',
        'metadata: {name: ci-token, annotations: {kubernetes.io/service-account.name: ci}}', '',
      ].join('\n'));
      expect((await kubectl('apply', '-f', join(k.dir, 'secret.yaml'))).code).toBe(0);
      const data = JSON.parse((await kubectl('get', 'secret', 'ci-token', '-o', 'json')).stdout).data;
      const ca = Buffer.from(data['ca.crt'], 'base64').toString();
      expect(ca).toContain('-----BEGIN CERTIFICATE-----');
      const kubeconfig = join(k.dir, 'from-secret.yaml');
      writeFileSync(kubeconfig, [
        'apiVersion: v1', 'kind: Config', 'current-context: sa',
        `clusters: [{name: c, cluster: {server: '${k.served.server.url}', certificate-authority-data: ${data['ca.crt']}}}]`,
        `users: [{name: ci, user: {token: ${Buffer.from(data.token, 'base64').toString()}}}]`,
        'contexts: [{name: sa, context: {cluster: c, user: ci, namespace: default}}]', '',
      ].join('\n'));
      const whoami = await runKubectl('/usr/bin/kubectl', { ...k.env, KUBECONFIG: kubeconfig }, ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
      expect([whoami.stderr, whoami.stdout]).toEqual(['', 'system:serviceaccount:default:ci']);
    } finally {
      await k.close();
    }
  });
});
