/**
 * ServiceAccount tokens, as kube-apiserver issues and checks them: RS256 JWTs signed with the
 * server's own key, naming the account (`system:serviceaccount:<ns>:<name>` and its uid), the
 * audiences, an expiry, and optionally a Pod or Secret the token is bound to. A token authenticates
 * only while it is unexpired, meant for this API server's audience, and the account (and the bound
 * object) still exist with the uids it names: deleting the account revokes its tokens.
 *
 * Signing and checking use node:crypto directly (a JWT is three base64url parts): verification sits
 * on the request path and must stay synchronous and cheap, where JWT libraries are promise-based.
 * Verified claims are cached by token, so a busy client costs one RSA verification, not one a request.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { BoundObject, IssuedToken, TokenIssuer } from '../registry/definition.js';
import type { Registry, UserInfo } from '../registry/rest.js';
import { isApiError } from '../api/errors.js';
import { ApiAudience, bearerToken, type Authenticator, type ReviewedToken } from './authenticator.js';
import { TlsFileError } from './tls.js';

/** kube-apiserver's usual --service-account-issuer (kubeadm's); also the API audience. */
export const Issuer = ApiAudience;

interface Claims {
  iss: string;
  sub: string;
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  'kubernetes.io': {
    namespace: string;
    serviceaccount: { name: string; uid: string };
    pod?: { name: string; uid: string };
    secret?: { name: string; uid: string };
  };
}

const b64url = (data: string | Buffer): string => Buffer.from(data).toString('base64url');

/** The signing key in `file` (PKCS#8 PEM), made on first use with mode 0600, as the data dir's other keys. */
export function loadOrCreateSigningKey(file: string): KeyObject {
  if (existsSync(file)) {
    try {
      return createPrivateKey(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new TlsFileError(`service account key ${file}: cannot be read (${(err as Error).message}); remove it to have a new one made (tokens signed with the old key stop working)`);
    }
  }
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  return privateKey;
}

/** A key for this process only: tokens it signs die with it (tests, servers started without a data dir). */
export const ephemeralSigningKey = (): KeyObject => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

const MaxCachedTokens = 4096;

interface Keys {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** The encoded JWT header, the same for every token of this key. */
  header: string;
}

export class ServiceAccountTokens implements TokenIssuer {
  private loaded: Keys | undefined;
  private readonly verified = new Map<string, Claims>();

  /** `signingKey` is called on first use: a server that never sees a service account token makes no key. */
  constructor(private readonly signingKey: () => KeyObject) {}

  private get keys(): Keys {
    if (this.loaded) return this.loaded;
    const privateKey = this.signingKey();
    const publicKey = createPublicKey(privateKey);
    // kid: a digest of the public key, as kube-apiserver derives it, so verifiers can pick the key.
    const kid = createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('base64url');
    return (this.loaded = { privateKey, publicKey, header: b64url(JSON.stringify({ alg: 'RS256', kid })) });
  }

  issue(account: { namespace: string; name: string; uid: string }, audiences: readonly string[], seconds: number, bound?: BoundObject): IssuedToken {
    const now = Math.floor(Date.now() / 1000);
    const claims: Claims = {
      iss: Issuer,
      sub: `system:serviceaccount:${account.namespace}:${account.name}`,
      aud: audiences.length > 0 ? [...audiences] : [ApiAudience],
      exp: now + seconds,
      iat: now,
      nbf: now,
      'kubernetes.io': {
        namespace: account.namespace,
        serviceaccount: { name: account.name, uid: account.uid },
        ...(bound && { [bound.kind === 'Pod' ? 'pod' : 'secret']: { name: bound.name, uid: bound.uid } }),
      },
    };
    const { header, privateKey } = this.keys;
    const signed = `${header}.${b64url(JSON.stringify(claims))}`;
    const signature = sign('sha256', Buffer.from(signed), privateKey).toString('base64url');
    return { token: `${signed}.${signature}`, expiresAt: new Date(claims.exp * 1000), audiences: claims.aud };
  }

  /** The token's claims when it is ours, well formed and unexpired; undefined otherwise (never throws). */
  claims(token: string): Claims | undefined {
    let claims = this.verified.get(token);
    if (!claims) {
      claims = this.verifySignature(token);
      if (!claims) return undefined;
      if (this.verified.size >= MaxCachedTokens) this.verified.clear();
      this.verified.set(token, claims);
    }
    const now = Date.now() / 1000;
    if (claims.exp <= now || claims.nbf > now + 60) {
      this.verified.delete(token);
      return undefined;
    }
    return claims;
  }

  private verifySignature(token: string): Claims | undefined {
    const parts = token.split('.');
    const { header, publicKey } = this.keys;
    if (parts.length !== 3 || parts[0] !== header) return undefined;
    try {
      if (!verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), publicKey, Buffer.from(parts[2]!, 'base64url'))) return undefined;
      const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as Claims;
      const k8s = claims['kubernetes.io'];
      if (claims.iss !== Issuer || !Array.isArray(claims.aud) || typeof claims.exp !== 'number' || !k8s?.serviceaccount?.name) return undefined;
      return claims;
    } catch {
      return undefined;
    }
  }
}

const looksLikeJwt = (token: string): boolean => token.startsWith('eyJ') && token.split('.').length === 3;

const exists = async (registry: Registry, plural: string, namespace: string, ref: { name: string; uid: string }): Promise<boolean> => {
  try {
    const found = await registry.find('', 'v1', plural)!.get({ namespace }, ref.name);
    return found.metadata.uid === ref.uid;
  } catch (err) {
    if (isApiError(err) && err.code === 404) return false;
    throw err;
  }
};

/**
 * `base` (the token file's users) plus service account tokens. A static token answers synchronously;
 * a JWT is checked against the store, so its answer is a promise.
 */
export function withServiceAccountTokens(base: Authenticator, tokens: ServiceAccountTokens, registry: Registry): Authenticator {
  const accountOf = async (token: string, audiences: readonly string[]): Promise<ReviewedToken | undefined> => {
    const claims = tokens.claims(token);
    if (!claims) return undefined;
    const valid = claims.aud.filter((a) => audiences.includes(a));
    if (valid.length === 0) return undefined;
    const { namespace, serviceaccount, pod, secret } = claims['kubernetes.io'];
    if (!(await exists(registry, 'serviceaccounts', namespace, serviceaccount))) return undefined;
    if (pod && !(await exists(registry, 'pods', namespace, pod))) return undefined;
    if (secret && !(await exists(registry, 'secrets', namespace, secret))) return undefined;
    const user: UserInfo = {
      name: `system:serviceaccount:${namespace}:${serviceaccount.name}`,
      uid: serviceaccount.uid,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
    };
    return { user, audiences: valid };
  };
  return {
    authenticate(authorization) {
      const user = base.authenticate(authorization);
      const token = bearerToken(authorization);
      if (user !== undefined || token === undefined) return user;
      return looksLikeJwt(token) ? accountOf(token, [ApiAudience]).then((r) => r?.user) : undefined;
    },
    async review(token, audiences) {
      return (await base.review(token, audiences)) ?? (looksLikeJwt(token) ? accountOf(token, audiences ?? [ApiAudience]) : undefined);
    },
  };
}
