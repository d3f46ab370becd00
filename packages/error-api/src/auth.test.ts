import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AUDIENCE, ISSUER, SECRET, ecJwksFixture, hsEnv, rsaPemFixture, sign } from '../test/tokens.js';
import { Authenticator, tokenScopes } from './auth.js';
import { resolveConfig } from './config.js';
import { loadVerifier } from './keys.js';

const authenticator = async (env: Record<string, string>): Promise<Authenticator> => {
  const config = resolveConfig(env);
  return new Authenticator(await loadVerifier(config.key), config);
};

const CHALLENGE = 'Bearer realm="error-api", scope="errors:read"';

describe('Authenticator (HS256)', async () => {
  const auth = await authenticator(hsEnv);
  const bearer = async (o?: Parameters<typeof sign>[0]): Promise<string> => `Bearer ${await sign(o)}`;

  it('accepts a valid token with the scope', async () => {
    expect(await auth.authenticate(await bearer())).toEqual({ ok: true, subject: 'tester' });
  });

  it.each([[undefined], ['Basic dXNlcjpwYXNz'], ['Token abc'], ['']])(
    'no bearer credentials (%j): 401 invalid_token and a challenge without an error code (RFC 6750 §3.1)',
    async (header) => {
      expect(await auth.authenticate(header)).toEqual({
        ok: false,
        status: 401,
        errorType: 'invalid_token',
        detail: 'Requires authentication',
        challenge: CHALLENGE,
      });
    },
  );

  const invalid = (detail: string) => ({
    ok: false,
    status: 401,
    errorType: 'invalid_token',
    detail,
    challenge: `${CHALLENGE}, error="invalid_token", error_description="${detail}"`,
  });

  it.each([
    ['Bearer', 'The Authorization header is not "Bearer <token>"'],
    ['Bearer a b', 'The Authorization header is not "Bearer <token>"'],
    ['Bearer not-a-jwt', 'The access token is not a well-formed JWT'],
    ['Bearer a.b.c', 'The access token is not a well-formed JWT'],
  ])('malformed %j → 401 invalid_token', async (header, detail) => {
    const outcome = await auth.authenticate(header);
    expect(outcome).toEqual({ ...invalid(detail), challenge: expect.stringContaining('error="invalid_token"') });
  });

  it.each([
    ['bad signature', { key: new TextEncoder().encode(`${SECRET}-other`) }, 'The access token signature is invalid'],
    ['wrong audience', { audience: 'someone-else' }, "The access token's audience (aud) is missing or not accepted"],
    ['no audience', { audience: null }, "The access token's audience (aud) is missing or not accepted"],
    ['wrong issuer', { issuer: 'https://evil.test' }, "The access token's issuer (iss) is missing or not accepted"],
    ['no expiry', { expiresIn: null }, "The access token's expiry (exp) is missing or not accepted"],
    ['not yet valid', { claims: { nbf: Math.floor(Date.now() / 1000) + 600 } }, "The access token's not-before time (nbf) is missing or not accepted"],
  ])('%s → 401 invalid_token', async (_, options, detail) => {
    expect(await auth.authenticate(await bearer(options))).toEqual(invalid(detail));
  });

  it('an unsigned token (alg none) is refused', async () => {
    const b64 = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
    const exp = Math.floor(Date.now() / 1000) + 300;
    const token = `${b64({ alg: 'none' })}.${b64({ scope: 'errors:read', iss: ISSUER, aud: AUDIENCE, exp })}.`;
    expect(await auth.authenticate(`Bearer ${token}`)).toMatchObject({ status: 401, errorType: 'invalid_token' });
  });

  it('expired → 401 expired_token; the challenge keeps RFC 6750\'s invalid_token', async () => {
    expect(await auth.authenticate(await bearer({ expiresIn: -60 }))).toEqual({
      ok: false,
      status: 401,
      errorType: 'expired_token',
      detail: 'The access token expired',
      challenge: `${CHALLENGE}, error="invalid_token", error_description="The access token expired"`,
    });
  });

  it('an expired token with a bad signature is invalid, not expired', async () => {
    const token = await bearer({ expiresIn: -60, key: new TextEncoder().encode(`${SECRET}-other`) });
    expect(await auth.authenticate(token)).toMatchObject({ errorType: 'invalid_token' });
  });

  it.each([
    [{ scope: 'profile' }],
    [{ scope: 'errors:readonly errors:write' }],
    [{ scope: undefined, scp: ['errors:write'] }],
    [{ scope: 42 }],
  ])('valid but without the scope (%j) → 403 insufficient_scope', async (claims) => {
    const detail = 'The access token lacks the scope errors:read';
    expect(await auth.authenticate(await bearer({ claims }))).toEqual({
      ok: false,
      status: 403,
      errorType: 'insufficient_scope',
      detail,
      challenge: `${CHALLENGE}, error="insufficient_scope", error_description="${detail}"`,
    });
  });

  it.each([
    [{ scope: 'openid errors:read profile' }],
    [{ scope: undefined, scp: ['x', 'errors:read'] }],
    [{ scope: undefined, scp: 'x errors:read' }],
  ])('finds the scope in %j', async (claims) => {
    expect(await auth.authenticate(await bearer({ claims }))).toMatchObject({ ok: true });
  });

  it('accepts the scheme in any case', async () => {
    expect(await auth.authenticate(`bEaReR ${await sign()}`)).toMatchObject({ ok: true });
  });
});

