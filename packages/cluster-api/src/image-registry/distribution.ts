/**
 * The OCI distribution API (v2) over the node's image store, an OCI image layout: a push is the
 * store, so a pod names a pushed image and the node finds it. Blobs are the layout's blobs (shared by
 * every repository: a mount is an existence check); a manifest is a blob that index.json lists,
 * tagged `<repository>:<tag>` when pushed by tag and always `<repository>@<digest>` (the names
 * `func-runtime build` gives its images too), so a repository's tags and manifests are its entries
 * of index.json and `_catalog` lists the repositories they name.
 *
 * Push: POST uploads (`?digest=` monolithic, `?mount=&from=` mount), PATCH chunks, PUT with the
 * digest; PUT manifests by tag or digest (OCI and Docker schema 2 manifests and indexes, their
 * blobs or child manifests present). Pull: GET/HEAD of blobs and manifests, the tags list and the
 * catalog (`n`/`last` pagination). Deletes are not offered (the layout's garbage collection
 * removes what no tag holds).
 */
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkRefName, ImageLayout, isIndexType, isManifestType, MediaType, REF_NAME, sha256, type Descriptor } from '@func/oci';
import { DistributionError } from './errors.js';
import { checkDigest, isDigestRef, type Route } from './names.js';
import { uploadPath, type Uploads } from './uploads.js';

export interface DistributionLimits {
  /** The largest manifest taken (default 4 MiB, as distribution's). */
  maxManifestBytes: number;
}

const ManifestTypes = new Set<string>([MediaType.manifest, MediaType.index, MediaType.dockerManifest, MediaType.dockerManifestList]);

/** The repository a layout ref name belongs to: `repo:tag` and `repo@digest` → `repo`. */
export function repositoryOfRefName(ref: string): string {
  const at = ref.indexOf('@');
  if (at >= 0) return ref.slice(0, at);
  const colon = ref.lastIndexOf(':');
  return colon > ref.lastIndexOf('/') ? ref.slice(0, colon) : ref;
}

/** The body, up to `max` bytes; past that a SIZE_INVALID, the rest left for the server to drain (the stream is never destroyed here). */
function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  const tooLarge = () => new DistributionError('SIZE_INVALID', 'manifest larger than this registry accepts', 413);
  if (Number(req.headers['content-length'] ?? 0) > max) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) return void chunks.push(chunk);
      req.off('data', onData).off('end', onEnd);
      reject(tooLarge());
    };
    const onEnd = () => resolve(Buffer.concat(chunks));
    req.on('data', onData).once('end', onEnd).once('error', reject);
  });
}

interface Parsed {
  mediaType: string;
  /** Blobs (config and layers) or child manifests it needs. */
  needs: { digest: string; manifest: boolean }[];
}

function parseManifest(body: Buffer, contentType: string | undefined): Parsed {
  let doc: { schemaVersion?: unknown; mediaType?: unknown; config?: { digest?: unknown }; layers?: unknown; manifests?: unknown };
  try {
    doc = JSON.parse(body.toString('utf8')) as typeof doc;
  } catch {
    throw new DistributionError('MANIFEST_INVALID', 'manifest is not JSON');
  }
  if (!doc || typeof doc !== 'object' || doc.schemaVersion !== 2) throw new DistributionError('MANIFEST_INVALID', 'manifest schemaVersion must be 2');
  const declared = typeof doc.mediaType === 'string' ? doc.mediaType : undefined;
  const header = contentType?.split(';')[0]!.trim();
  const mediaType = declared ?? (header && ManifestTypes.has(header) ? header : Array.isArray(doc.manifests) ? MediaType.index : MediaType.manifest);
  if (!ManifestTypes.has(mediaType)) throw new DistributionError('MANIFEST_INVALID', `unsupported manifest media type`);
  if (declared && header && ManifestTypes.has(header) && header !== declared) throw new DistributionError('MANIFEST_INVALID', 'Content-Type differs from the manifest\'s mediaType');
  const digestOf = (d: unknown): string => {
    const digest = (d as { digest?: unknown } | null)?.digest;
    if (typeof digest !== 'string') throw new DistributionError('MANIFEST_INVALID', 'a descriptor has no digest');
    try {
      return checkDigest(digest);
    } catch {
      throw new DistributionError('MANIFEST_INVALID', 'a descriptor has an invalid digest');
    }
  };
  if (isIndexType(mediaType)) {
    if (!Array.isArray(doc.manifests)) throw new DistributionError('MANIFEST_INVALID', 'an index needs manifests');
    return { mediaType, needs: doc.manifests.map((m) => ({ digest: digestOf(m), manifest: true })) };
  }
  if (!isManifestType(mediaType) || !doc.config || !Array.isArray(doc.layers)) throw new DistributionError('MANIFEST_INVALID', 'a manifest needs config and layers');
  return { mediaType, needs: [doc.config, ...doc.layers].map((d) => ({ digest: digestOf(d), manifest: false })) };
}

