import { describe, expect, it } from 'vitest';
import { forbiddenError } from '../auth/forbidden.js';
import { attributesOf } from './authorize.js';
import { parseRequestInfo } from './request-info.js';

const bob = { name: 'bob', uid: '', groups: ['system:authenticated'] };

const attrs = (method: string, url: string) => {
  const [path, query = ''] = url.split('?') as [string, string?];
  const q = new URLSearchParams(query);
  return attributesOf(bob, parseRequestInfo(method, path, q), method, path, q);
};

describe('request attributes (RequestInfoFactory)', () => {
  it.each([
    ['GET', '/api/v1/namespaces/shop/pods', { verb: 'list', resource: 'pods', namespace: 'shop', name: '' }],
    ['GET', '/api/v1/namespaces/shop/pods?watch=1', { verb: 'watch', resource: 'pods', namespace: 'shop' }],
    ['GET', '/api/v1/namespaces/shop/pods/web?watch=true', { verb: 'get', name: 'web' }],
    ['GET', '/api/v1/watch/namespaces/shop/pods/web', { verb: 'watch', name: 'web' }],
    ['GET', '/api/v1/namespaces/shop/pods?fieldSelector=metadata.name%3Dweb', { verb: 'list', name: 'web' }],
    ['GET', '/api/v1/namespaces/shop/pods?watch=true&fieldSelector=status.phase%3DRunning,metadata.name%3D%3Dweb', { verb: 'watch', name: 'web' }],
    ['GET', '/api/v1/namespaces/shop/pods?fieldSelector=metadata.name%3Da%2Fb', { verb: 'list', name: '' }],
    ['GET', '/api/v1/namespaces/shop/pods?fieldSelector=metadata.name!%3Dweb', { verb: 'list', name: '' }],
    ['DELETE', '/api/v1/namespaces/shop/pods', { verb: 'deletecollection' }],
    ['GET', '/api/v1/namespaces/shop', { verb: 'get', resource: 'namespaces', namespace: 'shop', name: 'shop' }],
    ['PUT', '/api/v1/namespaces/shop/finalize', { verb: 'update', resource: 'namespaces', subresource: 'finalize', namespace: 'shop' }],
    ['GET', '/api/v1/namespaces', { verb: 'list', resource: 'namespaces', namespace: '' }],
    ['POST', '/api/v1/namespaces/shop/pods/web/eviction', { verb: 'create', subresource: 'eviction', name: 'web' }],
    ['GET', '/api/v1/namespaces/shop/pods/web/proxy/metrics', { verb: 'get', subresource: 'proxy', name: 'web' }],
    ['GET', '/api/v1/proxy/namespaces/shop/pods/web/metrics', { verb: 'proxy', subresource: '', name: 'web' }],
    ['GET', '/apis/apps/v1/namespaces/shop/deployments/d/scale', { verb: 'get', apiGroup: 'apps', apiVersion: 'v1', resource: 'deployments', subresource: 'scale' }],
    ['OPTIONS', '/api/v1/pods', { verb: '', resource: 'pods' }],
  ])('%s %s', (method, url, want) => {
    expect(attrs(method, url)).toMatchObject({ resourceRequest: true, apiGroup: '', subresource: '', ...want });
  });

  it.each([
    ['GET', '/api', 'get'],
    ['GET', '/apis/apps/v1', 'get'],
    ['GET', '/version', 'get'],
    ['HEAD', '/healthz', 'head'],
    ['POST', '/logs', 'post'],
  ])('%s %s is a non-resource request, its verb the method', (method, path, verb) => {
    expect(attrs(method, path)).toMatchObject({ resourceRequest: false, verb, path });
  });
});

describe('the 403 (responsewriters.Forbidden)', () => {
  it.each([
    ['GET', '/api/v1/namespaces/shop/pods/x', '', 'pods "x" is forbidden: User "bob" cannot get resource "pods" in API group "" in the namespace "shop"', { name: 'x', kind: 'pods' }],
    ['GET', '/api/v1/pods', '', 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" at the cluster scope', { kind: 'pods' }],
    ['GET', '/api/v1/namespaces/shop/pods/x/log', '', 'pods "x" is forbidden: User "bob" cannot get resource "pods/log" in API group "" in the namespace "shop"', { name: 'x', kind: 'pods' }],
    ['POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', '', 'clusterroles.rbac.authorization.k8s.io is forbidden: User "bob" cannot create resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope', { group: 'rbac.authorization.k8s.io', kind: 'clusterroles' }],
    ['GET', '/logs', '', 'forbidden: User "bob" cannot get path "/logs"', {}],
    ['GET', '/a<b>&c', '', 'forbidden: User "bob" cannot get path "/a&lt;b&gt;&amp;c"', {}],
    ['GET', '/api/v1/pods', 'RBAC: clusterrole.rbac.authorization.k8s.io "x" not found', 'pods is forbidden: User "bob" cannot list resource "pods" in API group "" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io "x" not found', { kind: 'pods' }],
  ])('%s %s', (method, path, reason, message, details) => {
    const err = forbiddenError(attrs(method, path), reason);
    expect([err.code, err.reason, err.message]).toEqual([403, 'Forbidden', message]);
    expect(Object.fromEntries(Object.entries(err.details ?? {}).filter(([, v]) => v !== ''))).toEqual(details);
  });
});