describe('Authenticator (public keys)', () => {
  it('verifies RS256 against a PEM public key and refuses an HS256 token signed with the PEM text', async () => {
    const { privateKey, file } = rsaPemFixture();
    const auth = await authenticator({ ERROR_API_JWT_PUBLIC_KEY_FILE: file, ERROR_API_JWT_AUDIENCE: AUDIENCE });
    expect(await auth.authenticate(`Bearer ${await sign({ key: privateKey, alg: 'RS256' })}`)).toMatchObject({ ok: true });
    const { readFileSync } = await import('node:fs');
    const confused = await sign({ key: new Uint8Array(readFileSync(file)), alg: 'HS256' });
    expect(await auth.authenticate(`Bearer ${confused}`)).toMatchObject({
      errorType: 'invalid_token',
      detail: 'The access token is signed with an algorithm this service does not accept',
    });
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    expect(await auth.authenticate(`Bearer ${await sign({ key: other, alg: 'RS256' })}`)).toMatchObject({
      detail: 'The access token signature is invalid',
    });
  });

  it('verifies ES256 against a JWKS file, choosing the key by kid', async () => {
    const { privateKey, file, kid } = await ecJwksFixture();
    const auth = await authenticator({ ERROR_API_JWKS_FILE: file, ERROR_API_JWT_AUDIENCE: AUDIENCE });
    expect(await auth.authenticate(`Bearer ${await sign({ key: privateKey, alg: 'ES256', kid })}`)).toMatchObject({ ok: true });
    expect(await auth.authenticate(`Bearer ${await sign({ key: privateKey, alg: 'ES256', kid: 'unknown' })}`)).toMatchObject({
      detail: 'The access token is signed with a key this service does not know',
    });
  });
});

describe('tokenScopes', () => {
  it('ignores non-string members and empty items', () => {
    expect(tokenScopes({ scope: ' a  b ', scp: ['c', 1, null] as unknown as string[] })).toEqual(['a', 'b', 'c']);
  });
});

describe('Authenticator cache', () => {
  it('answers a repeated token from the cache, including a 403, and re-verifies once it expires', async () => {
    const auth = await authenticator({ ...hsEnv, ERROR_API_CLOCK_TOLERANCE: '0' });
    const token = await sign({ expiresIn: 2 });
    expect(await auth.authenticate(`Bearer ${token}`)).toMatchObject({ ok: true });
    expect(await auth.authenticate(`Bearer ${token}`)).toMatchObject({ ok: true });
    const noScope = await sign({ claims: { scope: 'x' } });
    expect(await auth.authenticate(`Bearer ${noScope}`)).toMatchObject({ status: 403 });
    expect(await auth.authenticate(`Bearer ${noScope}`)).toMatchObject({ status: 403 });
    await new Promise((r) => setTimeout(r, 2100));
    expect(await auth.authenticate(`Bearer ${token}`)).toMatchObject({ status: 401, errorType: 'expired_token' });
  });

  it('never caches a refusal: a bad token stays refused, a good one still passes', async () => {
    const auth = await authenticator(hsEnv);
    const good = await sign();
    const [head, body] = good.split('.');
    const forged = `${head}.${body}.${'A'.repeat(43)}`;
    expect(await auth.authenticate(`Bearer ${forged}`)).toMatchObject({ status: 401 });
    expect(await auth.authenticate(`Bearer ${good}`)).toMatchObject({ ok: true });
    expect(await auth.authenticate(`Bearer ${forged}`)).toMatchObject({ status: 401 });
  });
});
