import { describe, expect, it } from 'vitest';
import { backendPath, forwardedRequestHeaders, returnedResponseHeaders, rewriteLocation } from './proxy-headers.js';

const prefix = '/api/v1/namespaces/shop/pods/web:8080/proxy';
const ctx = { backendHost: '10.1.2.3:8080', requestHost: '127.0.0.1:6443', prefix };

describe('the proxy’s rewriting, as kube-apiserver’s', () => {
  it.each([
    [[], ''],
    [[''], '/'],
    [['a', 'b'], '/a/b'],
    [['a', 'b', ''], '/a/b/'],
    [['a', '', 'b'], '/a/b'],
    [['a', '.', '..', 'b'], '/b'],
    [['..', '..', 'etc', 'passwd'], '/etc/passwd'],
    [['a b', 'c:d', 'e?f', 'g#h', 'x=1&y=2'], '/a%20b/c:d/e%3Ff/g%23h/x=1&y=2'],
  ])('backend path of %j is %s', (segments, want) => {
    expect(backendPath(segments)).toBe(want);
  });

  it.each([
    ['/login', `${prefix}/login`],
    ['/login/', `${prefix}/login/`],
    ['/', `${prefix}/`],
    ['/a/../b?next=/x#top', `${prefix}/b?next=/x#top`],
    ['http://10.1.2.3:8080/login?x=1', `${prefix}/login?x=1`],
    ['https://127.0.0.1:6443/dashboard', `https://127.0.0.1:6443${prefix}/dashboard`],
    [`${prefix}/already`, `${prefix}/already`],
    ['relative/path', 'relative/path'],
    ['http://example.com/elsewhere', 'http://example.com/elsewhere'],
    ['http://10.1.2.3:8080', 'http://10.1.2.3:8080'],
    ['//example.com/x', '//example.com/x'],
  ])('Location %s becomes %s', (location, want) => {
    expect(rewriteLocation(location, ctx)).toBe(want);
  });

  it('forwards no credentials of the caller, no hop-by-hop header, and says where the request came from', () => {
    const headers = forwardedRequestHeaders(
      {
        host: '127.0.0.1:6443',
        authorization: 'Bearer secret-token',
        'impersonate-user': 'someone',
        'impersonate-group': 'admins',
        connection: 'keep-alive, x-private',
        'x-private': 'hop',
        'keep-alive': 'timeout=5',
        'transfer-encoding': 'chunked',
        te: 'trailers',
        upgrade: 'h2c',
        'proxy-authorization': 'Basic x',
        'x-forwarded-for': '192.0.2.1',
        accept: 'text/html',
        cookie: 'a=b',
      },
      { clientIp: '127.0.0.1', prefix, path: '/a/b/' },
    );
    expect(headers).toEqual({
      host: '127.0.0.1:6443',
      accept: 'text/html',
      cookie: 'a=b',
      'x-forwarded-for': '192.0.2.1, 127.0.0.1',
      'x-forwarded-uri': `${prefix}/a/b/`,
    });
  });

  it('keeps Connection and Upgrade for an upgrade the backend must see', () => {
    const headers = forwardedRequestHeaders({ connection: 'Upgrade', upgrade: 'websocket', authorization: 'Bearer t' }, { prefix, path: '/ws', upgrade: true });
    expect(headers).toEqual({ connection: 'Upgrade', upgrade: 'websocket', 'x-forwarded-uri': `${prefix}/ws` });
  });

  it('drops the backend’s CORS and hop-by-hop headers and brings its redirects back through the proxy', () => {
    const headers = returnedResponseHeaders(
      {
        'content-type': 'text/plain',
        'access-control-allow-origin': '*',
        'access-control-allow-credentials': 'true',
        'access-control-allow-methods': 'GET',
        'access-control-allow-headers': 'x',
        'access-control-expose-headers': 'y',
        connection: 'close',
        'transfer-encoding': 'chunked',
        location: '/next',
        'set-cookie': ['a=1', 'b=2'],
      },
      ctx,
    );
    expect(headers).toEqual({ 'content-type': 'text/plain', 'access-control-expose-headers': 'y', location: `${prefix}/next`, 'set-cookie': ['a=1', 'b=2'] });
  });
});
