/**
 * RBAC with /usr/bin/kubectl against `serve` (TLS, a token file whose first user is the admin, SQLite):
 * `kubectl create role|clusterrole|rolebinding|clusterrolebinding`, the get columns, bob's 403s as
 * kubectl prints them, `auth can-i` and `--list` as Kubernetes prints them, `--as` / `--as-group`.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { serve, type Served } from '../../src/server.js';
import { runKubectl, tempDir } from '../support/helpers.js';

const kubectlBin = '/usr/bin/kubectl';

/** kubectl's table, each row's cells joined by one space (column widths are kubectl's business). */
const rows = (out: string): string[] => out.trim().split('\n').map((l) => l.trim().split(/\s{2,}/).join(' '));

describe.runIf(existsSync(kubectlBin))('RBAC with kubectl', () => {
  let dir: string;
  let served: Served;
  let env: NodeJS.ProcessEnv;
  const kubectl = (...args: string[]) => runKubectl(kubectlBin, env, args);
  const asBob = (...args: string[]) => kubectl(...args, '--token=bob-token');
  const ok = async (...args: string[]) => {
    const r = await kubectl(...args);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  };
  /** A binding is in effect once the authorizer's cache has seen it: a moment after the write. */
  const untilBob = async (...args: string[]) => {
    for (const deadline = Date.now() + 10_000; (await asBob(...args)).code !== 0;) if (Date.now() > deadline) throw new Error(`${args.join(' ')}: still refused`);
  };

  beforeAll(async () => {
    dir = tempDir();
    writeFileSync(join(dir, 'tokens.csv'), 'admin-token,admin,admin,system:masters\nbob-token,bob,bob-uid,devs\n');
    served = await serve(resolveConfig({ port: 0, dataDir: join(dir, 'data'), storage: `sqlite:${join(dir, 'state.db')}`, tokenAuthFile: join(dir, 'tokens.csv') }), () => {});
    env = { PATH: process.env.PATH, HOME: dir, KUBECONFIG: served.kubeconfig, KUBECACHEDIR: join(dir, 'cache') };
    await ok('create', 'namespace', 'shop');
    await ok('create', 'namespace', 'prod');
    await ok('run', 'web', '-n', 'shop', '--image=nginx:1.25', '--restart=Never');
  }, 60_000);
  afterAll(async () => {
    await served?.server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints bob\'s refusals as kubectl prints kube-apiserver\'s', async () => {
    const cases: [string[], string][] = [
      [['get', 'secrets', '-n', 'prod'], 'Error from server (Forbidden): secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" in the namespace "prod"'],
      [['get', 'secrets', '-A'], 'Error from server (Forbidden): secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" at the cluster scope'],
      [['delete', 'namespace', 'prod'], 'Error from server (Forbidden): namespaces "prod" is forbidden: User "bob" cannot delete resource "namespaces" in API group "" in the namespace "prod"'],
      [['create', 'configmap', 'x', '-n', 'kube-system'], 'error: failed to create configmap: configmaps is forbidden: User "bob" cannot create resource "configmaps" in API group "" in the namespace "kube-system"'],
    ];
    for (const [args, message] of cases) {
      const r = await asBob(...args);
      expect([r.code, r.stderr.trim()], args.join(' ')).toEqual([1, message]);
    }
    expect((await asBob('auth', 'can-i', 'get', 'pods', '-n', 'shop')).stdout).toBe('no\n');
  });

  it('`auth can-i --list` prints what Kubernetes (and OpenShift, for restricted-v2) prints for an authenticated user with no bindings', async () => {
    const list = await asBob('auth', 'can-i', '--list');
    expect(rows(list.stdout)).toEqual([
      'Resources Non-Resource URLs Resource Names Verbs',
      'selfsubjectreviews.authentication.k8s.io [] [] [create]',
      'selfsubjectaccessreviews.authorization.k8s.io [] [] [create]',
      'selfsubjectrulesreviews.authorization.k8s.io [] [] [create]',
      ...['/api/*', '/api', '/apis/*', '/apis', '/healthz', '/healthz', '/livez', '/livez', '/openapi/*', '/openapi', '/readyz', '/readyz', '/version/', '/version/', '/version', '/version']
        .map((url) => `[${url}] [] [get]`),
      // OpenShift's binding of restricted-v2 to every authenticated user.
      'securitycontextconstraints.security.openshift.io [] [restricted-v2] [use]',
    ]);
  });

  it('creates roles and bindings with kubectl create, and lists them with kubectl\'s columns', async () => {
    expect(await ok('create', 'role', 'pod-reader', '--verb=get,list,watch', '--resource=pods', '-n', 'shop')).toBe('role.rbac.authorization.k8s.io/pod-reader created\n');
    expect(await ok('create', 'clusterrole', 'web-reader', '--verb=get', '--resource=pods', '--resource-name=web')).toBe('clusterrole.rbac.authorization.k8s.io/web-reader created\n');
    expect(await ok('create', 'clusterrole', 'gathered', '--aggregation-rule=example.com/gather=true')).toBe('clusterrole.rbac.authorization.k8s.io/gathered created\n');
    expect(await ok('create', 'rolebinding', 'devs-pods', '--role=pod-reader', '--group=devs', '--serviceaccount=shop:ci', '-n', 'shop')).toBe('rolebinding.rbac.authorization.k8s.io/devs-pods created\n');
    expect(await ok('create', 'clusterrolebinding', 'bob-web', '--clusterrole=web-reader', '--user=bob')).toBe('clusterrolebinding.rbac.authorization.k8s.io/bob-web created\n');
    expect(rows(await ok('get', 'roles', '-n', 'shop'))).toEqual(['NAME CREATED AT', expect.stringMatching(/^pod-reader \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)]);
    expect(rows(await ok('get', 'rolebindings', '-n', 'shop', '-o', 'wide'))).toEqual([
      'NAME ROLE AGE USERS GROUPS SERVICEACCOUNTS', expect.stringMatching(/^devs-pods Role\/pod-reader \d+s devs shop\/ci$/),
    ]);
    expect(rows(await ok('get', 'clusterrolebinding', 'bob-web'))).toEqual(['NAME ROLE AGE', expect.stringMatching(/^bob-web ClusterRole\/web-reader \d+s$/)]);
    expect(await ok('get', 'clusterrole', 'gathered', '-o', 'jsonpath={.aggregationRule.clusterRoleSelectors[0].matchLabels}')).toBe('{"example.com/gather":"true"}');
  });

  it('gives bob what he was bound, `auth can-i` agrees, and `--as` / `--as-group` act as him', async () => {
    await untilBob('get', 'pods', '-n', 'shop');
    expect((await asBob('get', 'pods', '-n', 'shop', '-o', 'name')).stdout).toBe('pod/web\n');
    expect((await asBob('get', 'pods', '-n', 'prod')).stderr.trim()).toBe(
      'Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "prod"');
    // web-reader: the pod named web, in any namespace; nothing else by name.
    expect((await asBob('auth', 'can-i', 'get', 'pods/web', '-n', 'prod')).stdout).toBe('yes\n');
    expect((await asBob('auth', 'can-i', 'get', 'pods/other', '-n', 'prod')).stdout).toBe('no\n');
    const list = rows((await asBob('auth', 'can-i', '--list', '-n', 'shop')).stdout);
    expect(list).toEqual(expect.arrayContaining(['pods [] [] [get list watch]', 'pods [] [web] [get]']));
    expect(list.filter((r) => r.startsWith('secrets'))).toEqual([]);
    expect((await kubectl('auth', 'can-i', 'list', 'pods', '-n', 'shop', '--as=bob')).stdout).toBe('no\n');
    expect((await kubectl('auth', 'can-i', 'list', 'pods', '-n', 'shop', '--as=bob', '--as-group=devs')).stdout).toBe('yes\n');
    expect((await kubectl('get', 'pods', '-n', 'shop', '--as=bob', '--as-group=devs', '-o', 'name')).stdout).toBe('pod/web\n');
    expect((await asBob('get', 'pods', '-n', 'shop', '--as=alice')).stderr.trim()).toBe(
      'Error from server (Forbidden): users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope');
  });

  it('refuses bob a binding that would grant him admin, with Kubernetes\' escalation message', async () => {
    await ok('create', 'role', 'binder', '--verb=create', '--resource=rolebindings.rbac.authorization.k8s.io', '-n', 'shop');
    await ok('create', 'rolebinding', 'bob-binder', '--role=binder', '--user=bob', '-n', 'shop');
    for (const deadline = Date.now() + 10_000; (await asBob('auth', 'can-i', 'create', 'rolebindings', '-n', 'shop')).stdout !== 'yes\n';)
      if (Date.now() > deadline) throw new Error('binder not in effect');
    const r = await asBob('create', 'rolebinding', 'bob-admin', '--clusterrole=admin', '--user=bob', '-n', 'shop');
    expect(r.code).toBe(1);
    const [first, ...missing] = r.stderr.trim().split('\n');
    expect(first).toBe('error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "bob-admin" is forbidden: user "bob" (groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:');
    // One line per missing resource, sorted; pods only for what pod-reader does not give him.
    expect(missing).toEqual(expect.arrayContaining([
      '{APIGroups:[""], Resources:["bindings"], Verbs:["get" "list" "watch"]}',
      '{APIGroups:[""], Resources:["pods"], Verbs:["create" "delete" "deletecollection" "patch" "update"]}',
      '{APIGroups:["rbac.authorization.k8s.io"], Resources:["roles"], Verbs:["create" "delete" "deletecollection" "get" "list" "patch" "update" "watch"]}',
    ]));
    expect([...missing].sort()).toEqual(missing);
    // What he holds he may grant: the role his own binding names.
    expect((await asBob('create', 'rolebinding', 'carol-pods', '--role=pod-reader', '--user=carol', '-n', 'shop')).code).toBe(0);
  });
});
