/**
 * Who may use the kubelet server, decided as the kubelet decides it with webhook authentication and
 * authorization: a client certificate signed by the cluster CA names the user (CN) and groups (O);
 * a bearer token is asked about with a TokenReview; then a SubjectAccessReview asks whether that user
 * may `<verb>` the `nodes/<subresource>` of this node (the kubelet's request attributes: `/logs` →
 * log, `/stats` → stats, `/metrics` → metrics, anything else → proxy); both asked through
 * auth/delegated.ts (cached as the kubelet caches them).
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { type KubeClient } from '@func/kube-client';
import { DelegatedAuth, type DelegatedUser } from '../../auth/delegated.js';

export type KubeletUser = DelegatedUser;

const verbs: Record<string, string> = { GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

/** The kubelet's mapping of a request path to a nodes subresource. */
export const subresourceOf = (path: string): string =>
  path.startsWith('/logs') ? 'log' : path.startsWith('/stats') ? 'stats' : path.startsWith('/metrics') ? 'metrics' : path.startsWith('/spec') ? 'spec' : 'proxy';

export class KubeletAuth {
  private readonly delegated: DelegatedAuth;

  constructor(kube: KubeClient, private readonly nodeName: string) {
    this.delegated = new DelegatedAuth(kube);
  }

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
    return (await this.delegated.authenticateBearer(req.headers.authorization)) ?? undefined;
  }

  /** SubjectAccessReview for nodes/<subresource> of this node. */
  authorize(user: KubeletUser, method: string, path: string): Promise<boolean> {
    return this.delegated.allowed(user, { resourceAttributes: { verb: verbs[method] ?? method.toLowerCase(), resource: 'nodes', subresource: subresourceOf(path), name: this.nodeName } });
  }

  /** The kubelet's 403 text. */
  static forbidden(user: KubeletUser, method: string, path: string): string {
    return `Forbidden (user=${user.name}, verb=${verbs[method] ?? method.toLowerCase()}, resource=nodes, subresource=${subresourceOf(path)})`;
  }
}
