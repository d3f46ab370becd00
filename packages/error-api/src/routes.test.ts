import { describe, expect, it } from 'vitest';
import { matchRoute } from './routes.js';

describe('matchRoute', () => {
  it.each([
    ['/openapi.json', { kind: 'openapi' }],
    ['/api/v1/error', { kind: 'list' }],
    ['/api/v1/error/not_found', { kind: 'describe', param: 'not_found' }],
    ['/api/v1/error/', { kind: 'describe', param: '' }],
    ['/api/v1/error/a%2Fb', { kind: 'describe', param: 'a%2Fb' }],
    ['/api/v1/error/a/b', undefined],
    ['/api/v1/errors', undefined],
    ['/api/v1/error//x', undefined],
    ['/', undefined],
    ['/openapi.json/', undefined],
  ])('%s → %j', (path, route) => {
    expect(matchRoute(path)).toEqual(route);
  });
});
