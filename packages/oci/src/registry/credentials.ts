/**
 * Registry credentials from a Docker config file (`$DOCKER_CONFIG/config.json`, else
 * `~/.docker/config.json`), as docker, podman, skopeo and ko read them: `auths` entries with
 * `auth` (base64 `user:password`) or `username`/`password`, keyed by host, `https://host`, or
 * `https://index.docker.io/v1/` for Docker Hub. Credential helpers are not run.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface Credentials {
  username: string;
  password: string;
}

interface AuthEntry {
  auth?: string;
  username?: string;
  password?: string;
  identitytoken?: string;
}

export function dockerConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.DOCKER_CONFIG || join(homedir(), '.docker'), 'config.json');
}

/** The keys an `auths` map may use for a registry host. */
function candidateKeys(registry: string): string[] {
  const hub = registry === 'registry-1.docker.io' || registry === 'docker.io' || registry === 'index.docker.io';
  const hosts = hub ? ['https://index.docker.io/v1/', 'index.docker.io', 'docker.io', 'registry-1.docker.io'] : [registry];
  return hosts.flatMap((h) => [h, `https://${h}`, `http://${h}`, `https://${h}/v1/`, `https://${h}/v2/`]);
}

function fromEntry(entry: AuthEntry, path: string, key: string): Credentials | undefined {
  if (entry.username !== undefined && entry.password !== undefined) return { username: entry.username, password: entry.password };
  if (!entry.auth) return undefined;
  const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) throw new Error(`${path}: auths["${key}"].auth is not base64 of user:password`);
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Credentials for a registry host, or undefined when the file or the entry is missing. */
export function credentialsFor(registry: string, env: NodeJS.ProcessEnv = process.env): Credentials | undefined {
  const path = dockerConfigPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  let config: { auths?: Record<string, AuthEntry> };
  try {
    config = JSON.parse(text) as typeof config;
  } catch {
    throw new Error(`${path} is not valid JSON; fix or remove it (it holds registry credentials)`);
  }
  const auths = config.auths ?? {};
  for (const key of candidateKeys(registry)) {
    const entry = auths[key];
    if (entry && typeof entry === 'object') {
      const creds = fromEntry(entry, path, key);
      if (creds) return creds;
    }
  }
  return undefined;
}