export class Distribution {
  constructor(private readonly layout: ImageLayout, private readonly uploads: Uploads, private readonly limits: DistributionLimits) {}

  async handle(route: Route, req: IncomingMessage, res: ServerResponse, query: URLSearchParams): Promise<void> {
    const method = req.method ?? 'GET';
    const head = method === 'HEAD';
    const allow = (...methods: string[]) => {
      if (!methods.includes(method)) throw new DistributionError('UNSUPPORTED', `${method} is not supported here`, 405, { allow: methods.join(', ') });
    };
    switch (route.kind) {
      case 'base':
        allow('GET', 'HEAD');
        return json(res, 200, {}, head);
      case 'catalog':
        allow('GET', 'HEAD');
        return json(res, 200, { repositories: page(await this.repositories(), query, res, '/v2/_catalog') }, head);
      case 'tags': {
        allow('GET', 'HEAD');
        const tags = await this.tags(route.name);
        if (!tags) throw new DistributionError('NAME_UNKNOWN', 'repository name not known to registry');
        return json(res, 200, { name: route.name, tags: page(tags, query, res, `/v2/${route.name}/tags/list`) }, head);
      }
      case 'manifest':
        allow('GET', 'HEAD', 'PUT');
        return method === 'PUT' ? this.putManifest(route.name, route.reference, req, res) : this.getManifest(route.name, route.reference, res, head);
      case 'blob':
        allow('GET', 'HEAD');
        return this.getBlob(route.digest, res, head);
      case 'uploads':
        allow('POST');
        return this.startUpload(route.name, req, res, query);
      case 'upload':
        allow('GET', 'PATCH', 'PUT', 'DELETE');
        return this.upload(route.name, route.id, req, res, query);
    }
  }

  private async entries(): Promise<Descriptor[]> {
    return (await this.layout.readIndex()).manifests;
  }

  private async repositories(): Promise<string[]> {
    const names = new Set<string>();
    for (const m of await this.entries()) {
      const ref = m.annotations?.[REF_NAME];
      if (ref) names.add(repositoryOfRefName(ref));
    }
    return [...names].sort();
  }

  /** The repository's tags, or undefined when index.json names nothing of it. */
  private async tags(name: string): Promise<string[] | undefined> {
    let known = false;
    const tags: string[] = [];
    for (const m of await this.entries()) {
      const ref = m.annotations?.[REF_NAME];
      if (!ref || repositoryOfRefName(ref) !== name) continue;
      known = true;
      if (!ref.slice(name.length).startsWith('@')) tags.push(ref.slice(name.length + 1));
    }
    return known ? tags.sort() : undefined;
  }

  private async find(name: string, reference: string): Promise<Descriptor | undefined> {
    const entries = await this.entries();
    const refName = (m: Descriptor) => m.annotations?.[REF_NAME];
    if (!isDigestRef(reference)) return entries.find((m) => refName(m) === `${name}:${reference}`);
    return entries.find((m) => m.digest === reference && refName(m) !== undefined && repositoryOfRefName(refName(m)!) === name);
  }

  private async getManifest(name: string, reference: string, res: ServerResponse, head: boolean): Promise<void> {
    const found = await this.find(name, reference);
    if (!found || !(await this.layout.hasBlob(found.digest))) throw new DistributionError('MANIFEST_UNKNOWN', 'manifest unknown to registry');
    const body = await this.layout.readBlob(found.digest);
    res.writeHead(200, { 'content-type': found.mediaType || MediaType.manifest, 'content-length': body.length, 'docker-content-digest': found.digest });
    res.end(head ? undefined : body);
  }

