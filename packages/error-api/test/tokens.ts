/** Test keys and tokens: real keys, real signatures, no mocks. */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, SignJWT, type JWTPayload } from 'jose';

export const SECRET = 'test-secret-that-is-at-least-32-bytes-long!';
export const ISSUER = 'https://issuer.test';
export const AUDIENCE = 'error-api';

export const hsEnv = { ERROR_API_JWT_SECRET: SECRET, ERROR_API_JWT_ISSUER: ISSUER, ERROR_API_JWT_AUDIENCE: AUDIENCE };

export interface SignOptions {
  key?: Uint8Array | KeyObject;
  alg?: string;
  kid?: string;
  claims?: JWTPayload;
  issuer?: string | null;
  audience?: string | null;
  /** Seconds from now; negative = already expired. */
  expiresIn?: number | null;
}

const now = (): number => Math.floor(Date.now() / 1000);

export const sign = async (o: SignOptions = {}): Promise<string> => {
  const jwt = new SignJWT({ scope: 'errors:read', ...o.claims })
    .setProtectedHeader({ alg: o.alg ?? 'HS256', ...(o.kid ? { kid: o.kid } : {}) })
    .setIssuedAt(now() - 120)
    .setSubject('tester');
  if (o.issuer !== null) jwt.setIssuer(o.issuer ?? ISSUER);
  if (o.audience !== null) jwt.setAudience(o.audience ?? AUDIENCE);
  if (o.expiresIn !== null) jwt.setExpirationTime(now() + (o.expiresIn ?? 300));
  return jwt.sign(o.key ?? new TextEncoder().encode(SECRET));
};

export const tempDir = (): string => mkdtempSync(join(tmpdir(), 'error-api-'));

/** An RSA key pair with its public half written as PEM. */
export const rsaPemFixture = (): { privateKey: KeyObject; file: string } => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const file = join(tempDir(), 'public.pem');
  writeFileSync(file, publicKey.export({ type: 'spki', format: 'pem' }));
  return { privateKey, file };
};

/** An EC P-256 key pair with its public half written as a one-key JWKS. */
export const ecJwksFixture = async (): Promise<{ privateKey: KeyObject; file: string; kid: string }> => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const kid = 'test-key-1';
  const file = join(tempDir(), 'jwks.json');
  writeFileSync(file, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] }));
  return { privateKey, file, kid };
};
