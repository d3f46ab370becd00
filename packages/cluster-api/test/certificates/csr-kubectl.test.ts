/**
 * certificates.k8s.io/v1 with kubectl 1.32 against an in-process `serve` (its data dir's CA): a
 * request made by openssl is created, listed Pending, approved with `kubectl certificate approve`,
 * signed by the csrsigning controller from the cluster CA (openssl verifies the chain, the lifetime
 * follows expirationSeconds) and the certificate then authenticates; each signer's restrictions
 * fail a request with its reason; invalid requests are 422 with Kubernetes' field errors; approving
 * needs `approve` on the signer; bootstrap tokens authenticate only while their Secret says so.
 */
import { X509Certificate } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeconfigYaml } from '../../src/auth/credentials.js';
import { runKubectl, startKubectlServer, type KubectlServer } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

const kubectlBin = '/usr/bin/kubectl';
const run = promisify(execFile);
let s: KubectlServer;
let n = 0;

const kubectl = (...args: string[]) => runKubectl(kubectlBin, s.env, args);
const ok = async (...args: string[]) => {
  const r = await kubectl(...args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

/** An openssl key and request; `extra` are `req` arguments (-addext …). */
async function opensslRequest(subject: string, extra: string[] = []): Promise<{ key: string; csr: string }> {
  const base = join(s.dir, `req-${n++}`);
  await run('openssl', ['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${base}.key`, '-subj', subject, '-out', `${base}.csr`, ...extra]);
  return { key: `${base}.key`, csr: readFileSync(`${base}.csr`, 'utf8') };
}

const csrManifest = (name: string, csr: string, signerName: string, usages: string[], more: Record<string, unknown> = {}) => JSON.stringify({
  apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name },
  spec: { request: Buffer.from(csr).toString('base64'), signerName, usages, ...more },
});

async function create(manifest: string) {
  const file = join(s.dir, `m-${n++}.json`);
  writeFileSync(file, manifest);
  return kubectl('create', '-f', file);
}

const csrJson = async (name: string) => JSON.parse(await ok('get', 'csr', name, '-o', 'json'));

beforeAll(async () => {
  s = await startKubectlServer();
}, 60_000);

afterAll(async () => {
  await s?.close();
});

describe.runIf(existsSync(kubectlBin))('CertificateSigningRequest v1 with kubectl', () => {
  it('is served at certificates.k8s.io/v1 with approval and status subresources', async () => {
    const resources = await ok('api-resources', '--api-group=certificates.k8s.io');
    expect(resources).toMatch(/^certificatesigningrequests\s+csr\s+certificates\.k8s\.io\/v1\s+false\s+CertificateSigningRequest$/m);
    const raw = JSON.parse(await ok('get', '--raw', '/apis/certificates.k8s.io/v1'));
    expect(raw.resources.map((r: { name: string }) => r.name).sort()).toEqual(['certificatesigningrequests', 'certificatesigningrequests/approval', 'certificatesigningrequests/status']);
    const explained = await ok('explain', 'csr.spec.expirationSeconds');
    expect(explained).toMatch(/FIELD:\s+expirationSeconds <integer>/);
    expect(explained).toMatch(/requested duration of validity of the issued\s+certificate/);
  });

  it('signs an approved kube-apiserver-client request from the cluster CA, for expirationSeconds, and the certificate authenticates', async () => {
    const { key, csr } = await opensslRequest('/O=devs/CN=jane');
    expect((await create(csrManifest('jane', csr, 'kubernetes.io/kube-apiserver-client', ['client auth', 'digital signature'], { expirationSeconds: 3600 }))).code).toBe(0);
    expect(await ok('get', 'csr', 'jane')).toMatch(/^NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+REQUESTEDDURATION\s+CONDITION\n(jane)\s+\S+\s+kubernetes\.io\/kube-apiserver-client\s+admin\s+60m\s+Pending$/m);
    expect((await csrJson('jane')).spec).toMatchObject({ username: 'admin', groups: ['system:masters', 'system:authenticated'] });
    expect(await ok('certificate', 'approve', 'jane')).toMatch(/approved/);
    const issued = await until('the certificate', async () => (await csrJson('jane')).status?.certificate as string | undefined);
    expect(await ok('get', 'csr', 'jane')).toMatch(/Approved,Issued$/m);
    const obj = await csrJson('jane');
    expect(obj.status.conditions[0]).toMatchObject({ type: 'Approved', status: 'True', reason: 'KubectlApprove' });
    const pem = Buffer.from(issued, 'base64').toString();
    const certFile = join(s.dir, 'jane.crt');
    writeFileSync(certFile, pem);
    await run('openssl', ['verify', '-CAfile', join(s.dir, 'data', 'tls', 'ca.crt'), certFile]);
    const cert = new X509Certificate(pem);
    expect(cert.subject).toBe('O=devs\nCN=jane');
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    const lifetime = Date.parse(cert.validTo) - Date.now();
    expect(lifetime).toBeGreaterThan(3500_000);
    expect(lifetime).toBeLessThanOrEqual(3600_000);
    const kubeconfig = join(s.dir, 'jane.kubeconfig');
    writeFileSync(kubeconfig, kubeconfigYaml({ server: s.served.server.url, ca: readFileSync(join(s.dir, 'data', 'tls', 'ca.crt'), 'utf8'), clientCert: pem, clientKey: readFileSync(key, 'utf8') }));
    const whoami = await ok('auth', 'whoami', `--kubeconfig=${kubeconfig}`, '-o', 'jsonpath={.status.userInfo}');
    expect(JSON.parse(whoami)).toEqual({ username: 'jane', groups: ['devs', 'system:authenticated'] });
  });

  it('the same objects are read at v1beta1', async () => {
    const beta = JSON.parse(await ok('get', '--raw', '/apis/certificates.k8s.io/v1beta1/certificatesigningrequests/jane'));
    expect(beta).toMatchObject({ apiVersion: 'certificates.k8s.io/v1beta1', kind: 'CertificateSigningRequest', spec: { signerName: 'kubernetes.io/kube-apiserver-client' } });
    expect(beta.status.certificate).toBeTruthy();
  });

  it('fails a request its signer may not sign, with the signer\'s reason', async () => {
    const cases: [string, string, string, string[], string][] = [
      ['server-usage', '/CN=svc', 'kubernetes.io/kube-apiserver-client', ['server auth'], 'invalid usage for client certificate: server auth'],
      ['not-a-node', '/CN=jane', 'kubernetes.io/kube-apiserver-client-kubelet', ['digital signature', 'client auth'], 'subject organization is not system:nodes'],
      ['node-with-dns', '/O=system:nodes/CN=system:node:a', 'kubernetes.io/kube-apiserver-client-kubelet', ['digital signature', 'client auth'], 'DNS subjectAltNames are not allowed'],
      ['serving-no-san', '/O=system:nodes/CN=system:node:a', 'kubernetes.io/kubelet-serving', ['digital signature', 'server auth'], 'DNS or IP subjectAltName is required'],
    ];
    for (const [name, subject, signer, usages] of cases) {
      const { csr } = await opensslRequest(subject, name === 'node-with-dns' ? ['-addext', 'subjectAltName=DNS:a.example'] : []);
      expect((await create(csrManifest(name, csr, signer, usages))).code).toBe(0);
      await ok('certificate', 'approve', name);
    }
    for (const [name, , , , message] of cases) {
      const failed = await until(`${name} failed`, async () => ((await csrJson(name)).status?.conditions ?? []).find((c: { type: string }) => c.type === 'Failed'));
      expect(failed).toMatchObject({ status: 'True', reason: 'SignerValidationFailure', message });
      expect((await csrJson(name)).status.certificate).toBeUndefined();
    }
    expect(await ok('get', 'csr', 'server-usage', '--no-headers')).toMatch(/Approved,Failed$/m);
  });

  it('signs a kubelet-serving request with its DNS and IP names', async () => {
    const { csr } = await opensslRequest('/O=system:nodes/CN=system:node:web', ['-addext', 'subjectAltName=DNS:web.example,IP:10.1.2.3']);
    expect((await create(csrManifest('serving', csr, 'kubernetes.io/kubelet-serving', ['digital signature', 'key encipherment', 'server auth']))).code).toBe(0);
    await ok('certificate', 'approve', 'serving');
    const issued = await until('the serving certificate', async () => (await csrJson('serving')).status?.certificate as string | undefined);
    const cert = new X509Certificate(Buffer.from(issued, 'base64'));
    expect(cert.subjectAltName).toBe('DNS:web.example, IP Address:10.1.2.3');
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(Date.parse(cert.validTo) - Date.now()).toBeGreaterThan(364 * 24 * 3600_000);
  });

  it('denies with kubectl certificate deny; a denied request is never signed', async () => {
    const { csr } = await opensslRequest('/CN=mallory');
    await create(csrManifest('mallory', csr, 'kubernetes.io/kube-apiserver-client', ['client auth']));
    await ok('certificate', 'deny', 'mallory');
    const obj = await csrJson('mallory');
    expect(obj.status.conditions).toEqual([expect.objectContaining({ type: 'Denied', status: 'True', reason: 'KubectlDeny' })]);
    expect(await ok('get', 'csr', 'mallory', '--no-headers')).toMatch(/Denied$/m);
    expect(obj.status.certificate).toBeUndefined();
  });

  it('refuses invalid requests with 422 and Kubernetes\' field errors', async () => {
    const { csr } = await opensslRequest('/CN=x');
    const cases: [string, string][] = [
      [csrManifest('bad-pem', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', 'example.com/s', ['client auth']), 'spec.request: Invalid value: "<request data>": PEM block type must be CERTIFICATE REQUEST'],
      [csrManifest('bad-der', '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n', 'example.com/s', ['client auth']), 'spec.request: Invalid value: "<request data>": asn1: structure error'],
      [csrManifest('tampered', csr.replace(/\n([A-Za-z0-9+/]{10})[A-Za-z0-9+/]/, (_, a) => `\n${a}${a[0] === 'A' ? 'B' : 'A'}`), 'example.com/s', ['client auth']), 'spec.request: Invalid value: "<request data>"'],
      [csrManifest('no-signer', csr, '', ['client auth']), 'spec.signerName: Required value'],
      [csrManifest('bad-signer', csr, 'nodomain', ['client auth']), 'spec.signerName: Invalid value: "nodomain": must be a fully qualified domain and path of the form \'example.com/signer-name\''],
      [csrManifest('legacy', csr, 'kubernetes.io/legacy-unknown', ['client auth']), 'spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version'],
      [csrManifest('no-usages', csr, 'example.com/s', []), 'spec.usages: Required value'],
      [csrManifest('bad-usage', csr, 'example.com/s', ['flying']), 'spec.usages[0]: Unsupported value: "flying"'],
      [csrManifest('short', csr, 'example.com/s', ['client auth'], { expirationSeconds: 599 }), 'spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)'],
      [JSON.stringify({ apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'not-base64' }, spec: { request: '%%%', signerName: 'example.com/s', usages: ['client auth'] } }), 'spec.request: Invalid value: "<request data>"'],
    ];
    for (const [manifest, message] of cases) {
      const r = await create(manifest);
      expect(r.code, manifest).not.toBe(0);
      expect(r.stderr).toContain('is invalid');
      expect(r.stderr).toContain(message);
    }
    expect((await create(csrManifest('short-ok', csr, 'example.com/s', ['client auth'], { expirationSeconds: 600 }))).code).toBe(0);
  });

  it('approving needs approve on the signer (403 otherwise), whatever the subresource RBAC allows', async () => {
    const { csr } = await opensslRequest('/CN=bob');
    await create(csrManifest('bob', csr, 'example.com/bob-signer', ['client auth']));
    await ok('create', 'clusterrole', 'csr-approval-writer', '--verb=get,update,patch', '--resource=certificatesigningrequests,certificatesigningrequests/approval');
    await ok('create', 'clusterrolebinding', 'csr-approval-writer', '--clusterrole=csr-approval-writer', '--user=bob');
    const refused = await kubectl('certificate', 'approve', 'bob', '--as=bob');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('certificatesigningrequests.certificates.k8s.io "bob" is forbidden: user not permitted to approve requests with signerName "example.com/bob-signer"');
    // kubectl create clusterrole checks resources against discovery, and signers is no served resource.
    expect((await create(JSON.stringify({
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'bob-signer-approver' },
      rules: [{ apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: ['example.com/*'], verbs: ['approve'] }],
    }))).code).toBe(0);
    await ok('create', 'clusterrolebinding', 'bob-signer-approver', '--clusterrole=bob-signer-approver', '--user=bob');
    await until('bob may approve', async () => (await kubectl('certificate', 'approve', 'bob', '--as=bob')).code === 0);
    expect(await ok('get', 'csr', 'bob', '--no-headers')).toMatch(/Approved$/m);
  });

  it('auto-approves a node renewing its own client certificate, and leaves other requesters\' kubelet requests pending', async () => {
    const own = await opensslRequest('/O=system:nodes/CN=system:node:n1', ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1']);
    const file = join(s.dir, 'renewal.json');
    writeFileSync(file, csrManifest('renewal', own.csr, 'kubernetes.io/kube-apiserver-client-kubelet', ['digital signature', 'client auth']));
    await ok('create', '-f', file, '--as=system:node:n1', '--as-group=system:nodes');
    const approved = await until('the renewal approved', async () => ((await csrJson('renewal')).status?.conditions ?? [])[0]);
    expect(approved).toMatchObject({ type: 'Approved', status: 'True', reason: 'AutoApproved', message: 'Auto approving self kubelet client certificate after SubjectAccessReview.' });
    expect((await csrJson('renewal')).spec.username).toBe('system:node:n1');
    await until('the renewal issued', async () => (await csrJson('renewal')).status?.certificate);

    // Another node's name, asked by a node: selfnodeclient does not cover it and nodeclient is not granted to nodes.
    const other = await opensslRequest('/O=system:nodes/CN=system:node:n2');
    writeFileSync(file, csrManifest('other-node', other.csr, 'kubernetes.io/kube-apiserver-client-kubelet', ['digital signature', 'key encipherment', 'client auth']));
    await ok('create', '-f', file, '--as=system:node:n1', '--as-group=system:nodes');
    // The signer runs after the approver: once a later request is issued, this one has been looked at.
    const later = await opensslRequest('/O=system:nodes/CN=system:node:n1');
    writeFileSync(file, csrManifest('renewal-2', later.csr, 'kubernetes.io/kube-apiserver-client-kubelet', ['digital signature', 'key encipherment', 'client auth']));
    await ok('create', '-f', file, '--as=system:node:n1', '--as-group=system:nodes');
    await until('renewal-2 issued', async () => (await csrJson('renewal-2')).status?.certificate);
    expect(await ok('get', 'csr', 'other-node', '--no-headers')).toMatch(/system:node:n1\s+<none>\s+Pending$/m);
  });

  it('removes a request denied more than an hour ago (the CSR cleaner)', async () => {
    const { csr } = await opensslRequest('/CN=old');
    await create(csrManifest('old-denial', csr, 'example.com/s', ['client auth']));
    const obj = await csrJson('old-denial');
    const past = `${new Date(Date.now() - 2 * 3600_000).toISOString().slice(0, 19)}Z`;
    obj.status = { conditions: [{ type: 'Denied', status: 'True', reason: 'Old', message: 'denied long ago', lastUpdateTime: past, lastTransitionTime: past }] };
    const file = join(s.dir, 'old-denial.json');
    writeFileSync(file, JSON.stringify(obj));
    await ok('replace', '--raw', '/apis/certificates.k8s.io/v1/certificatesigningrequests/old-denial/approval', '-f', file);
    await until('the old denial removed', async () => (await kubectl('get', 'csr', 'old-denial')).stderr.includes('NotFound'));
    // A fresh denial stays.
    expect(await ok('get', 'csr', 'mallory', '--no-headers')).toMatch(/Denied$/m);
  });

  it('keeps spec immutable and Approved conditions through status and the object itself', async () => {
    const before = await csrJson('jane');
    await ok('patch', 'csr', 'jane', '--type=merge', '-p', '{"spec":{"signerName":"example.com/other"},"metadata":{"labels":{"a":"b"}}}');
    await ok('patch', 'csr', 'jane', '--subresource=status', '--type=merge', '-p', '{"status":{"conditions":[]}}');
    const after = await csrJson('jane');
    expect(after.spec).toEqual(before.spec);
    expect(after.metadata.labels).toEqual({ a: 'b' });
    expect(after.status.conditions.map((c: { type: string }) => c.type)).toEqual(['Approved']);
  });
});

describe.runIf(existsSync(kubectlBin))('bootstrap tokens', () => {
  const secret = (id: string, data: Record<string, string>) => ['create', 'secret', 'generic', `bootstrap-token-${id}`, '-n', 'kube-system', '--type', 'bootstrap.kubernetes.io/token',
    `--from-literal=token-id=${id}`, ...Object.entries(data).map(([k, v]) => `--from-literal=${k}=${v}`)];
  const whoami = (token: string) => kubectl('auth', 'whoami', `--token=${token}`, '-o', 'jsonpath={.status.userInfo}');

  it('authenticate as system:bootstrap:<id> in system:bootstrappers and the extra groups', async () => {
    await ok(...secret('abcdef', { 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token', expiration: new Date(Date.now() + 3600_000).toISOString() }));
    const r = await whoami('abcdef.0123456789abcdef');
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:authenticated'] });
    const can = await kubectl('auth', 'can-i', 'create', 'certificatesigningrequests', '--token=abcdef.0123456789abcdef');
    expect(can.stdout.trim()).toBe('yes');
    expect((await kubectl('auth', 'can-i', 'list', 'secrets', '-A', '--token=abcdef.0123456789abcdef')).stdout.trim()).toBe('no');
  });

  it('refuse (401) an unknown, expired, wrong, unflagged, badly grouped or malformed token', async () => {
    await ok(...secret('expird', { 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', expiration: '2020-01-01T00:00:00Z' }));
    await ok(...secret('nousag', { 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'false' }));
    await ok(...secret('badgrp', { 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:masters' }));
    for (const token of ['zzzzzz.0123456789abcdef', 'expird.0123456789abcdef', 'abcdef.0123456789abcdee', 'nousag.0123456789abcdef', 'badgrp.0123456789abcdef', 'abcdef.0123456789ABCDEF', 'abcdef:0123456789abcdef']) {
      const r = await whoami(token);
      expect(r.code, token).not.toBe(0);
      expect(r.stderr, token).toMatch(/Unauthorized/);
    }
  });

  it('stop working once the Secret is deleted', async () => {
    await ok('delete', 'secret', 'bootstrap-token-abcdef', '-n', 'kube-system');
    expect((await whoami('abcdef.0123456789abcdef')).stderr).toMatch(/Unauthorized/);
  });
});
