/**
 * A client of one registry over the OCI distribution API (v2): blobs (check, monolithic or chunked
 * upload, cross-repository mount, download) and manifests (by tag or digest, OCI and Docker schema 2).
 */
import type { Readable } from 'node:stream';
import { parseDigest, sha256 } from '../digest.js';
import { MANIFEST_ACCEPT } from '../media-types.js';
import type { Digest } from '../types.js';
import { Authenticator } from './auth.js';
import { type Credentials, credentialsFor } from './credentials.js';
import { errorForStatus, RegistryError } from './errors.js';
import { isLoopbackHost } from './reference.js';
import { type HttpResponse, Transport } from './transport.js';
import { uploadBlob, type BlobSource } from './upload.js';

export interface RegistryOptions {
  /** Explicit credentials; otherwise the Docker config file's entry for the host, if any. */
  credentials?: Credentials;
  /** Environment to find `DOCKER_CONFIG` in (default process.env); `false` skips the config file. */
  dockerConfig?: NodeJS.ProcessEnv | false;
  /** Plain HTTP to a host that is not loopback (loopback hosts use HTTP by default). */
  insecure?: boolean;
  /** Force the scheme, e.g. https for a TLS registry on localhost. */
  scheme?: 'http' | 'https';
  /** PEM CA certificates to trust for this registry. */
  ca?: string | Buffer;
  /** Blobs larger than this go up in PATCH chunks of this size (default 16 MiB). */
  chunkSize?: number;
}

export interface RequestSpec {
  method: string;
  path: string;
  scopes: string[];
  what: string;
  headers?: Record<string, string>;
  body?: Buffer | (() => Readable);
  expect: number[];
}

export interface ManifestResponse {
  body: Buffer;
  mediaType: string;
  digest: Digest;
}

export const pullScope = (repo: string) => `repository:${repo}:pull`;
export const pushScope = (repo: string) => `repository:${repo}:pull,push`;

export class RegistryClient {
  readonly base: URL;
  readonly chunkSize: number;
  private readonly transport: Transport;
  private readonly auth: Authenticator;

  constructor(readonly registry: string, options: RegistryOptions = {}) {
    const scheme = options.scheme ?? (isLoopbackHost(registry) || options.insecure ? 'http' : 'https');
    this.base = new URL(`${scheme}://${registry}`);
    this.chunkSize = options.chunkSize ?? 16 * 1024 * 1024;
    this.transport = new Transport(registry, { ca: options.ca });
    const creds = options.credentials ?? (options.dockerConfig === false ? undefined : credentialsFor(registry, options.dockerConfig));
    this.auth = new Authenticator(this.transport, creds);
  }

  /** One request with authentication: a 401 is answered once (token or Basic), then retried. */
  async request(spec: RequestSpec): Promise<HttpResponse> {
    const url = new URL(spec.path, this.base);
    let authorization = this.auth.cached(spec.scopes);
    for (let attempt = 0; ; attempt++) {
      const headers = { ...spec.headers, ...(authorization ? { authorization } : {}) };
      const body = typeof spec.body === 'function' ? spec.body() : spec.body;
      const res = await this.transport.send({ method: spec.method, url, headers, body });
      if (res.status === 401 && attempt === 0) {
        res.stream.resume();
        authorization = await this.auth.authorize(res, spec.scopes, spec.what);
        continue;
      }
      if (spec.expect.includes(res.status)) return res;
      throw errorForStatus(res.status, spec.what, await res.text().catch(() => ''));
    }
  }

  async hasBlob(repo: string, digest: Digest): Promise<boolean> {
    const res = await this.request({ method: 'HEAD', path: `/v2/${repo}/blobs/${digest}`, scopes: [pullScope(repo)], what: `checking blob ${digest} in ${repo}`, expect: [200, 404] });
    res.stream.resume();
    return res.status === 200;
  }

  /** Asks the registry to link a blob from another repository; false when it would rather have an upload. */
  async mountBlob(repo: string, digest: Digest, from: string): Promise<boolean> {
    const res = await this.request({
      method: 'POST', path: `/v2/${repo}/blobs/uploads/?mount=${encodeURIComponent(digest)}&from=${encodeURIComponent(from)}`,
      scopes: [pushScope(repo), pullScope(from)], what: `mounting ${digest} from ${from} into ${repo}`, expect: [201, 202],
    });
    res.stream.resume();
    return res.status === 201;
  }

  /** Uploads a blob unless the repository has it (or can mount it from `mountFrom`). */
  async pushBlob(repo: string, source: BlobSource, mountFrom?: string): Promise<'exists' | 'mounted' | 'uploaded'> {
    if (await this.hasBlob(repo, source.digest)) return 'exists';
    if (mountFrom && mountFrom !== repo && (await this.mountBlob(repo, source.digest, mountFrom).catch(() => false))) return 'mounted';
    await uploadBlob(this, repo, source);
    return 'uploaded';
  }

  async getBlob(repo: string, digest: Digest): Promise<Readable> {
    const res = await this.request({ method: 'GET', path: `/v2/${repo}/blobs/${digest}`, scopes: [pullScope(repo)], what: `pulling blob ${digest} from ${repo}`, expect: [200] });
    return res.stream;
  }

  async getManifest(repo: string, ref: string): Promise<ManifestResponse> {
    const res = await this.request({ method: 'GET', path: `/v2/${repo}/manifests/${ref}`, scopes: [pullScope(repo)], what: `pulling manifest ${repo}:${ref}`, headers: { accept: MANIFEST_ACCEPT }, expect: [200] });
    const body = await res.buffer(4 * 1024 * 1024);
    const digest = sha256(body);
    const claimed = ref.startsWith('sha256:') ? ref : res.headers['docker-content-digest'];
    if (typeof claimed === 'string' && claimed !== digest) {
      throw new RegistryError('protocol', `Digest mismatch for manifest ${repo}:${ref}: expected ${claimed}, got ${digest}`);
    }
    const mediaType = String(res.headers['content-type'] ?? '').split(';')[0]!.trim() || (JSON.parse(body.toString('utf8')) as { mediaType?: string }).mediaType || '';
    return { body, mediaType, digest };
  }

  async putManifest(repo: string, ref: string, body: Buffer, mediaType: string): Promise<Digest> {
    const res = await this.request({ method: 'PUT', path: `/v2/${repo}/manifests/${ref}`, scopes: [pushScope(repo)], what: `pushing manifest ${repo}:${ref}`, headers: { 'content-type': mediaType }, body, expect: [201] });
    res.stream.resume();
    const digest = sha256(body);
    const answered = res.headers['docker-content-digest'];
    if (typeof answered === 'string' && parseDigest(answered) !== digest) throw new RegistryError('protocol', `The registry stored manifest ${repo}:${ref} as ${answered}, not ${digest}`);
    return digest;
  }

  close(): void {
    this.transport.close();
  }
}
