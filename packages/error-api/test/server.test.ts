/** Every status of the service over a real listening server, with exact bodies and headers. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIENCE, SECRET, ecJwksFixture, hsEnv, rsaPemFixture, sign } from './tokens.js';
import { raw, startService, type Running } from './harness.js';

let svc: Running;
let token: string;
const auth = (t = token): Record<string, string> => ({ authorization: `Bearer ${t}` });

beforeAll(async () => {
  svc = await startService(hsEnv);
  token = await sign();
});
afterAll(() => svc.close());

const get = (path: string, headers: Record<string, string> = auth()) => fetch(`${svc.url}${path}`, { headers });

const problemBody = (status: number, errorType: string, detail: string) => ({
  status,
  type: `${svc.url}/api/v1/error/${errorType}`,
  title: errorType,
  detail,
  error_message: detail,
  error_type: errorType,
});

const expectProblem = async (res: Response, status: number, errorType: string, detail: string): Promise<void> => {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(await res.json()).toEqual(problemBody(status, errorType, detail));
};

describe('200 and 304', () => {
  it('GET /api/v1/error/{error_type} → ApiErrorDescription with ETag and Cache-Control', async () => {
    const res = await get('/api/v1/error/not_found');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('cache-control')).toBe('private, max-age=3600');
    expect(res.headers.get('vary')).toBe('X-Forwarded-Proto');
    expect(res.headers.get('etag')).toMatch(/^"[\w-]{27}"$/);
    expect(await res.json()).toEqual({
      type: `${svc.url}/api/v1/error/not_found`,
      title: 'not_found',
      description: svc.api.catalog().get('not_found')!.description,
    });
  });

  it('If-None-Match with the ETag → 304 with ETag, Cache-Control and no body', async () => {
    const etag = (await get('/api/v1/error/Conflict')).headers.get('etag')!;
    const res = await raw(svc.url, '/api/v1/error/Conflict', 'GET', { ...auth(), 'if-none-match': `"x", W/${etag}` });
    expect(res.status).toBe(304);
    expect(res.headers.etag).toBe(etag);
    expect(res.headers['cache-control']).toBe('private, max-age=3600');
    expect(res.body).toBe('');
    const other = await get('/api/v1/error/Conflict', { ...auth(), 'if-none-match': '"stale"' });
    expect(other.status).toBe(200);
  });

  it('a 304 still needs a valid token', async () => {
    const etag = (await get('/api/v1/error/Conflict')).headers.get('etag')!;
    const res = await get('/api/v1/error/Conflict', { 'if-none-match': etag });
    expect(res.status).toBe(401);
  });

  it('HEAD → 200 with the headers of GET and no body', async () => {
    const res = await raw(svc.url, '/api/v1/error/not_found', 'HEAD', auth());
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe((await get('/api/v1/error/not_found')).headers.get('etag'));
    expect(res.body).toBe('');
  });

  it('builds type URLs on X-Forwarded-Proto and Host', async () => {
    const res = await raw(svc.url, '/api/v1/error/Invalid', 'GET', { ...auth(), host: 'errors.example.com', 'x-forwarded-proto': 'https' });
    expect(JSON.parse(res.body).type).toBe('https://errors.example.com/api/v1/error/Invalid');
  });
});

describe('400 Bad Request', () => {
  it.each([
    ['/api/v1/error/9starts-with-digit'],
    ['/api/v1/error/_underscore'],
    ['/api/v1/error/'],
    ['/api/v1/error/a%2Fb'],
    ['/api/v1/error/%ZZ'],
    ['/api/v1/error/has%20space'],
    [`/api/v1/error/a${'b'.repeat(128)}`],
  ])('malformed error_type %s', async (path) => {
    await expectProblem(await get(path), 400, 'invalid_request', 'error_type must match ^[A-Za-z][A-Za-z0-9_.-]{0,127}$');
  });

  it('a forged Host header is refused rather than turned into a link', async () => {
    const res = await raw(svc.url, '/api/v1/error/not_found', 'GET', { ...auth(), host: 'evil.example/x?' });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({
      ...problemBody(400, 'invalid_request', 'The Host header is missing or malformed'),
      type: '/api/v1/error/invalid_request',
    });
  });
});

describe('401 Session required', () => {
  const challenge = 'Bearer realm="error-api", scope="errors:read"';
  const cases: [string, () => Promise<Record<string, string>>, string, string, string][] = [
    ['missing token', async () => ({}), 'invalid_token', 'Requires authentication', challenge],
    [
      'bad signature',
      async () => auth(await sign({ key: new TextEncoder().encode(`${SECRET}-other`) })),
      'invalid_token',
      'The access token signature is invalid',
      `${challenge}, error="invalid_token", error_description="The access token signature is invalid"`,
    ],
    [
      'wrong audience',
      async () => auth(await sign({ audience: 'another-service' })),
      'invalid_token',
      "The access token's audience (aud) is missing or not accepted",
      `${challenge}, error="invalid_token", error_description="The access token's audience (aud) is missing or not accepted"`,
    ],
    [
      'malformed token',
      async () => auth('not.a.jwt'),
      'invalid_token',
      'The access token is not a well-formed JWT',
      `${challenge}, error="invalid_token", error_description="The access token is not a well-formed JWT"`,
    ],
    [
      'expired token',
      async () => auth(await sign({ expiresIn: -60 })),
      'expired_token',
      'The access token expired',
      `${challenge}, error="invalid_token", error_description="The access token expired"`,
    ],
  ];
  it.each(cases)('%s', async (_, headers, errorType, detail, wwwAuthenticate) => {
    const res = await get('/api/v1/error/not_found', await headers());
    await expectProblem(res, 401, errorType, detail);
    expect(res.headers.get('www-authenticate')).toBe(wwwAuthenticate);
  });
});

describe('403 Unauthorized access', () => {
  it('a valid token without errors:read', async () => {
    const res = await get('/api/v1/error/not_found', auth(await sign({ claims: { scope: 'profile errors:write' } })));
    await expectProblem(res, 403, 'insufficient_scope', 'The access token lacks the scope errors:read');
    expect(res.headers.get('www-authenticate')).toBe(
      'Bearer realm="error-api", scope="errors:read", error="insufficient_scope", error_description="The access token lacks the scope errors:read"',
    );
  });
});

describe('404 Not found', () => {
  it('an unknown error type', async () => {
    await expectProblem(await get('/api/v1/error/no_such_error'), 404, 'not_found', 'No error type named no_such_error');
  });

  it('is case-sensitive, as Quay is', async () => {
    expect((await get('/api/v1/error/NOT_FOUND')).status).toBe(404);
  });

  it.each([['/'], ['/api/v1'], ['/api/v1/errors'], ['/api/v1/error/not_found/extra'], ['/api/v2/error/not_found']])(
    'another path %s, Quay-style and without needing a token',
    async (path) => {
      await expectProblem(await get(path, {}), 404, 'not_found', 'Not Found');
    },
  );
});

describe('405 Method not allowed', () => {
  it.each([['POST'], ['PUT'], ['PATCH'], ['DELETE']])('%s on an error type, with Allow', async (method) => {
    const res = await fetch(`${svc.url}/api/v1/error/not_found`, { method, headers: auth() });
    await expectProblem(res, 405, 'method_not_allowed', `The method ${method} is not allowed here`);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });

  it('on the list and on /openapi.json too', async () => {
    for (const path of ['/api/v1/error', '/openapi.json']) {
      const res = await fetch(`${svc.url}${path}`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD');
    }
  });
});

describe('the list and the catalog', () => {
  it('GET /api/v1/error lists every description, each of which round-trips through its type URL', async () => {
    const res = await get('/api/v1/error');
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBeTruthy();
    const { errors } = (await res.json()) as { errors: { type: string; title: string; description: string }[] };
    expect(errors.map((e) => e.title).sort()).toEqual(svc.api.catalog().entries().map((e) => e.title).sort());
    for (const entry of errors) {
      expect(entry.type).toBe(`${svc.url}/api/v1/error/${entry.title}`);
      const one = await fetch(entry.type, { headers: auth() });
      expect(one.status).toBe(200);
      expect(await one.json()).toEqual(entry);
    }
  });

  it('every error body the service sends points at a description it serves', async () => {
    const bodies = await Promise.all([
      get('/nowhere'),
      get('/api/v1/error/9'),
      get('/api/v1/error/x', {}),
      get('/api/v1/error/x', auth(await sign({ expiresIn: -60 }))),
      get('/api/v1/error/x', auth(await sign({ claims: { scope: 'x' } }))),
      fetch(`${svc.url}/api/v1/error/x`, { method: 'DELETE' }),
    ]);
    for (const res of bodies) {
      const { type } = (await res.json()) as { type: string };
      const described = await fetch(type, { headers: auth() });
      expect(described.status, type).toBe(200);
    }
  });
});

describe('key sources over HTTP', () => {
  it('a PEM public key (RS256) and a JWKS file (ES256)', async () => {
    const pem = rsaPemFixture();
    const jwks = await ecJwksFixture();
    for (const [env, t] of [
      [{ ERROR_API_JWT_PUBLIC_KEY_FILE: pem.file, ERROR_API_JWT_AUDIENCE: AUDIENCE }, await sign({ key: pem.privateKey, alg: 'RS256' })],
      [{ ERROR_API_JWKS_FILE: jwks.file, ERROR_API_JWT_AUDIENCE: AUDIENCE }, await sign({ key: jwks.privateKey, alg: 'ES256', kid: jwks.kid })],
    ] as const) {
      const other = await startService(env);
      try {
        expect((await fetch(`${other.url}/api/v1/error/Gone`, { headers: auth(t) })).status).toBe(200);
        expect((await fetch(`${other.url}/api/v1/error/Gone`, { headers: auth(token) })).status).toBe(401);
      } finally {
        await other.close();
      }
    }
  });

  it('a configured base URL wins over Host', async () => {
    const other = await startService({ ...hsEnv, ERROR_API_BASE_URL: 'https://errors.example.com/' });
    try {
      const res = await raw(other.url, '/api/v1/error/Gone', 'GET', { ...auth(), host: 'elsewhere' });
      expect(JSON.parse(res.body).type).toBe('https://errors.example.com/api/v1/error/Gone');
      expect(res.headers.vary).toBeUndefined();
    } finally {
      await other.close();
    }
  });

  it('dev mode prints a working token and nothing else configures a key', async () => {
    const dev = await startService({ ERROR_API_DEV_MODE: '1' });
    try {
      const devToken = /Authorization: Bearer (\S+)/.exec(dev.announced.join(''))?.[1];
      expect(devToken).toBeDefined();
      expect((await fetch(`${dev.url}/api/v1/error/Gone`, { headers: auth(devToken) })).status).toBe(200);
      expect((await fetch(`${dev.url}/api/v1/error/Gone`, { headers: auth(token) })).status).toBe(401);
    } finally {
      await dev.close();
    }
  });

  it('without a key and without dev mode, it does not start', async () => {
    await expect(startService({})).rejects.toThrow(/no token-verification key/);
  });
});

describe('health', () => {
  it('liveness and readiness answer once init has run', async () => {
    expect((await fetch(`${svc.url}/health/liveness`)).status).toBe(200);
    expect((await fetch(`${svc.url}/health/readiness`)).status).toBe(200);
  });
});