  private async putManifest(name: string, reference: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req, this.limits.maxManifestBytes);
    const parsed = parseManifest(body, req.headers['content-type']);
    const digest = sha256(body);
    if (isDigestRef(reference) && reference !== digest) throw new DistributionError('DIGEST_INVALID', 'the manifest does not match the digest in the path');
    for (const need of parsed.needs) {
      const present = need.manifest ? (await this.find(name, need.digest)) !== undefined : await this.layout.hasBlob(need.digest as `sha256:${string}`);
      if (!present) throw new DistributionError('MANIFEST_BLOB_UNKNOWN', `${need.manifest ? 'manifest' : 'blob'} ${need.digest} is not in the repository`);
    }
    const names = [`${name}@${digest}`, ...(isDigestRef(reference) ? [] : [`${name}:${reference}`])];
    for (const n of names) {
      try {
        checkRefName(n);
      } catch {
        throw new DistributionError(n.includes('@') ? 'NAME_INVALID' : 'TAG_INVALID', 'the image store cannot name this repository or tag');
      }
    }
    await this.layout.writeBlob(body);
    const descriptor: Descriptor = { mediaType: parsed.mediaType, digest, size: body.length };
    for (const n of names) await this.layout.tag(n, descriptor);
    res.writeHead(201, { location: `/v2/${name}/manifests/${digest}`, 'docker-content-digest': digest, 'content-length': 0 }).end();
  }

  private async getBlob(digest: string, res: ServerResponse, head: boolean): Promise<void> {
    const d = digest as `sha256:${string}`;
    if (!(await this.layout.hasBlob(d))) throw new DistributionError('BLOB_UNKNOWN', 'blob unknown to registry');
    const { size } = await stat(this.layout.blobPath(d));
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size, 'docker-content-digest': digest });
    if (head) return void res.end();
    const stream = this.layout.blobStream(d);
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  }

  private async startUpload(name: string, req: IncomingMessage, res: ServerResponse, query: URLSearchParams): Promise<void> {
    const mount = query.get('mount');
    if (mount !== null) {
      const digest = checkDigest(mount) as `sha256:${string}`;
      if (await this.layout.hasBlob(digest)) return blobCreated(res, name, digest);
    }
    const id = await this.uploads.start(name);
    const digest = query.get('digest');
    if (digest !== null && mount === null) {
      checkDigest(digest);
      await this.uploads.append(name, id, req);
      await this.uploads.finish(name, id, digest, this.layout);
      return blobCreated(res, name, digest);
    }
    req.resume();
    accepted(res, name, id, 0);
  }

  private async upload(name: string, id: string, req: IncomingMessage, res: ServerResponse, query: URLSearchParams): Promise<void> {
    switch (req.method) {
      case 'GET':
        return void res.writeHead(204, { ...rangeOf(this.uploads.size(name, id)), location: uploadPath(name, id), 'docker-upload-uuid': id }).end();
      case 'DELETE':
        await this.uploads.cancel(name, id);
        return void res.writeHead(204).end();
      case 'PATCH': {
        const size = await this.uploads.append(name, id, req, req.headers['content-range']);
        return accepted(res, name, id, size);
      }
      default: {
        const digest = query.get('digest');
        if (digest === null) throw new DistributionError('DIGEST_INVALID', 'the closing PUT needs ?digest=');
        checkDigest(digest);
        const range = req.headers['content-range'];
        await this.uploads.append(name, id, req, typeof range === 'string' && Number(req.headers['content-length'] ?? 0) > 0 ? range : undefined);
        await this.uploads.finish(name, id, digest, this.layout);
        return blobCreated(res, name, digest);
      }
    }
  }
}

const rangeOf = (size: number) => ({ range: `0-${Math.max(size - 1, 0)}` });

function accepted(res: ServerResponse, name: string, id: string, size: number): void {
  res.writeHead(202, { location: uploadPath(name, id), ...rangeOf(size), 'docker-upload-uuid': id, 'content-length': 0 }).end();
}

function blobCreated(res: ServerResponse, name: string, digest: string): void {
  res.writeHead(201, { location: `/v2/${name}/blobs/${digest}`, 'docker-content-digest': digest, 'content-length': 0 }).end();
}

function json(res: ServerResponse, status: number, doc: unknown, head: boolean): void {
  const body = JSON.stringify(doc);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(head ? undefined : body);
}

/** `n` and `last` pagination; a `Link` to the next page when there is one. */
function page(items: string[], query: URLSearchParams, res: ServerResponse, path: string): string[] {
  const last = query.get('last');
  const from = last === null ? items : items.filter((i) => i > last);
  const nRaw = query.get('n');
  if (nRaw === null) return from;
  const n = Number(nRaw);
  if (!Number.isInteger(n) || n < 0) throw new DistributionError('SIZE_INVALID', 'n must be a non-negative integer');
  const shown = from.slice(0, n);
  if (from.length > n && shown.length > 0) res.setHeader('link', `<${path}?n=${n}&last=${encodeURIComponent(shown[shown.length - 1]!)}>; rel="next"`);
  return shown;
}
