/**
 * SecurityContextConstraints admission with OpenShift's semantics, over HTTP with RBAC users and
 * with kubectl: the default SCCs and their `system:openshift:scc:*` roles exist at start; a new
 * namespace gets its uid, supplemental-group and MCS ranges; a user who may only use restricted-v2
 * has a privileged pod refused with every SCC's reason in OpenShift's order, and a plain pod
 * admitted with restricted-v2's defaults (runAsUser from the namespace's range, fsGroup, SELinux
 * level, seccomp, dropped capabilities) and the `openshift.io/scc` annotation; the same privileged
 * pod run as a ServiceAccount granted `privileged` is admitted; a workload's pods are judged for its
 * ServiceAccount; a malformed range annotation is a 403 naming it.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grant, runKubectl, startKubectlServer, startServerWithUsers, type KubectlServer, type TestServer } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

const kubectlBin = '/usr/bin/kubectl';
let s: TestServer;
const ns = 'team';
const as = (token: string) => ({ token });
const pods = `/api/v1/namespaces/${ns}/pods`;
const pod = (name: string, extra: Record<string, unknown> = {}, container: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'app', image: 'nginx', ...container }], ...extra },
});
const privileged = (name: string, extra: Record<string, unknown> = {}) => pod(name, extra, { securityContext: { privileged: true } });

beforeAll(async () => {
  s = await startServerWithUsers();
  expect((await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status).toBe(201);
  await grant(s, { name: 'bob-edit', role: 'edit', subjects: [{ kind: 'User', name: 'bob' }], namespace: ns }, { verb: 'create', resource: 'pods' });
}, 60_000);
afterAll(async () => s?.close());

describe('SecurityContextConstraints admission', () => {
  it('bootstraps the default SCCs and their use roles, restricted-v2 bound to every authenticated user', async () => {
    const list = (await s.request('GET', '/api/v1/securitycontextconstraints')).json.items.map((o: { metadata: { name: string } }) => o.metadata.name);
    expect(list.sort()).toEqual(['anyuid', 'hostaccess', 'hostmount-anyuid', 'hostnetwork', 'hostnetwork-v2', 'nonroot', 'nonroot-v2', 'privileged', 'restricted', 'restricted-v2']);
    const anyuid = (await s.request('GET', '/api/v1/securitycontextconstraints/anyuid')).json;
    expect(anyuid).toMatchObject({ priority: 10, runAsUser: { type: 'RunAsAny' }, requiredDropCapabilities: ['MKNOD'] });
    const role = (await s.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:openshift:scc:privileged')).json;
    expect(role.rules).toEqual([{ apiGroups: ['security.openshift.io'], resources: ['securitycontextconstraints'], resourceNames: ['privileged'], verbs: ['use'] }]);
    const binding = (await s.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/system:openshift:scc:restricted-v2')).json;
    expect(binding.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }]);
  });

  it('gives each new namespace its own uid, supplemental-group and MCS ranges', async () => {
    const a = (await s.request('GET', `/api/v1/namespaces/${ns}`)).json.metadata.annotations;
    expect(a['openshift.io/sa.scc.uid-range']).toMatch(/^1\d{9}\/10000$/);
    expect(a['openshift.io/sa.scc.supplemental-groups']).toBe(a['openshift.io/sa.scc.uid-range']);
    expect(a['openshift.io/sa.scc.mcs']).toMatch(/^s0:c\d+,c\d+$/);
    await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } } });
    const b = (await s.request('GET', '/api/v1/namespaces/other')).json.metadata.annotations;
    expect(b['openshift.io/sa.scc.uid-range']).not.toBe(a['openshift.io/sa.scc.uid-range']);
    expect(b['openshift.io/sa.scc.mcs']).not.toBe(a['openshift.io/sa.scc.mcs']);
  });

  it('refuses a privileged pod from a user without use on privileged, naming every SCC tried in order', async () => {
    const r = await s.request('POST', pods, { body: privileged('priv'), ...as('bob-token') });
    expect(r.status).toBe(403);
    expect(r.json.reason).toBe('Forbidden');
    const message: string = r.json.message;
    expect(message).toMatch(/^pods "priv" is forbidden: unable to validate against any security context constraint: \[provider "anyuid": Forbidden: not usable by user or serviceaccount, provider restricted-v2: \.containers\[0\]\.privileged: Invalid value: true: Privileged containers are not allowed, /);
    const tried = [...message.matchAll(/provider "?([a-z0-9-]+)"?:/g)].map((m) => m[1]);
    expect([...new Set(tried)]).toEqual(['anyuid', 'restricted-v2', 'restricted', 'nonroot-v2', 'nonroot', 'hostmount-anyuid', 'hostnetwork-v2', 'hostnetwork', 'hostaccess', 'privileged']);
    expect(message).toContain('provider "privileged": Forbidden: not usable by user or serviceaccount]');
    expect((await s.request('GET', `${pods}/priv`)).status).toBe(404);
  });

  it('admits a plain pod with restricted-v2: runAsUser in the namespace range and its other defaults, annotated', async () => {
    const annotations = (await s.request('GET', `/api/v1/namespaces/${ns}`)).json.metadata.annotations;
    const first = Number(annotations['openshift.io/sa.scc.uid-range'].split('/')[0]);
    const r = await s.request('POST', pods, { body: pod('plain'), ...as('bob-token') });
    expect(r.status).toBe(201);
    expect(r.json.metadata.annotations['openshift.io/scc']).toBe('restricted-v2');
    expect(r.json.spec.securityContext).toEqual({ fsGroup: first, seLinuxOptions: { level: annotations['openshift.io/sa.scc.mcs'] }, seccompProfile: { type: 'RuntimeDefault' } });
    expect(r.json.spec.containers[0].securityContext).toEqual({ runAsUser: first, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    // A uid outside the range is refused by every SCC bob may use.
    const root = await s.request('POST', pods, { body: pod('root', {}, { securityContext: { runAsUser: 0 } }), ...as('bob-token') });
    expect(root.status).toBe(403);
    expect(root.json.message).toContain(`provider restricted-v2: .containers[0].runAsUser: Invalid value: 0: must be in the ranges: [${first}, ${first + 9999}]`);
    // A change of labels only is not judged again; a pod's annotation stays.
    const labelled = await s.request('PATCH', `${pods}/plain`, { body: JSON.stringify({ metadata: { labels: { a: 'b' } } }), headers: { 'content-type': 'application/merge-patch+json' }, token: 'bob-token' });
    expect([labelled.status, labelled.json.metadata.annotations['openshift.io/scc']]).toEqual([200, 'restricted-v2']);
  });

  it('admits the privileged pod run as a ServiceAccount granted privileged, and annotates it', async () => {
    expect((await s.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'builder' } } })).status).toBe(201);
    await grant(s, { name: 'builder-privileged', role: 'system:openshift:scc:privileged', subjects: [{ kind: 'ServiceAccount', name: 'builder', namespace: ns }], namespace: ns },
      { verb: 'use', group: 'security.openshift.io', resource: 'securitycontextconstraints', name: 'privileged' });
    const r = await s.request('POST', pods, { body: privileged('priv', { serviceAccountName: 'builder' }), ...as('bob-token') });
    expect(r.status).toBe(201);
    expect(r.json.metadata.annotations['openshift.io/scc']).toBe('privileged');
    expect(r.json.spec.containers[0].securityContext).toEqual({ privileged: true });
  });

  it('judges a workload\'s pods for its ServiceAccount: privileged pods of a ReplicaSet run as builder are created, others not', async () => {
    const rs = (name: string, sa?: string) => ({
      apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name },
      spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { ...(sa && { serviceAccountName: sa }), containers: [{ name: 'app', image: 'nginx', securityContext: { privileged: true } }] } } },
    });
    expect((await s.request('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, { body: rs('granted', 'builder') })).status).toBe(201);
    expect((await s.request('POST', `/apis/apps/v1/namespaces/${ns}/replicasets`, { body: rs('denied') })).status).toBe(201);
    const made = await until('the granted pod', async () => (await s.request('GET', `${pods}?labelSelector=app%3Dgranted`)).json.items[0]);
    expect(made.metadata.annotations['openshift.io/scc']).toBe('privileged');
    const failure = await until('ReplicaFailure', async () => (await s.request('GET', `/apis/apps/v1/namespaces/${ns}/replicasets/denied`)).json.status?.conditions?.find((c: { type: string }) => c.type === 'ReplicaFailure'));
    expect(failure.message).toContain('unable to validate against any security context constraint');
    expect((await s.request('GET', `${pods}?labelSelector=app%3Ddenied`)).json.items).toEqual([]);
  });

  it('refuses pods in a namespace whose range annotation is malformed with a 403 naming it, not a server error', async () => {
    for (const [name, annotations, says] of [
      ['bad-range', { 'openshift.io/sa.scc.uid-range': 'lots', 'openshift.io/sa.scc.supplemental-groups': '1/1', 'openshift.io/sa.scc.mcs': 's0:c1,c0' }, 'unable to parse annotation openshift.io/sa.scc.uid-range="lots"'],
      ['bad-mcs', { 'openshift.io/sa.scc.uid-range': '1000/100', 'openshift.io/sa.scc.supplemental-groups': '1000/100', 'openshift.io/sa.scc.mcs': 'c1 c0!' }, 'unable to parse annotation openshift.io/sa.scc.mcs="c1 c0!"'],
      ['bad-groups', { 'openshift.io/sa.scc.uid-range': '1000/100', 'openshift.io/sa.scc.supplemental-groups': '5-1', 'openshift.io/sa.scc.mcs': 's0:c1,c0' }, 'unable to parse annotation openshift.io/sa.scc.supplemental-groups="5-1"'],
    ] as const) {
      expect((await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, annotations } } })).status).toBe(201);
      const r = await s.request('POST', `/api/v1/namespaces/${name}/pods`, { body: pod('p') });
      expect([r.status, r.json.reason]).toEqual([403, 'Forbidden']);
      expect(r.json.message).toBe(`pods "p" is forbidden: ${says}: expected ${name === 'bad-mcs' ? 'an SELinux level such as s0:c1,c0' : '<first>/<size> or <first>-<last>'}`);
    }
  });

});

describe.runIf(existsSync(kubectlBin))('SecurityContextConstraints through kubectl', () => {
  let k: KubectlServer;
  const kubectl = (...args: string[]) => runKubectl(kubectlBin, k.env, args);
  beforeAll(async () => {
    k = await startKubectlServer();
    expect((await kubectl('create', 'namespace', 'dev')).code).toBe(0);
    expect((await kubectl('create', 'rolebinding', 'alice-edit', '--clusterrole=edit', '--user=alice', '-n', 'dev')).code).toBe(0);
    await until('alice may create pods', async () => (await kubectl('auth', 'can-i', 'create', 'pods', '--as=alice', '-n', 'dev')).stdout.trim() === 'yes');
  }, 60_000);
  afterAll(async () => k?.close());

  it('prints the refusal naming the SCCs tried, and the admitted pod\'s SCC and uid', async () => {
    const overrides = JSON.stringify({ spec: { containers: [{ name: 'kpriv', image: 'nginx', securityContext: { privileged: true } }] } });
    const refused = await kubectl('run', 'kpriv', '--image=nginx', `--overrides=${overrides}`, '--as=alice', '-n', 'dev');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/^Error from server \(Forbidden\): pods "kpriv" is forbidden: unable to validate against any security context constraint: \[provider "anyuid": Forbidden: not usable by user or serviceaccount, provider restricted-v2: \.containers\[0\]\.privileged: Invalid value: true: Privileged containers are not allowed/);
    expect((await kubectl('run', 'kplain', '--image=nginx', '--as=alice', '-n', 'dev')).code).toBe(0);
    const range = (await kubectl('get', 'namespace', 'dev', '-o', 'jsonpath={.metadata.annotations.openshift\\.io/sa\\.scc\\.uid-range}')).stdout;
    const got = await kubectl('get', 'pod', 'kplain', '-n', 'dev', '-o', 'jsonpath={.metadata.annotations.openshift\\.io/scc} {.spec.containers[0].securityContext.runAsUser}');
    expect(got.stdout).toBe(`restricted-v2 ${range.split('/')[0]}`);
    // The cluster admin may use every SCC: anyuid, the one with priority, admits a plain pod.
    expect((await kubectl('run', 'admin-plain', '--image=nginx', '-n', 'dev')).code).toBe(0);
    expect((await kubectl('get', 'pod', 'admin-plain', '-n', 'dev', '-o', 'jsonpath={.metadata.annotations.openshift\\.io/scc}')).stdout).toBe('anyuid');
    expect((await kubectl('get', 'scc')).stdout).toMatch(/restricted-v2\s+false\s+\[NET_BIND_SERVICE\]\s+MustRunAs\s+MustRunAsRange\s+MustRunAs\s+RunAsAny\s+<none>\s+false/);
  });
});
