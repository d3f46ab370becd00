/**
 * Who may use the kubelet server, decided as the kubelet decides it with webhook authentication and
 * authorization: a client certificate signed by the cluster CA names the user (CN) and groups (O);
 * a bearer token is asked about with a TokenReview; then a SubjectAccessReview asks whether that user
 * may `<verb>` the `nodes/<subresource>` of this node (the kubelet's request attributes: `/logs` →
 * log, `/stats` → stats, `/metrics` → metrics, anything else → proxy). Answers are cached as the
 * kubelet caches them: tokens 2 minutes, allowed 5 minutes, denied 30 seconds.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { type KubeClient } from '@func/kube-client';

export interface KubeletUser {
  name: string;
  uid: string;
  groups: string[];
}

const verbs: Record<string, string> = { GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/** The kubelet's mapping of a request path to a nodes subresource. */
export const subresourceOf = (path: string): string =>
  path.startsWith('/logs') ? 'log' : path.startsWith('/stats') ? 'stats' : path.startsWith('/metrics') ? 'metrics' : path.startsWith('/spec') ? 'spec' : 'proxy';

class TtlCache<V> {
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

export class KubeletAuth {
  private readonly tokens = new TtlCache<KubeletUser | null>();
  private readonly decisions = new TtlCache<boolean>();

  constructor(private readonly kube: KubeClient, private readonly nodeName: string) {}

  /** The client certificate's user (verified against the CA by TLS), else the bearer token's, else none. */
  async authenticate(req: IncomingMessage): Promise<KubeletUser | undefined> {
    const socket = req.socket as TLSSocket;
    if (socket.authorized) {
      const cert = socket.getPeerCertificate();
      const subject = cert?.subject as unknown as Record<string, string | string[]> | undefined;
      const cn = subject?.CN;
      if (typeof cn === 'string' && cn) {
        const o = subject!.O;
        return { name: cn, uid: '', groups: [...(Array.isArray(o) ? o : o ? [o] : []), 'system:authenticated'] };
      }
    }
    const header = req.headers.authorization ?? '';
    if (!/^bearer /i.test(header)) return undefined;
    return (await this.review(header.slice(7).trim())) ?? undefined;
  }

  private async review(token: string): Promise<KubeletUser | null> {
    const cached = this.tokens.get(token);
    if (cached !== undefined) return cached;
    const res = await this.kube.raw({ method: 'POST', path: '/apis/authentication.k8s.io/v1/tokenreviews', body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } }, what: 'create tokenreviews' });
    const status = (JSON.parse(res.body) as { status?: { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[] } } }).status;
    const user = status?.authenticated && status.user?.username ? { name: status.user.username, uid: status.user.uid ?? '', groups: status.user.groups ?? [] } : null;
    this.tokens.set(token, user, 120_000);
    return user;
  }

  /** SubjectAccessReview for nodes/<subresource> of this node. */
  async authorize(user: KubeletUser, method: string, path: string): Promise<boolean> {
    const attrs = { verb: verbs[method] ?? method.toLowerCase(), resource: 'nodes', subresource: subresourceOf(path), name: this.nodeName };
    const key = JSON.stringify([user.name, user.groups, attrs]);
    const cached = this.decisions.get(key);
    if (cached !== undefined) return cached;
    const body = { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: user.name, uid: user.uid, groups: user.groups, resourceAttributes: attrs } };
    const res = await this.kube.raw({ method: 'POST', path: '/apis/authorization.k8s.io/v1/subjectaccessreviews', body, what: 'create subjectaccessreviews' });
    const allowed = (JSON.parse(res.body) as { status?: { allowed?: boolean } }).status?.allowed === true;
    this.decisions.set(key, allowed, allowed ? 300_000 : 30_000);
    return allowed;
  }

  /** The kubelet's 403 text. */
  static forbidden(user: KubeletUser, method: string, path: string): string {
    return `Forbidden (user=${user.name}, verb=${verbs[method] ?? method.toLowerCase()}, resource=nodes, subresource=${subresourceOf(path)})`;
  }
}
