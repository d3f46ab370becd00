/**
 * Bootstrap tokens, as kube-apiserver's `--enable-bootstrap-token-auth` checks them: a bearer token
 * `<id>.<secret>` (`[a-z0-9]{6}.[a-z0-9]{16}`, kubeadm's format) authenticates while the Secret
 * `kube-system/bootstrap-token-<id>` of type `bootstrap.kubernetes.io/token` holds the same
 * `token-secret`, says `usage-bootstrap-authentication: "true"`, is not past its `expiration` and is
 * not being deleted. The user is `system:bootstrap:<id>` in `system:bootstrappers` plus the Secret's
 * `auth-extra-groups` (each `system:bootstrappers:…`). The Secret is read on every use, so a deleted
 * or expired token stops working at once. Nothing about a refused token reaches the client.
 */
import { randomInt, timingSafeEqual } from 'node:crypto';
import { isApiError } from '../api/errors.js';
import type { KubeObject } from '../api/meta.js';
import type { Registry, UserInfo } from '../registry/rest.js';
import { ApiAudience, bearerToken, type Authenticator, type ReviewedToken } from './authenticator.js';

export const BootstrapTokenSecretType = 'bootstrap.kubernetes.io/token';
export const BootstrapTokenPattern = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
export const BootstrappersGroup = 'system:bootstrappers';
export const ExtraGroupPattern = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

const secretName = (id: string) => `bootstrap-token-${id}`;

/** A Secret's `data` entry as text ('' when absent or not base64). */
const field = (secret: KubeObject, key: string): string => {
  const v = (secret as { data?: Record<string, unknown> }).data?.[key];
  return typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : '';
};

const sameText = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** The user a valid bootstrap token Secret authenticates for `tokenSecret`, or undefined. */
export function bootstrapTokenUser(secret: KubeObject, id: string, tokenSecret: string, now = Date.now()): UserInfo | undefined {
  if ((secret as { type?: string }).type !== BootstrapTokenSecretType || secret.metadata.deletionTimestamp) return undefined;
  if (field(secret, 'token-id') !== id || !sameText(field(secret, 'token-secret'), tokenSecret)) return undefined;
  const expiration = field(secret, 'expiration');
  if (expiration && !(Date.parse(expiration) > now)) return undefined;
  if (field(secret, 'usage-bootstrap-authentication') !== 'true') return undefined;
  const extra = field(secret, 'auth-extra-groups').split(',').map((g) => g.trim()).filter(Boolean);
  if (extra.some((g) => !ExtraGroupPattern.test(g))) return undefined;
  return { name: `system:bootstrap:${id}`, uid: '', groups: [BootstrappersGroup, ...extra.filter((g) => g !== BootstrappersGroup), 'system:authenticated'] };
}

/** `base`, then bootstrap tokens looked up in kube-system. */
export function withBootstrapTokens(base: Authenticator, registry: Registry): Authenticator {
  const lookup = async (token: string): Promise<UserInfo | undefined> => {
    const m = BootstrapTokenPattern.exec(token);
    const secrets = m && registry.find('', 'v1', 'secrets');
    if (!m || !secrets) return undefined;
    try {
      return bootstrapTokenUser(await secrets.get({ namespace: 'kube-system' }, secretName(m[1]!)), m[1]!, m[2]!);
    } catch (err) {
      if (isApiError(err) && err.code === 404) return undefined;
      throw err;
    }
  };
  return {
    authenticate(authorization) {
      const user = base.authenticate(authorization);
      const token = bearerToken(authorization);
      if (user !== undefined || token === undefined || !BootstrapTokenPattern.test(token)) return user;
      return Promise.resolve(user).then((u) => u ?? lookup(token));
    },
    // Bootstrap tokens know no audiences: good for this API server only.
    async review(token, audiences): Promise<ReviewedToken | undefined> {
      const found = await base.review(token, audiences);
      if (found || (audiences && !audiences.includes(ApiAudience))) return found;
      const user = await lookup(token);
      return user && { user, audiences: [ApiAudience] };
    },
  };
}

const TokenAlphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
const randomText = (n: number): string => Array.from({ length: n }, () => TokenAlphabet[randomInt(TokenAlphabet.length)]).join('');

/** A new bootstrap token, kubeadm's format `[a-z0-9]{6}.[a-z0-9]{16}`. */
export const newBootstrapToken = (): string => `${randomText(6)}.${randomText(16)}`;

export interface BootstrapTokenOptions {
  /** Lifetime; 0: never expires. */
  ttlMs: number;
  description?: string;
  /** auth-extra-groups (kubeadm's default: system:bootstrappers:kubeadm:default-node-token). */
  groups?: readonly string[];
  now?: number;
}

/** The Secret kubeadm's `token create` makes for `token` (usable for authentication and signing). */
export function bootstrapTokenSecret(token: string, { ttlMs, description, groups = ['system:bootstrappers:kubeadm:default-node-token'], now = Date.now() }: BootstrapTokenOptions): KubeObject {
  const m = BootstrapTokenPattern.exec(token);
  if (!m) throw new Error('a bootstrap token has the form [a-z0-9]{6}.[a-z0-9]{16}');
  const stringData: Record<string, string> = { 'token-id': m[1]!, 'token-secret': m[2]!, 'usage-bootstrap-authentication': 'true', 'usage-bootstrap-signing': 'true' };
  if (ttlMs > 0) stringData.expiration = `${new Date(now + ttlMs).toISOString().slice(0, 19)}Z`;
  if (description) stringData.description = description;
  if (groups.length) stringData['auth-extra-groups'] = groups.join(',');
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: secretName(m[1]!), namespace: 'kube-system' }, type: BootstrapTokenSecretType, stringData } as KubeObject;
}
