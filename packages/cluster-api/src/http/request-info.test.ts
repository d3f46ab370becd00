import { describe, expect, it } from 'vitest';
import { parseRequestInfo } from './request-info.js';

const q = (s = '') => new URLSearchParams(s);

describe('parseRequestInfo', () => {
  it.each([
    ['GET', '/api', { type: 'discovery', document: 'apiVersions' }],
    ['GET', '/api/', { type: 'discovery', document: 'apiVersions' }],
    ['GET', '/api/v1', { type: 'discovery', document: 'resourceList', group: '', version: 'v1' }],
    ['GET', '/oapi/v1/', { type: 'discovery', document: 'resourceList', group: '', version: 'v1' }],
    ['GET', '/apis', { type: 'discovery', document: 'groupList' }],
    ['GET', '/apis/apps', { type: 'discovery', document: 'group', group: 'apps' }],
    ['GET', '/apis/apps/v1beta1/', { type: 'discovery', document: 'resourceList', group: 'apps', version: 'v1beta1' }],
  ])('%s %s is discovery', (method, path, want) => {
    expect(parseRequestInfo(method, path, q())).toEqual(want);
  });

  it.each([
    ['GET', '/api/v1/namespaces', '', { verb: 'list', plural: 'namespaces' }],
    ['GET', '/api/v1/namespaces/default', '', { verb: 'get', plural: 'namespaces', name: 'default' }],
    ['PUT', '/api/v1/namespaces/x/finalize', '', { verb: 'update', plural: 'namespaces', name: 'x', subresource: 'finalize' }],
    ['GET', '/api/v1/namespaces/x/status', '', { verb: 'get', plural: 'namespaces', name: 'x', subresource: 'status' }],
    ['GET', '/api/v1/pods', '', { verb: 'list', plural: 'pods' }],
    ['POST', '/api/v1/pods', '', { verb: 'create', plural: 'pods' }],
    ['GET', '/api/v1/namespaces/ns/pods', '', { verb: 'list', plural: 'pods', namespace: 'ns' }],
    ['GET', '/api/v1/namespaces/ns/pods', 'watch=true', { verb: 'watch', plural: 'pods', namespace: 'ns' }],
    ['GET', '/api/v1/namespaces/ns/pods', 'watch=1', { verb: 'watch', plural: 'pods', namespace: 'ns' }],
    ['GET', '/api/v1/namespaces/ns/pods', 'watch=false', { verb: 'list', plural: 'pods', namespace: 'ns' }],
    ['POST', '/api/v1/namespaces/ns/pods', '', { verb: 'create', plural: 'pods', namespace: 'ns' }],
    ['DELETE', '/api/v1/namespaces/ns/pods', '', { verb: 'deletecollection', plural: 'pods', namespace: 'ns' }],
    ['GET', '/api/v1/namespaces/ns/pods/p', '', { verb: 'get', plural: 'pods', namespace: 'ns', name: 'p' }],
    ['PUT', '/api/v1/namespaces/ns/pods/p', '', { verb: 'update', plural: 'pods', namespace: 'ns', name: 'p' }],
    ['PATCH', '/api/v1/namespaces/ns/pods/p', '', { verb: 'patch', plural: 'pods', namespace: 'ns', name: 'p' }],
    ['DELETE', '/api/v1/namespaces/ns/pods/p', '', { verb: 'delete', plural: 'pods', namespace: 'ns', name: 'p' }],
    ['PUT', '/api/v1/namespaces/ns/pods/p/status', '', { verb: 'update', plural: 'pods', namespace: 'ns', name: 'p', subresource: 'status' }],
    ['GET', '/api/v1/watch/pods', '', { verb: 'watch', plural: 'pods' }],
    ['GET', '/api/v1/watch/namespaces', '', { verb: 'watch', plural: 'namespaces' }],
    ['GET', '/api/v1/watch/namespaces/ns/pods', '', { verb: 'watch', plural: 'pods', namespace: 'ns' }],
    ['GET', '/api/v1/watch/namespaces/ns/pods/p', '', { verb: 'watch', plural: 'pods', namespace: 'ns', name: 'p' }],
    ['GET', '/api/v1/namespaces/ns/secrets/a%3Ab', '', { verb: 'get', plural: 'secrets', namespace: 'ns', name: 'a:b' }],
    ['HEAD', '/api/v1/pods', '', { verb: 'list', plural: 'pods' }],
    ['OPTIONS', '/api/v1/pods', '', { verb: undefined, plural: 'pods' }],
    ['GET', '//api//v1/namespaces//ns/pods/p/', '', { verb: 'get', plural: 'pods', namespace: 'ns', name: 'p' }],
  ])('%s %s?%s', (method, path, query, want) => {
    const info = parseRequestInfo(method, path, q(query));
    expect(info).toMatchObject({ type: 'resource', group: '', version: 'v1', ...want });
    for (const k of ['namespace', 'name', 'subresource'] as const) if (!(k in want)) expect(info).not.toHaveProperty(k, expect.anything());
  });

  it('parses grouped resource paths the same way', () => {
    expect(parseRequestInfo('GET', '/apis/apps/v1beta1/namespaces/ns/deployments/d', q())).toMatchObject({
      type: 'resource', verb: 'get', group: 'apps', version: 'v1beta1', plural: 'deployments', namespace: 'ns', name: 'd',
    });
    expect(parseRequestInfo('GET', '/apis/batch/v1/watch/jobs', q())).toMatchObject({ verb: 'watch', group: 'batch', plural: 'jobs' });
  });

  it.each(['/', '/healthz', '/version', '/oapi', '/api/v2', '/api/v1/watch', '/oapi/v1/pods', '/x/api/v1'])(
    '%s is not a resource path',
    (path) => {
      expect(parseRequestInfo('GET', path, q())).toEqual({ type: 'nonResource', path });
    },
  );

  it.each([
    ['/api/v1/namespaces/ns/pods/p/status/extra', { name: 'p', subresource: 'status', subpath: '/extra' }],
    ['/api/v1/namespaces/ns/pods/p:8080/proxy', { name: 'p:8080', subresource: 'proxy' }],
    ['/api/v1/namespaces/ns/pods/p:8080/proxy/', { name: 'p:8080', subresource: 'proxy', subpath: '/' }],
    ['/api/v1/namespaces/ns/pods/https:p:443/proxy/a//b%2Fc/', { name: 'https:p:443', subresource: 'proxy', subpath: '/a//b%2Fc/' }],
    ['/api/v1/namespaces/ns/services/s:http/proxy/x', { plural: 'services', name: 's:http', subresource: 'proxy', subpath: '/x' }],
    ['//api/v1/namespaces//ns/pods/p/proxy/x', { name: 'p', subresource: 'proxy', subpath: '/x' }],
    ['/api/v1/watch/namespaces/ns/pods/p/proxy/x', { verb: 'watch', name: 'p', subresource: 'proxy', subpath: '/x' }],
  ])('%s keeps what follows the subresource, raw, as Kubernetes keeps those parts', (path, want) => {
    expect(parseRequestInfo('GET', path, q())).toMatchObject({ type: 'resource', namespace: 'ns', verb: 'get', plural: 'pods', ...want });
  });

  it('verbs a proxy path by its method, as any named resource', () => {
    for (const [method, verb] of [['GET', 'get'], ['HEAD', 'get'], ['POST', 'create'], ['PUT', 'update'], ['PATCH', 'patch'], ['DELETE', 'delete']])
      expect(parseRequestInfo(method!, '/api/v1/namespaces/ns/pods/p/proxy/a/b', q())).toMatchObject({ verb, subpath: '/a/b' });
    expect(parseRequestInfo('GET', '/apis/example.com/v1/namespaces/ns/widgets/w/proxy/a', q())).toMatchObject({ group: 'example.com', subresource: 'proxy', subpath: '/a' });
  });

  it('keeps a malformed escape as sent instead of throwing', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/%E0%A4%A', q())).toMatchObject({ name: '%E0%A4%A' });
  });
});
