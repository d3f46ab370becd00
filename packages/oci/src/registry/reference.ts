/**
 * Image references as docker, skopeo and Kubernetes write them: `[host[:port]/]repo[:tag][@digest]`.
 * A first component without a dot, a colon or `localhost` is a Docker Hub repository, and Docker
 * Hub's single-name repositories live under `library/`.
 */
import { parseDigest } from '../digest.js';
import type { Digest } from '../types.js';

export interface ImageReference {
  /** Host[:port] requests go to (Docker Hub is `registry-1.docker.io`). */
  registry: string;
  repository: string;
  tag?: string;
  digest?: Digest;
}

const DOCKER_HUB = 'registry-1.docker.io';
const REPO = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

export function parseReference(text: string): ImageReference {
  const bad = (why: string) => new Error(`Invalid image reference ${JSON.stringify(text.slice(0, 200))}: ${why}`);
  let rest = text.trim();
  let digest: Digest | undefined;
  const at = rest.indexOf('@');
  if (at !== -1) {
    digest = parseDigest(rest.slice(at + 1), `digest in ${text}`);
    rest = rest.slice(0, at);
  }
  const slash = rest.indexOf('/');
  const first = slash === -1 ? '' : rest.slice(0, slash);
  const hasHost = first !== '' && (first.includes('.') || first.includes(':') || first === 'localhost');
  let registry = hasHost ? first : DOCKER_HUB;
  if (registry === 'docker.io' || registry === 'index.docker.io') registry = DOCKER_HUB;
  let path = hasHost ? rest.slice(slash + 1) : rest;
  let tag: string | undefined;
  const colon = path.lastIndexOf(':');
  if (colon !== -1) {
    tag = path.slice(colon + 1);
    path = path.slice(0, colon);
    if (!TAG.test(tag)) throw bad(`tag ${JSON.stringify(tag)} has characters a tag cannot have`);
  }
  if (registry === DOCKER_HUB && !path.includes('/')) path = `library/${path}`;
  if (!REPO.test(path)) throw bad('the repository must be lowercase letters, digits and . _ - separators');
  if (!tag && !digest) tag = 'latest';
  return { registry, repository: path, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

export function formatReference(ref: ImageReference): string {
  return `${ref.registry}/${ref.repository}${ref.tag ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}

export function isLoopbackHost(registry: string): boolean {
  const host = registry.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
