/**
 * Authentication and authorization delegated to the API server, as a kubelet or an aggregated API
 * server does it with webhook authn/authz: a bearer token is asked about with a TokenReview, an
 * action with a SubjectAccessReview (resource or non-resource attributes). The asker needs
 * `system:auth-delegator`. Answers are cached as the kubelet caches them: tokens 2 minutes, allowed
 * 5 minutes, denied 30 seconds. Tokens never reach a log or an error.
 */
import type { KubeClient } from '@func/kube-client';

export interface DelegatedUser {
  name: string;
  uid: string;
  groups: string[];
}

/** A SubjectAccessReview's `resourceAttributes`. */
export interface ResourceAttributes { verb: string; resource: string; group?: string; subresource?: string; name?: string; namespace?: string }

/** What a SubjectAccessReview asks about: a resource (verb, resource, subresource, name, namespace) or a non-resource path. */
export type AccessAttributes =
  | { resourceAttributes: ResourceAttributes }
  | { nonResourceAttributes: { verb: string; path: string } };

export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e || e.until < Date.now()) return void this.entries.delete(key);
    return e.value;
  }
  set(key: string, value: V, ttlMs: number): void {
    if (this.entries.size > 10_000) this.entries.clear();
    this.entries.set(key, { value, until: Date.now() + ttlMs });
  }
}

export class DelegatedAuth {
  private readonly tokens = new TtlCache<DelegatedUser | null>();
  private readonly decisions = new TtlCache<boolean>();

  constructor(private readonly kube: KubeClient) {}

  /** The user of a bearer token (an `Authorization` header's value), or null when the API does not know it. */
  async authenticateBearer(header: string | undefined): Promise<DelegatedUser | null> {
    if (!header || !/^bearer /i.test(header)) return null;
    return this.reviewToken(header.slice(7).trim());
  }

  /** The token's user, or null when the API server does not accept it. */
  async reviewToken(token: string): Promise<DelegatedUser | null> {
    if (!token) return null;
    const cached = this.tokens.get(token);
    if (cached !== undefined) return cached;
    const res = await this.kube.raw({ method: 'POST', path: '/apis/authentication.k8s.io/v1/tokenreviews', body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }, what: 'create tokenreviews' });
    const status = (JSON.parse(res.body) as { status?: { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[] } } }).status;
    const user = status?.authenticated && status.user?.username ? { name: status.user.username, uid: status.user.uid ?? '', groups: status.user.groups ?? [] } : null;
    this.tokens.set(token, user, 120_000);
    return user;
  }

  /** Whether the API server's authorizer allows `user` the action. */
  async allowed(user: DelegatedUser, attrs: AccessAttributes): Promise<boolean> {
    const key = JSON.stringify([user.name, user.groups, attrs]);
    const cached = this.decisions.get(key);
    if (cached !== undefined) return cached;
    const body = { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: user.name, uid: user.uid, groups: user.groups, ...attrs } };
    const res = await this.kube.raw({ method: 'POST', path: '/apis/authorization.k8s.io/v1/subjectaccessreviews', body, what: 'create subjectaccessreviews' });
    const allowed = (JSON.parse(res.body) as { status?: { allowed?: boolean } }).status?.allowed === true;
    this.decisions.set(key, allowed, allowed ? 300_000 : 30_000);
    return allowed;
  }
}
