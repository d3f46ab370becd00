/**
 * Registry authentication as Docker Hub, ghcr.io, quay.io and CNCF distribution answer it: a 401
 * carries `WWW-Authenticate`; `Bearer realm=…,service=…,scope=…` → fetch a token from the realm
 * (with Basic credentials, or anonymously) and cache it per scope set until it expires; `Basic` →
 * send the credentials. Tokens and passwords never appear in an error message.
 */
import type { Credentials } from './credentials.js';
import { RegistryError } from './errors.js';
import type { HttpResponse, Transport } from './transport.js';

export interface Challenge {
  scheme: 'bearer' | 'basic';
  params: Record<string, string>;
}

export function parseChallenge(header: string | undefined): Challenge | undefined {
  if (!header) return undefined;
  const m = /^\s*(\w+)\s*(.*)$/.exec(header);
  const scheme = m?.[1]?.toLowerCase();
  if (scheme !== 'bearer' && scheme !== 'basic') return undefined;
  const params: Record<string, string> = {};
  for (const p of m![2]!.matchAll(/(\w+)=(?:"([^"]*)"|([^,\s]*))/g)) params[p[1]!.toLowerCase()] = p[2] ?? p[3] ?? '';
  return { scheme, params };
}

interface CachedToken {
  header: string;
  expires: number;
}

const basic = (c: Credentials) => `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;

export class Authenticator {
  private readonly tokens = new Map<string, CachedToken>();
  private basicAuth = false;

  constructor(private readonly transport: Transport, private readonly credentials?: Credentials) {}

  /** The Authorization header to send first for these scopes (a cached token, or Basic once learnt). */
  cached(scopes: string[]): string | undefined {
    if (this.basicAuth && this.credentials) return basic(this.credentials);
    const token = this.tokens.get(scopeKey(scopes));
    return token && token.expires > Date.now() ? token.header : undefined;
  }

  /** Answers a 401: the header to retry with, or an `unauthorized` error. */
  async authorize(res: HttpResponse, scopes: string[], what: string): Promise<string> {
    const challenge = parseChallenge(res.headers['www-authenticate']);
    if (challenge?.scheme === 'basic') {
      if (!this.credentials) throw new RegistryError('unauthorized', `Unauthorized: ${what} needs credentials (docker login ${this.transport.registry}, or pass them)`, 401);
      this.basicAuth = true;
      return basic(this.credentials);
    }
    if (challenge?.scheme !== 'bearer' || !challenge.params.realm) {
      throw new RegistryError('unauthorized', `Unauthorized: the registry refused ${what} and offered no way to authenticate`, 401);
    }
    const all = [...new Set([...scopes, ...(challenge.params.scope?.split(' ').filter(Boolean) ?? [])])];
    const token = await this.fetchToken(challenge.params, all, what);
    this.tokens.set(scopeKey(scopes), token);
    return token.header;
  }

  private async fetchToken(params: Record<string, string>, scopes: string[], what: string): Promise<CachedToken> {
    let url: URL;
    try {
      url = new URL(params.realm!);
    } catch {
      throw new RegistryError('protocol', `The registry named an invalid token service for ${what}`);
    }
    if (params.service) url.searchParams.set('service', params.service);
    for (const s of scopes) url.searchParams.append('scope', s);
    const headers: Record<string, string> = this.credentials ? { authorization: basic(this.credentials) } : {};
    const res = await this.transport.send({ method: 'GET', url, headers });
    const body = await res.text();
    if (res.status === 401 || res.status === 403) {
      const who = this.credentials ? `the credentials of user ${JSON.stringify(this.credentials.username)}` : 'anonymous access';
      throw new RegistryError('unauthorized', `Unauthorized: the registry's token service refused ${who} for ${what}`, res.status);
    }
    if (res.status !== 200) throw new RegistryError('protocol', `The registry's token service answered ${res.status} for ${what}`, res.status);
    const doc = parseTokenBody(body);
    const seconds = doc.expires_in && doc.expires_in > 0 ? doc.expires_in : 60;
    return { header: `Bearer ${doc.token}`, expires: Date.now() + Math.max(seconds - 10, 5) * 1000 };
  }
}

function parseTokenBody(body: string): { token: string; expires_in?: number } {
  try {
    const doc = JSON.parse(body) as { token?: string; access_token?: string; expires_in?: number };
    const token = doc.token ?? doc.access_token;
    if (typeof token === 'string' && token) return { token, expires_in: doc.expires_in };
  } catch {
    // fall through
  }
  throw new RegistryError('protocol', 'The registry\'s token service answered without a token');
}

const scopeKey = (scopes: string[]) => [...scopes].sort().join(' ');
