/**
 * Token-verification keys, loaded once in `init`. Each source pins the algorithms it accepts, so a
 * token can never choose its own verification method (no `none`, no HS256 against a public key).
 */
import { createPublicKey, randomBytes, type KeyObject } from 'node:crypto';
import { open } from 'node:fs/promises';
import { createLocalJWKSet, importJWK, jwtVerify, type JWK, type JWTPayload, type JWTVerifyOptions } from 'jose';
import { ConfigError, type KeySource } from './config.js';

export interface Verifier {
  algorithms: string[];
  verify(token: string, options: JWTVerifyOptions): Promise<JWTPayload>;
  /** Set in dev mode only: the random HS256 secret, so a local token can be minted with it. */
  devSecret?: Uint8Array;
}

const PEM_LIMIT = 64 * 1024;
const JWKS_LIMIT = 1024 * 1024;
const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** Reads a regular file of bounded size; the message names the file, never its contents. */
export const readBounded = async (file: string, limit: number, what: string): Promise<string> => {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    throw new ConfigError(`${what} ${JSON.stringify(file)} cannot be opened (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new ConfigError(`${what} ${JSON.stringify(file)} is not a regular file`);
    if (stat.size > limit) throw new ConfigError(`${what} ${JSON.stringify(file)} is larger than ${limit} bytes`);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
};

const algorithmsFor = (key: KeyObject): string[] => {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
    case 'rsa-pss':
      return ['PS256', 'PS384', 'PS512'];
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      const alg = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' }[curve ?? ''];
      if (!alg) throw new ConfigError(`unsupported EC curve ${curve ?? 'unknown'} in the public key file`);
      return [alg];
    }
    case 'ed25519':
      return ['EdDSA', 'Ed25519'];
    default:
      throw new ConfigError(`unsupported public key type ${key.asymmetricKeyType ?? 'unknown'}`);
  }
};

const fromPem = async (file: string): Promise<Verifier> => {
  const pem = await readBounded(file, PEM_LIMIT, 'public key file');
  // A private key would also yield a public key, but it must not sit where a public key belongs.
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem)) {
    throw new ConfigError(`public key file ${JSON.stringify(file)} holds a private key: give the public key only`);
  }
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    throw new ConfigError(`public key file ${JSON.stringify(file)} is not a PEM public key`);
  }
  const algorithms = algorithmsFor(key);
  return { algorithms, verify: async (token, options) => (await jwtVerify(token, key, { ...options, algorithms })).payload };
};

const parseJwks = (text: string, file: string): { keys: Record<string, unknown>[] } => {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new ConfigError(`JWKS file ${JSON.stringify(file)} is not valid JSON`);
  }
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k) => k !== null && typeof k === 'object')) {
    throw new ConfigError(`JWKS file ${JSON.stringify(file)} must be {"keys": [ ...at least one JWK ]}`);
  }
  for (const k of keys as Record<string, unknown>[]) {
    if ('d' in k || k.kty === 'oct') {
      throw new ConfigError(`JWKS file ${JSON.stringify(file)} holds private or symmetric key material: publish public keys only`);
    }
  }
  return { keys: keys as Record<string, unknown>[] };
};

/** The algorithm a JWK without `alg` is imported for, only to check the key is usable. */
const probeAlg = (jwk: Record<string, unknown>): string =>
  typeof jwk.alg === 'string'
    ? jwk.alg
    : jwk.kty === 'RSA'
      ? 'RS256'
      : jwk.kty === 'OKP'
        ? 'EdDSA'
        : ({ 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' }[String(jwk.crv)] ?? 'unknown');

/** Imports every key once, so a broken key fails start-up rather than every request later. */
const checkKeys = async (keys: Record<string, unknown>[], file: string): Promise<void> => {
  for (const [i, jwk] of keys.entries()) {
    try {
      await importJWK(jwk as JWK, probeAlg(jwk));
    } catch {
      const kid = typeof jwk.kid === 'string' ? ` (kid ${JSON.stringify(jwk.kid)})` : '';
      throw new ConfigError(`JWKS file ${JSON.stringify(file)}: key ${i}${kid} is not a usable public key`);
    }
  }
};

const fromJwks = async (file: string): Promise<Verifier> => {
  const jwks = parseJwks(await readBounded(file, JWKS_LIMIT, 'JWKS file'), file);
  await checkKeys(jwks.keys, file);
  let getKey: ReturnType<typeof createLocalJWKSet>;
  try {
    getKey = createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0]);
  } catch {
    throw new ConfigError(`JWKS file ${JSON.stringify(file)} is not a valid JWK set`);
  }
  return {
    algorithms: ASYMMETRIC,
    verify: async (token, options) => (await jwtVerify(token, getKey, { ...options, algorithms: ASYMMETRIC })).payload,
  };
};

const fromSecret = (secret: Uint8Array): Verifier => ({
  algorithms: ['HS256'],
  verify: async (token, options) => (await jwtVerify(token, secret, { ...options, algorithms: ['HS256'] })).payload,
});

export const loadVerifier = async (source: KeySource): Promise<Verifier> => {
  switch (source.kind) {
    case 'secret':
      return fromSecret(new TextEncoder().encode(source.secret));
    case 'pem':
      return fromPem(source.file);
    case 'jwks':
      return fromJwks(source.file);
    case 'dev': {
      const devSecret = new Uint8Array(randomBytes(32));
      return { ...fromSecret(devSecret), devSecret };
    }
  }
};
