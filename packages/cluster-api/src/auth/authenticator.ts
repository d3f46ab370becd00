/**
 * Bearer-token authentication from a static token file, kube-apiserver's `--token-auth-file` format:
 * one CSV record per line, `token,user,uid[,"group1,group2"]`. Tokens never reach a log or an error
 * message: a bad line is reported by its line number only.
 */
import { readFileSync } from 'node:fs';
import type { UserInfo } from '../registry/rest.js';

/** The audience this API server accepts tokens for (kube-apiserver's default: its issuer). */
export const ApiAudience = 'https://kubernetes.default.svc.cluster.local';

/** A TokenReview's finding: who the token is, and which of the asked audiences it is good for. */
export interface ReviewedToken {
  user: UserInfo;
  audiences: string[];
}

export interface Authenticator {
  /**
   * The user of an `Authorization` header, or undefined when it is missing, malformed or unknown.
   * Synchronous for the token file's users; a promise for tokens that must be checked against the store.
   */
  authenticate(authorization: string | undefined): UserInfo | undefined | Promise<UserInfo | undefined>;
  /** TokenReview: `token`'s user for `audiences` (default: this API server's), or undefined. */
  review(token: string, audiences?: readonly string[]): Promise<ReviewedToken | undefined>;
}

/** Paths a load balancer or kubelet probe reaches without a token (kube-apiserver's default anonymous health). */
export const UnauthenticatedPaths: ReadonlySet<string> = new Set(['/healthz', '/livez', '/readyz']);

export class TokenFileError extends Error {
  override readonly name = 'TokenFileError';
}

/** One CSV record (RFC 4180 quoting, as Go's encoding/csv reads the kube token file). */
export function parseCsvLine(line: string): string[] {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') (field += '"'), i++;
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field === '') quoted = true;
    else if (ch === ',') fields.push(field), (field = '');
    else field += ch;
  }
  if (quoted) throw new TokenFileError('unterminated quoted field');
  fields.push(field);
  return fields;
}

export function parseTokenFile(text: string): Map<string, UserInfo> {
  const users = new Map<string, UserInfo>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const where = `token file line ${index + 1}`;
    let record: string[];
    try {
      record = parseCsvLine(line);
    } catch (err) {
      throw new TokenFileError(`${where}: ${(err as Error).message}`);
    }
    if (record.length < 3)
      throw new TokenFileError(`${where}: must have at least 3 columns (token, user name, user uid), found ${record.length}`);
    const [token, name, uid, groups] = record.map((f) => f.trim());
    if (!token || !name) throw new TokenFileError(`${where}: token and user name must not be empty`);
    const groupList = groups ? groups.split(',').map((g) => g.trim()).filter(Boolean) : [];
    users.set(token, { name, uid: uid ?? '', groups: groupList });
  });
  return users;
}

/** The token of an `Authorization: Bearer <token>` header (the scheme in any case), or undefined. */
export const bearerToken = (authorization: string | undefined): string | undefined =>
  authorization && authorization.length >= 8 && authorization.slice(0, 7).toLowerCase() === 'bearer ' ? authorization.slice(7).trim() : undefined;

export function tokenAuthenticator(users: ReadonlyMap<string, UserInfo>): Authenticator {
  // Every authenticated user is also in system:authenticated, as kube-apiserver adds it; done once here
  // so a request allocates nothing to authenticate.
  const known = new Map([...users].map(([token, u]) => [token, { ...u, groups: [...u.groups, 'system:authenticated'] }]));
  return {
    authenticate(authorization) {
      const token = bearerToken(authorization);
      return token === undefined ? undefined : known.get(token);
    },
    // Static tokens know no audiences: good for this API server only, as kube-apiserver treats them.
    async review(token, audiences) {
      const user = known.get(token);
      if (!user || (audiences && !audiences.includes(ApiAudience))) return undefined;
      return { user, audiences: [ApiAudience] };
    },
  };
}

export const loadTokenFile = (file: string): Authenticator => tokenAuthenticator(parseTokenFile(readFileSync(file, 'utf8')));

/** `base` plus users known by token only to this process (the embedded node agent and scheduler). */
export function withUsers(base: Authenticator, users: ReadonlyMap<string, UserInfo>): Authenticator {
  const extra = tokenAuthenticator(users);
  return {
    authenticate: (authorization) => extra.authenticate(authorization) ?? base.authenticate(authorization),
    review: async (token, audiences) => (await extra.review(token, audiences)) ?? base.review(token, audiences),
  };
}
