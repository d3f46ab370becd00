/**
 * First-start credentials, as k3s provides them: an admin bearer token kept 0600 in the data dir
 * (unless a token file is given) and a kubeconfig with the CA embedded, so a fresh server is usable
 * by kubectl without any manual step. The token is written to files only, never to a log.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { stringify } from 'yaml';
import type { UserInfo } from '../registry/rest.js';
import { parseTokenFile } from './authenticator.js';

/** The generated token's user: in system:masters like k3s' admin. */
export const AdminUser: UserInfo = { name: 'admin', uid: 'admin', groups: ['system:masters'] };

/** The admin token stored in `file`, created on first start. */
export function ensureAdminToken(file: string): string {
  if (existsSync(file)) {
    const token = readFileSync(file, 'utf8').trim();
    if (token) return token;
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString('base64url');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}

/** The token a generated kubeconfig uses when users come from a token file: the file's first user. */
export function firstToken(tokenFileText: string): string | undefined {
  return parseTokenFile(tokenFileText).keys().next().value;
}

export interface KubeconfigInput {
  server: string;
  token?: string;
  /** A client certificate and its key (PEM), instead of a token. */
  clientCert?: string;
  clientKey?: string;
  /** PEM of the CA that signed the serving certificate; absent for plain HTTP. */
  ca?: string;
  name?: string;
}

export function kubeconfigYaml({ server, token, clientCert, clientKey, ca, name = 'cluster-api' }: KubeconfigInput): string {
  const cluster: Record<string, string> = { server };
  if (ca) cluster['certificate-authority-data'] = Buffer.from(ca).toString('base64');
  const b64 = (pem: string) => Buffer.from(pem).toString('base64');
  const user = clientCert && clientKey ? { 'client-certificate-data': b64(clientCert), 'client-key-data': b64(clientKey) } : token ? { token } : {};
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name: `${name}-admin`, user }],
    contexts: [{ name, context: { cluster: name, user: `${name}-admin`, namespace: 'default' } }],
    'current-context': name,
    preferences: {},
  });
}

/** Written 0600: it holds a bearer token. */
export function writeKubeconfig(file: string, input: KubeconfigInput): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, kubeconfigYaml(input), { mode: 0o600 });
}
