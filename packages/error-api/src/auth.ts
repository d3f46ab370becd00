/**
 * Bearer-token checks (RFC 6750) with Quay's error types in the body. The challenge uses RFC 6750's
 * own codes — an expired token is `error="invalid_token"` there — while the body says
 * `expired_token`, which is what Quay clients branch on. A token never reaches a log or a message.
 */
import { errors, type JWTPayload, type JWTVerifyOptions } from 'jose';
import type { Config } from './config.js';
import type { Verifier } from './keys.js';
import { TokenCache } from './token-cache.js';

export const REALM = 'error-api';

export type AuthFailure = {
  ok: false;
  status: 401 | 403;
  errorType: 'invalid_token' | 'expired_token' | 'insufficient_scope';
  detail: string;
  /** Value of `WWW-Authenticate`. */
  challenge: string;
};
export type AuthOutcome = { ok: true; subject?: string } | AuthFailure;

/** RFC 6750 §2.1: `Bearer` then one b64token; the scheme is case-insensitive. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const SCHEME = /^Bearer(?: |$)/i;

const quoted = (v: string): string => `"${v.replace(/["\\]/g, '')}"`;

const challenge = (scope: string, error?: string, description?: string): string =>
  [
    `Bearer realm=${quoted(REALM)}`,
    `scope=${quoted(scope)}`,
    ...(error ? [`error=${quoted(error)}`] : []),
    ...(description ? [`error_description=${quoted(description)}`] : []),
  ].join(', ');

/** The token's scopes: OAuth's space-separated `scope` claim, or `scp` as array or string. */
export const tokenScopes = (payload: JWTPayload): string[] => {
  const out: string[] = [];
  for (const claim of [payload.scope, payload.scp]) {
    if (typeof claim === 'string') out.push(...claim.split(' ').filter(Boolean));
    else if (Array.isArray(claim)) out.push(...claim.filter((s): s is string => typeof s === 'string'));
  }
  return out;
};

const invalid = (scope: string, detail: string): AuthFailure => ({
  ok: false,
  status: 401,
  errorType: 'invalid_token',
  detail,
  challenge: challenge(scope, 'invalid_token', detail),
});

/** Why jose refused the token, in words a client can act on. */
export const describeRejection = (err: unknown): string => {
  if (err instanceof errors.JWTClaimValidationFailed) {
    const claim = { aud: 'audience', iss: 'issuer', nbf: 'not-before time', exp: 'expiry', iat: 'issue time' }[err.claim];
    return claim ? `The access token's ${claim} (${err.claim}) is missing or not accepted` : 'The access token has an invalid claim';
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'The access token signature is invalid';
  if (err instanceof errors.JOSEAlgNotAllowed) return 'The access token is signed with an algorithm this service does not accept';
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) {
    return 'The access token is signed with a key this service does not know';
  }
  return 'The access token is not a well-formed JWT';
};

/** Bounds the cache's memory: about 10,000 tokens of a few hundred bytes each. */
const CACHE_ENTRIES = 10_000;

export class Authenticator {
  readonly #options: JWTVerifyOptions;
  readonly #cache: TokenCache<AuthOutcome>;

  constructor(
    private readonly verifier: Verifier,
    private readonly config: Pick<Config, 'issuer' | 'audience' | 'scope' | 'clockToleranceSeconds' | 'tokenCacheSeconds'>,
  ) {
    this.#cache = new TokenCache(config.tokenCacheSeconds * 1000, CACHE_ENTRIES);
    this.#options = {
      issuer: config.issuer,
      audience: config.audience,
      clockTolerance: config.clockToleranceSeconds,
      requiredClaims: ['exp'],
    };
  }

  async authenticate(authorization: string | undefined): Promise<AuthOutcome> {
    const { scope } = this.config;
    // RFC 6750 §3.1: a request with no bearer credentials gets a challenge without an error code.
    if (authorization === undefined || !SCHEME.test(authorization)) {
      return { ok: false, status: 401, errorType: 'invalid_token', detail: 'Requires authentication', challenge: challenge(scope) };
    }
    const token = BEARER.exec(authorization)?.[1];
    if (token === undefined) return invalid(scope, 'The Authorization header is not "Bearer <token>"');
    const cached = this.#cache.get(token);
    if (cached) return cached;
    let payload: JWTPayload;
    try {
      payload = await this.verifier.verify(token, this.#options);
    } catch (err) {
      if (err instanceof errors.JWTExpired) {
        const detail = 'The access token expired';
        return { ok: false, status: 401, errorType: 'expired_token', detail, challenge: challenge(scope, 'invalid_token', detail) };
      }
      return invalid(scope, describeRejection(err));
    }
    const outcome = this.#authorize(payload);
    // jose has checked that exp is present and numeric (requiredClaims).
    this.#cache.set(token, outcome, payload.exp!);
    return outcome;
  }

  #authorize(payload: JWTPayload): AuthOutcome {
    const { scope } = this.config;
    if (tokenScopes(payload).includes(scope)) return { ok: true, subject: payload.sub };
    const detail = `The access token lacks the scope ${scope}`;
    return { ok: false, status: 403, errorType: 'insufficient_scope', detail, challenge: challenge(scope, 'insufficient_scope', detail) };
  }
}
