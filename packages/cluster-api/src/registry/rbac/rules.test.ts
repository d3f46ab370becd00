import { describe, expect, it } from 'vitest';
import type { PolicyRule } from '../../api/rbac-v1.js';
import { nonResourceAttributes, resourceAttributes } from '../authorization.js';
import { compactRules, compactString, ruleAllows, uncovered } from './rules.js';
import { appliesTo, rulesFor, type PolicySource } from './resolver.js';

const bob = { name: 'bob', uid: '', groups: ['devs', 'system:authenticated'] };
const res = (verb: string, resource: string, more: Parameters<typeof resourceAttributes>[2] = {}) => resourceAttributes(bob, verb, { resource, ...more });

describe('ruleAllows (rbac.RuleAllows)', () => {
  it.each<[string, PolicyRule, ReturnType<typeof res>, boolean]>([
    ['exact verb, group, resource', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, res('get', 'pods'), true],
    ['another verb', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, res('list', 'pods'), false],
    ['another group', { verbs: ['get'], apiGroups: ['apps'], resources: ['pods'] }, res('get', 'pods'), false],
    ['* everything', { verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, res('delete', 'widgets', { apiGroup: 'example.com' }), true],
    ['a subresource needs resource/subresource', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, res('get', 'pods', { subresource: 'log' }), false],
    ['resource/subresource', { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }, res('get', 'pods', { subresource: 'log' }), true],
    ['*/subresource', { verbs: ['get'], apiGroups: [''], resources: ['*/status'] }, res('get', 'services', { subresource: 'status' }), true],
    ['*/subresource is not the resource', { verbs: ['get'], apiGroups: [''], resources: ['*/status'] }, res('get', 'services'), false],
    ['resourceNames: that name', { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }, res('get', 'secrets', { name: 'a' }), true],
    ['resourceNames: another name', { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }, res('get', 'secrets', { name: 'b' }), false],
    ['resourceNames: no name (a list)', { verbs: ['list'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }, res('list', 'secrets'), false],
    ['non-resource rule, resource request', { verbs: ['get'], nonResourceURLs: ['*'] }, res('get', 'pods'), false],
  ])('%s', (_name, rule, attrs, allowed) => {
    expect(ruleAllows(attrs, rule)).toBe(allowed);
  });

  it.each<[string[], string, string, string, boolean]>([
    [['get'], '/healthz', '/healthz', 'get', true],
    [['get'], '/healthz', '/healthz/etcd', 'get', false],
    [['get'], '/healthz/*', '/healthz/etcd', 'get', true],
    [['get'], '/apis/*', '/apis', 'get', false],
    [['get'], '/apis*', '/apis', 'get', true],
    [['*'], '*', '/anything', 'post', true],
    [['get'], '/version', '/version', 'post', false],
  ])('%j on %s against %s (%s)', (verbs, url, path, verb, allowed) => {
    expect(ruleAllows(nonResourceAttributes(bob, verb, path), { verbs, nonResourceURLs: [url] })).toBe(allowed);
  });
});

describe('uncovered (the escalation check\'s Covers)', () => {
  const owner: PolicyRule[] = [
    { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'services'] },
    { verbs: ['*'], apiGroups: ['apps'], resources: ['*/scale'] },
    { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a', 'b'] },
    { verbs: ['get'], nonResourceURLs: ['/logs/*'] },
  ];
  it.each<[string, PolicyRule, PolicyRule[]]>([
    ['a subset is covered', { verbs: ['get'], apiGroups: [''], resources: ['pods'] }, []],
    ['*/scale covers deployments/scale', { verbs: ['update'], apiGroups: ['apps'], resources: ['deployments/scale'] }, []],
    ['names within the owner\'s names', { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }, []],
    ['all names are not some names', { verbs: ['get'], apiGroups: [''], resources: ['secrets'] }, [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]],
    ['URL prefix', { verbs: ['get'], nonResourceURLs: ['/logs/kube'] }, []],
    ['what is missing, broken down', { verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods', 'nodes'] }, [
      { apiGroups: [''], resources: ['pods'], verbs: ['delete'] },
      { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
      { apiGroups: [''], resources: ['nodes'], verbs: ['delete'] },
    ]],
  ])('%s', (_name, servant, missing) => {
    expect(uncovered(owner, [servant])).toEqual(missing);
  });
});

describe('compact forms', () => {
  it('merges simple rules of one resource and prints them as the escalation message does', () => {
    const compact = compactRules([
      { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
      { nonResourceURLs: ['/x'], verbs: ['get'] },
    ]);
    expect(compact.map(compactString)).toEqual(['{NonResourceURLs:["/x"], Verbs:["get"]}', '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}']);
    expect(compactString({ apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['web'], verbs: ['patch'] })).toBe(
      '{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["web"], Verbs:["patch"]}');
  });
});

describe('the rule resolver', () => {
  const policy: PolicySource = {
    role: (ns, name) => (ns === 'shop' && name === 'reader' ? { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] } : undefined),
    clusterRole: () => undefined,
    roleBindings: (ns) => (ns === 'shop' ? [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'ci', namespace: 'shop' }, roleRef: { kind: 'Role', name: 'reader' }, subjects: [{ kind: 'ServiceAccount', name: 'ci' }] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'gone', namespace: 'shop' }, roleRef: { kind: 'ClusterRole', name: 'nope' }, subjects: [{ kind: 'Group', name: 'devs' }] },
    ] : []),
    clusterRoleBindings: () => [],
    missing: (ref) => `clusterrole.rbac.authorization.k8s.io "${ref.name}" not found`,
  };

  it('defaults a ServiceAccount subject to the binding\'s namespace, and names the binding a rule came from', () => {
    const sa = { name: 'system:serviceaccount:shop:ci', uid: '', groups: [] };
    expect(appliesTo(sa, { kind: 'ServiceAccount', name: 'ci' }, 'shop')).toBe(true);
    expect(appliesTo(sa, { kind: 'ServiceAccount', name: 'ci' }, '')).toBe(false);
    expect(rulesFor(policy, sa, 'shop').rules.map((r) => r.source)).toEqual(['RoleBinding "ci/shop" of Role "reader" to ServiceAccount "ci/shop"']);
  });

  it('keeps the rules it found and reports a binding to a missing role', () => {
    expect(rulesFor(policy, bob, 'shop')).toEqual({ rules: [], error: 'clusterrole.rbac.authorization.k8s.io "nope" not found' });
    expect(rulesFor(policy, bob, 'elsewhere')).toEqual({ rules: [], error: undefined });
  });
});
