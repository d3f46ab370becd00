import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from './config.js';

const SECRET = 'x'.repeat(32);

describe('resolveConfig', () => {
  it('defaults: scope errors:read, one hour of caching, base URL from the request', () => {
    expect(resolveConfig({ ERROR_API_JWT_SECRET: SECRET })).toEqual({
      key: { kind: 'secret', secret: SECRET },
      issuer: undefined,
      audience: undefined,
      scope: 'errors:read',
      baseUrl: undefined,
      devMode: false,
      cacheMaxAge: 3600,
      clockToleranceSeconds: 5,
      tokenCacheSeconds: 60,
    });
  });

  it('reads every setting', () => {
    const c = resolveConfig({
      ERROR_API_JWT_PUBLIC_KEY_FILE: '/keys/pub.pem',
      ERROR_API_JWT_ISSUER: 'https://iss',
      ERROR_API_JWT_AUDIENCE: 'a, b',
      ERROR_API_REQUIRED_SCOPE: 'errors:admin',
      ERROR_API_BASE_URL: 'https://errors.example.com/base/',
      ERROR_API_CACHE_MAX_AGE: '60',
      ERROR_API_CLOCK_TOLERANCE: '0',
      ERROR_API_TOKEN_CACHE_SECONDS: '0',
    });
    expect(c).toMatchObject({
      key: { kind: 'pem', file: '/keys/pub.pem' },
      issuer: 'https://iss',
      audience: ['a', 'b'],
      scope: 'errors:admin',
      baseUrl: 'https://errors.example.com/base',
      cacheMaxAge: 60,
      clockToleranceSeconds: 0,
      tokenCacheSeconds: 0,
    });
  });

  it('dev mode without a key makes one at start-up; with a secret it uses that', () => {
    expect(resolveConfig({ ERROR_API_DEV_MODE: '1' }).key).toEqual({ kind: 'dev' });
    expect(resolveConfig({ ERROR_API_DEV_MODE: 'true', ERROR_API_JWT_SECRET: SECRET }).key.kind).toBe('secret');
    expect(resolveConfig({ ERROR_API_DEV_MODE: '0', ERROR_API_JWKS_FILE: '/j.json' })).toMatchObject({
      devMode: false,
      key: { kind: 'jwks', file: '/j.json' },
    });
  });

  it.each([
    [{}, /no token-verification key/],
    [{ ERROR_API_JWT_SECRET: 'short' }, /at least 32 bytes/],
    [{ ERROR_API_JWT_SECRET: SECRET, ERROR_API_JWKS_FILE: '/j' }, /only one of/],
    [{ ERROR_API_JWT_PUBLIC_KEY_FILE: '/p', ERROR_API_JWKS_FILE: '/j' }, /only one of/],
    [{ ERROR_API_DEV_MODE: '1', ERROR_API_JWKS_FILE: '/j' }, /signs its token itself/],
    [{ ERROR_API_JWT_SECRET: SECRET, ERROR_API_BASE_URL: 'not a url' }, /absolute URL/],
    [{ ERROR_API_JWT_SECRET: SECRET, ERROR_API_BASE_URL: 'ftp://h' }, /http\(s\)/],
    [{ ERROR_API_JWT_SECRET: SECRET, ERROR_API_BASE_URL: 'https://u:p@h' }, /without credentials/],
    [{ ERROR_API_JWT_SECRET: SECRET, ERROR_API_BASE_URL: 'https://h/?q=1' }, /query/],
    [{ ERROR_API_JWT_SECRET: SECRET, ERROR_API_CACHE_MAX_AGE: '-1' }, /non-negative integer/],
    [{ ERROR_API_JWT_SECRET: SECRET, ERROR_API_REQUIRED_SCOPE: 'a b' }, /one scope token/],
  ])('refuses %j', (env, message) => {
    expect(() => resolveConfig(env)).toThrow(ConfigError);
    expect(() => resolveConfig(env)).toThrow(message);
  });

  it('never puts the secret in an error message', () => {
    const secret = 'y'.repeat(31);
    expect(() => resolveConfig({ ERROR_API_JWT_SECRET: secret })).toThrow(expect.objectContaining({ message: expect.not.stringContaining(secret) }));
  });
});
