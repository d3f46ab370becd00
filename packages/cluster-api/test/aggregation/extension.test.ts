/**
 * The aggregation layer with kubectl against `serve()`: a real extension API server (wardle.ts) behind
 * a Service and its Endpoints, registered by an APIService that kubectl applies. kubectl discovers
 * and lists its `flunders`, `api-resources` shows them, the backend sees the front-proxy certificate
 * and the caller's identity (never its token), Available follows the backend (Passed, then
 * FailedDiscoveryCheck when it stops, MissingEndpoints, ServiceNotFound), an unavailable one answers
 * 503, authorization is this server's, malformed APIServices are 422 with Kubernetes' messages, and a
 * Local APIService deleted comes back.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { connect } from 'node:tls';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { serve, type Served } from '../../src/server.js';
import { runKubectl, tempDir } from '../support/helpers.js';
import { Group, startWardle, Version, type Wardle } from './wardle.js';
import { until } from '../../testing/src/poll.js';

const kubectlBin = '/usr/bin/kubectl';
const name = `${Version}.${Group}`;
/** Each probe runs kubectl: poll it gently, and allow as long as the 150 tries of 200 ms this test always had. */
const kubectlPolls = { timeoutMs: 60_000, everyMs: 200 };

describe.runIf(existsSync(kubectlBin))('an extension API server behind an APIService', () => {
  let dir: string;
  let served: Served;
  let wardle: Wardle;
  let token: string;
  const kubectl = (...args: string[]) =>
    runKubectl(kubectlBin, { PATH: process.env.PATH, HOME: dir, KUBECONFIG: served.kubeconfig, KUBECACHEDIR: join(dir, 'cache') }, args);
  const apply = (file: string, text: string) => (writeFileSync(join(dir, file), text), kubectl('apply', '-f', join(dir, file)));
  const condition = async () => {
    const r = await kubectl('get', 'apiservice', name, '-o', 'jsonpath={.status.conditions[?(@.type=="Available")].status} {.status.conditions[?(@.type=="Available")].reason}');
    return r.stdout.trim();
  };
  /** A request as a client sends it, answered whatever its status. */
  const call = (path: string, bearer = token, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown> }> =>
    new Promise((resolve, reject) => {
      const url = new URL(path, served.server.url);
      const req = request(url, { ca: readCa(), headers: { authorization: `Bearer ${bearer}`, accept: 'application/json', ...headers } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: body ? JSON.parse(body) : {} }));
      });
      req.on('error', reject);
      req.end();
    });
  let readCa: () => string;

  beforeAll(async () => {
    dir = tempDir();
    served = await serve(resolveConfig({ port: 0, dataDir: join(dir, 'data'), storage: 'memory:', disableAgent: true, disableScheduler: true }), () => {});
    const { readFileSync } = await import('node:fs');
    readCa = () => readFileSync(join(dir, 'data', 'tls', 'ca.crt'), 'utf8');
    token = readFileSync(join(dir, 'data', 'admin.token'), 'utf8').trim();
    // What an extension server reads to trust the front proxy.
    const cm = JSON.parse((await kubectl('get', 'configmap', '-n', 'kube-system', 'extension-apiserver-authentication', '-o', 'json')).stdout);
    expect(JSON.parse(cm.data['requestheader-username-headers'])).toEqual(['X-Remote-User']);
    expect(JSON.parse(cm.data['requestheader-group-headers'])).toEqual(['X-Remote-Group']);
    expect(JSON.parse(cm.data['requestheader-extra-headers-prefix'])).toEqual(['X-Remote-Extra-']);
    expect(cm.data['client-ca-file']).toContain('BEGIN CERTIFICATE');
    wardle = await startWardle(join(dir, 'wardle-ca'), 'api.wardle.svc', {
      clientCa: cm.data['requestheader-client-ca-file'],
      allowedNames: JSON.parse(cm.data['requestheader-allowed-names']),
    });
    expect((await kubectl('create', 'namespace', 'wardle')).code).toBe(0);
    const backend = await apply('backend.yaml', `apiVersion: v1
kind: Service
metadata: {name: api, namespace: wardle}
spec: {ports: [{name: https, port: 443, targetPort: ${wardle.port}}]}
---
apiVersion: v1
kind: Endpoints
metadata: {name: api, namespace: wardle}
subsets: [{addresses: [{ip: 127.0.0.1}], ports: [{name: https, port: ${wardle.port}}]}]
`);
    expect(backend.code, backend.stderr).toBe(0);
    const registered = await apply('apiservice.yaml', `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: ${name}}
spec:
  group: ${Group}
  version: ${Version}
  groupPriorityMinimum: 1000
  versionPriority: 15
  service: {namespace: wardle, name: api}
  caBundle: ${Buffer.from(wardle.ca).toString('base64')}
`);
    expect(registered.code, registered.stderr).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await served?.server.close();
    await wardle?.close();
  });

  it('becomes Available, and kubectl discovers and lists its resources as the caller', async () => {
    await until('Available True Passed', async () => (await condition()) === 'True Passed', kubectlPolls);
    const table = await kubectl('get', 'apiservice', name);
    expect(table.stdout).toMatch(new RegExp(`${name.replace(/\./g, '\\.')}\\s+wardle/api\\s+True`));
    const resources = await kubectl('api-resources', `--api-group=${Group}`);
    expect(resources.stdout).toMatch(/flunders\s+wardle\.example\.com\/v1alpha1\s+true\s+Flunder/);
    const got = await kubectl('get', 'flunders', '-n', 'wardle', '-o', 'name');
    expect(got.stdout.trim(), got.stderr).toBe('flunder.wardle.example.com/mellow');
    const asked = wardle.seen.filter((s) => s.path === `/apis/${Group}/${Version}/namespaces/wardle/flunders`);
    expect(asked.length).toBeGreaterThan(0);
    for (const s of asked) {
      expect(s.user).toBe('admin');
      expect(s.groups).toEqual(expect.arrayContaining(['system:masters', 'system:authenticated']));
      expect(s.authorization).toBeUndefined();
    }
    // The availability check comes as the aggregator itself.
    expect(wardle.seen.some((s) => s.path === `/apis/${Group}/${Version}` && s.user === 'system:kube-aggregator')).toBe(true);
    expect(wardle.refused).toBe(0);
    const groups = (await call('/apis')).json.groups as { name: string; preferredVersion: { groupVersion: string } }[];
    expect(groups.find((g) => g.name === Group)?.preferredVersion.groupVersion).toBe(`${Group}/${Version}`);
    expect((await call(`/apis/${Group}`)).json).toMatchObject({ kind: 'APIGroup', name: Group, versions: [{ groupVersion: `${Group}/${Version}`, version: Version }] });
  });

  it('does not trust a backend whose certificate its caBundle does not verify', async () => {
    const otherCa = (await import('../../src/auth/tls.js')).ensureCa(join(dir, 'other-ca')).cert;
    const registered = await apply('untrusted.yaml', `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.${Group}}
spec: {group: ${Group}, version: v1beta1, groupPriorityMinimum: 1000, versionPriority: 10, service: {namespace: wardle, name: api}, caBundle: ${Buffer.from(otherCa).toString('base64')}}
`);
    expect(registered.code, registered.stderr).toBe(0);
    const state = () => kubectl('get', 'apiservice', `v1beta1.${Group}`, '-o', 'jsonpath={.status.conditions[0].reason}: {.status.conditions[0].message}');
    const failed = await until('FailedDiscoveryCheck', async () => {
      const r = await state();
      return r.stdout.startsWith('FailedDiscoveryCheck') && r;
    }, kubectlPolls);
    expect(failed.stdout).toBe(`FailedDiscoveryCheck: failing or missing response from https://api.wardle.svc:443/apis/${Group}/v1beta1: tls: failed to verify certificate`);
    expect((await call(`/apis/${Group}/v1beta1/namespaces/wardle/flunders`)).status).toBe(503);
    expect(wardle.seen.some((s) => s.path.includes('/v1beta1'))).toBe(false);
    expect((await kubectl('delete', 'apiservice', `v1beta1.${Group}`)).code).toBe(0);
  });

  it('gives up on a backend that never answers: FailedDiscoveryCheck after 5 s, the API answering meanwhile', async () => {
    const held: Socket[] = [];
    const silent = createServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    try {
      const registered = await apply('silent.yaml', `apiVersion: v1
kind: Service
metadata: {name: silent, namespace: wardle}
spec: {ports: [{name: https, port: 443}]}
---
apiVersion: v1
kind: Endpoints
metadata: {name: silent, namespace: wardle}
subsets: [{addresses: [{ip: 127.0.0.1}], ports: [{name: https, port: ${port}}]}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.silent.example.com}
spec: {group: silent.example.com, version: v1, groupPriorityMinimum: 1000, versionPriority: 10, service: {namespace: wardle, name: silent}, insecureSkipTLSVerify: true}
`);
      expect(registered.code, registered.stderr).toBe(0);
      expect((await kubectl('get', 'namespace', 'wardle', '-o', 'name')).stdout.trim()).toBe('namespace/wardle');
      const state = () => kubectl('get', 'apiservice', 'v1.silent.example.com', '-o', 'jsonpath={.status.conditions[0].reason}: {.status.conditions[0].message}');
      const failed = await until('FailedDiscoveryCheck', async () => {
        const r = await state();
        return r.stdout.startsWith('FailedDiscoveryCheck') && r;
      }, kubectlPolls);
      expect(failed.stdout).toBe('FailedDiscoveryCheck: failing or missing response from https://silent.wardle.svc:443/apis/silent.example.com/v1: context deadline exceeded');
      expect((await kubectl('delete', 'apiservice', 'v1.silent.example.com')).code).toBe(0);
    } finally {
      silent.close();
      for (const socket of held) socket.destroy();
    }
  });

  it('sends an impersonated identity with its extra, drops X-Remote-* a client sends, and streams a watch', async () => {
    const before = wardle.seen.length;
    const path = `/apis/${Group}/${Version}/namespaces/wardle/flunders`;
    const answer = await call(path, token, { 'Impersonate-User': 'alice', 'Impersonate-Group': 'system:masters', 'Impersonate-Extra-Scopes': 'read', 'X-Remote-User': 'mallory', 'X-Remote-Group': 'evil' });
    expect(answer.status).toBe(200);
    const seen = wardle.seen.slice(before).find((s) => s.path === path)!;
    expect([seen.user, seen.groups, seen.extra]).toEqual(['alice', ['system:masters', 'system:authenticated'], { 'x-remote-extra-scopes': 'read' }]);
    const spoofed = await call(path, token, { 'X-Remote-User': 'mallory', 'X-Remote-Group': 'evil', 'X-Remote-Extra-Scopes': 'all' });
    expect(spoofed.status).toBe(200);
    const last = wardle.seen[wardle.seen.length - 1]!;
    expect([last.user, last.groups.includes('evil'), last.extra]).toEqual(['admin', false, {}]);
    const first = await new Promise<string>((resolve, reject) => {
      const req = request(new URL(`${path}?watch=true`, served.server.url), { ca: readCa(), headers: { authorization: `Bearer ${token}` } }, (res) => {
        res.once('data', (chunk: Buffer) => (resolve(chunk.toString()), req.destroy()));
      });
      req.on('error', reject);
      req.end();
    });
    expect(JSON.parse(first)).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'mellow' } } });
  });

  it('passes an upgrade through: the backend switches protocols and the bytes flow both ways', async () => {
    const socket = connect({ host: '127.0.0.1', port: served.server.port, ca: readCa(), servername: 'localhost' });
    await new Promise((resolve, reject) => (socket.once('secureConnect', resolve), socket.once('error', reject)));
    socket.write(`GET /apis/${Group}/${Version}/namespaces/wardle/flunders/mellow/attach HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n`);
    let received = '';
    const seen = (text: string) => new Promise<void>((resolve) => {
      const look = () => (received.includes(text) ? (socket.off('data', more), resolve()) : undefined);
      const more = (chunk: Buffer) => ((received += chunk.toString()), look());
      socket.on('data', more);
      look();
    });
    await seen('admin\n');
    expect(received).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n/);
    socket.write('ping through the proxy');
    await seen('ping through the proxy');
    socket.destroy();
  });

  it('authorizes before proxying: a user without a grant gets 403 and the backend never sees it', async () => {
    expect((await kubectl('create', 'serviceaccount', 'nobody', '-n', 'wardle')).code).toBe(0);
    const nobody = (await kubectl('create', 'token', 'nobody', '-n', 'wardle')).stdout.trim();
    const before = wardle.seen.length;
    const denied = await call(`/apis/${Group}/${Version}/namespaces/wardle/flunders`, nobody);
    expect([denied.status, denied.json.reason]).toEqual([403, 'Forbidden']);
    expect(denied.json.message).toBe('flunders.wardle.example.com is forbidden: User "system:serviceaccount:wardle:nobody" cannot list resource "flunders" in API group "wardle.example.com" in the namespace "wardle"');
    expect(wardle.seen.slice(before).filter((s) => s.user !== 'system:kube-aggregator')).toEqual([]);
  });

  it('refuses malformed APIServices with Kubernetes\' messages', async () => {
    const noGroup = await apply('bad1.yaml', `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1alpha1.}
spec: {version: v1alpha1, groupPriorityMinimum: 1000, versionPriority: 15, service: {namespace: wardle, name: api}}
`);
    expect(noGroup.code).not.toBe(0);
    expect(noGroup.stderr).toContain('spec.group: Required value: only v1 may have an empty group and it better be legacy kube');
    const badPriority = await apply('bad2.yaml', `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.other.example.com}
spec: {group: other.example.com, version: v1, groupPriorityMinimum: 0, versionPriority: 1001, service: {namespace: wardle, name: api, port: 70000}}
`);
    expect(badPriority.stderr).toContain('spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000');
    expect(badPriority.stderr).toContain('spec.versionPriority: Invalid value: 1001: must be positive and less than 1000');
    expect(badPriority.stderr).toContain('spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive');
    const badName = await apply('bad3.yaml', `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v2.other.example.com}
spec: {group: other.example.com, version: v1, groupPriorityMinimum: 10, versionPriority: 10, insecureSkipTLSVerify: true, caBundle: "${Buffer.from('x').toString('base64')}"}
`);
    expect(badName.stderr).toContain('metadata.name: Invalid value: "v2.other.example.com": must be `spec.version+"."+spec.group`: "v1.other.example.com"');
    expect(badName.stderr).toContain('spec.caBundle: Invalid value: "1 bytes": local APIServices may not have a caBundle');
    expect(badName.stderr).toContain('spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify');
    expect(badName.stderr).toContain('The APIService "v2.other.example.com" is invalid');
    const notBase64 = await apply('bad4.yaml', `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.other.example.com}
spec: {group: other.example.com, version: v1, groupPriorityMinimum: 10, versionPriority: 10, service: {namespace: wardle, name: api}, caBundle: "not base64!"}
`);
    expect(notBase64.stderr).toContain('spec.caBundle: Invalid value: "<certificate data>": must be base64-encoded');
    expect((await kubectl('get', 'apiservice', 'v1.other.example.com')).code).not.toBe(0);
  });

  it('keeps the Local APIServices: one deleted comes back, one changed is put back', async () => {
    expect((await kubectl('patch', 'apiservice', 'v1.apps', '--type=merge', '-p', '{"spec":{"versionPriority":1}}')).code).toBe(0);
    const reset = await until('v1.apps back to priority 15', async () => {
      const r = await kubectl('get', 'apiservice', 'v1.apps', '-o', 'jsonpath={.spec.versionPriority}');
      return r.stdout === '15' && r;
    }, kubectlPolls);
    expect(reset.stdout).toBe('15');
    expect((await kubectl('delete', 'apiservice', 'v1.apps')).code).toBe(0);
    const back = await until('v1.apps Local again', async () => {
      const r = await kubectl('get', 'apiservice', 'v1.apps', '-o', 'jsonpath={.spec.service}{.status.conditions[0].reason}');
      return r.code === 0 && r.stdout === 'Local' && r;
    }, kubectlPolls);
    expect(back.stdout).toBe('Local');
  });

  it('follows the backend: MissingEndpoints, ServiceNotFound, FailedDiscoveryCheck when it stops, and answers 503 meanwhile', async () => {
    expect((await kubectl('patch', 'endpoints', 'api', '-n', 'wardle', '--type=merge', '-p', '{"subsets":[{"notReadyAddresses":[{"ip":"127.0.0.1"}],"ports":[{"name":"https","port":1}]}]}')).code).toBe(0);
    await until('Available False MissingEndpoints', async () => (await condition()) === 'False MissingEndpoints', kubectlPolls);
    const unavailable = await call(`/apis/${Group}/${Version}/namespaces/wardle/flunders`);
    expect([unavailable.status, unavailable.json.kind, unavailable.json.reason, unavailable.json.message]).toEqual([503, 'Status', 'ServiceUnavailable', 'service unavailable']);
    expect((await kubectl('patch', 'endpoints', 'api', '-n', 'wardle', '--type=merge', '-p', JSON.stringify({ subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port: wardle.port }] }] }))).code).toBe(0);
    await until('Available True Passed', async () => (await condition()) === 'True Passed', kubectlPolls);
    await wardle.close();
    await until('Available False FailedDiscoveryCheck', async () => (await condition()) === 'False FailedDiscoveryCheck', kubectlPolls);
    const message = (await kubectl('get', 'apiservice', name, '-o', 'jsonpath={.status.conditions[0].message}')).stdout;
    expect(message).toBe(`failing or missing response from https://api.wardle.svc:443/apis/${Group}/${Version}: connect: connection refused`);
    expect((await call(`/apis/${Group}/${Version}/namespaces/wardle/flunders`)).status).toBe(503);
    expect((await kubectl('delete', 'service', 'api', '-n', 'wardle')).code).toBe(0);
    await until('Available False ServiceNotFound', async () => (await condition()) === 'False ServiceNotFound', kubectlPolls);
    expect((await kubectl('delete', 'apiservice', name)).code).toBe(0);
    expect((await call(`/apis/${Group}/${Version}/namespaces/wardle/flunders`)).status).toBe(404);
    expect(((await call('/apis')).json.groups as { name: string }[]).some((g) => g.name === Group)).toBe(false);
  }, 90_000);
});
