/**
 * Who may do what at the registry, decided by the API server (auth/delegated.ts): a token the API
 * accepts, sent as `Authorization: Bearer <token>` or as the password of Basic credentials (what
 * `docker login`, `skopeo --creds` and `crane auth` send; the user name is ignored), names the user;
 * a write (push, upload, tag) is then authorized as the API server authorizes a request for a
 * non-resource URL: the HTTP method in lower case as the verb, the request path as the path (RBAC:
 * `nonResourceURLs: ["/v2/*"]`; cluster-admin has it).
 *
 * Pulls need no credentials: node agents pull without any (as from kind's, k3d's and minikube's
 * local registries), an image holds no secret here (Secrets are objects of the API), and the
 * registry listens on --bind-address (127.0.0.1 by default), so only this machine reaches it unless
 * the operator says otherwise. Credentials that are sent are checked even for a pull (a wrong token
 * is a 401, never silently anonymous). `GET /v2/` without credentials answers 401 with the
 * challenge, as an authenticating registry does, so clients learn to send them.
 */
import type { IncomingMessage } from 'node:http';
import type { DelegatedAuth, DelegatedUser } from '../auth/delegated.js';
import { DistributionError } from './errors.js';

export const Realm = 'cluster-api';
const challenge = { 'www-authenticate': `Basic realm="${Realm}"` };

/**
 * The token an Authorization header carries, '' for a malformed one, undefined for none (also Basic
 * credentials with an empty password, what a client without credentials may send after the challenge).
 */
export function tokenOf(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  const [scheme, value = ''] = authorization.trim().split(/\s+/, 2);
  if (/^bearer$/i.test(scheme ?? '')) return value;
  if (/^basic$/i.test(scheme ?? '')) {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return '';
    return decoded.slice(colon + 1) || undefined;
  }
  return '';
}

const unauthorized = (message: string) => new DistributionError('UNAUTHORIZED', message, 401, challenge);

export class RegistryAccess {
  constructor(private readonly delegated: DelegatedAuth) {}

  /** Resolves when the request may go on; throws the DistributionError to answer otherwise. */
  async check(req: IncomingMessage, path: string, base: boolean): Promise<DelegatedUser | undefined> {
    const method = req.method ?? 'GET';
    const read = method === 'GET' || method === 'HEAD';
    const token = tokenOf(req.headers.authorization);
    if (token === undefined) {
      if (read && !base) return undefined;
      throw unauthorized('authentication required: a token the cluster\'s API accepts, as a Bearer token or as the password of Basic credentials');
    }
    const user = token ? await this.ask(() => this.delegated.reviewToken(token)) : null;
    if (!user) throw unauthorized('the cluster\'s API does not accept these credentials');
    if (read) return user;
    const allowed = await this.ask(() => this.delegated.allowed(user, { nonResourceAttributes: { verb: method.toLowerCase(), path } }));
    if (!allowed) throw new DistributionError('DENIED', `user ${JSON.stringify(user.name)} may not ${method.toLowerCase()} ${path}`);
    return user;
  }

  private async ask<T>(question: () => Promise<T>): Promise<T> {
    try {
      return await question();
    } catch {
      throw new DistributionError('UNAVAILABLE', 'the cluster\'s API could not be asked about these credentials; try again');
    }
  }
}
