/**
 * An OCI image layout directory (image-layout 1.0: `oci-layout`, `index.json`, `blobs/sha256/…`),
 * the format skopeo, umoci and podman read. Blobs are content-addressed and written to a temporary
 * file then renamed, so concurrent writers (several builds, a pull) never expose half a blob;
 * index.json changes are serialised by a lock file and also land by rename.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { DigestMismatchError, jsonBytes, parseDigest, sha256 } from './digest.js';
import { HashingSink } from './hashing-sink.js';
import { withLock } from './lock.js';
import { MediaType, REF_NAME } from './media-types.js';
import type { Descriptor, Digest, ImageIndex } from './types.js';

const COMPONENT = '[A-Za-z0-9]+(?:(?:[-._:@+]|--)[A-Za-z0-9]+)*';
const REF = new RegExp(`^${COMPONENT}(?:/${COMPONENT})*$`);

/** Checks a tag against image-layout's `org.opencontainers.image.ref.name` grammar. */
export function checkRefName(name: string): string {
  if (name.length > 255 || !REF.test(name)) throw new Error(`Invalid tag ${JSON.stringify(name.slice(0, 80))}: letters, digits and - . _ : @ + separators (or /) only, at most 255 characters`);
  return name;
}

export class ImageLayout {
  private constructor(readonly dir: string) {}

  /** Opens a layout, creating it (and its directory) when missing. */
  static async open(dir: string): Promise<ImageLayout> {
    const layout = new ImageLayout(dir);
    await mkdir(join(dir, 'blobs', 'sha256'), { recursive: true });
    const marker = await readFile(join(dir, 'oci-layout'), 'utf8').catch(() => undefined);
    if (marker === undefined) {
      await layout.atomicWrite(join(dir, 'oci-layout'), jsonBytes({ imageLayoutVersion: '1.0.0' }));
    } else if (!/"imageLayoutVersion"\s*:\s*"1\.\d+\.\d+"/.test(marker)) {
      throw new Error(`${dir} is not an OCI image layout this version reads (oci-layout: ${marker.slice(0, 80)})`);
    }
    await withLock(join(dir, 'index.json.lock'), async () => {
      const exists = await stat(join(dir, 'index.json')).then(() => true, () => false);
      if (!exists) await layout.writeIndex({ schemaVersion: 2, mediaType: MediaType.index, manifests: [] });
    });
    return layout;
  }

  blobPath(digest: Digest): string {
    return join(this.dir, 'blobs', 'sha256', parseDigest(digest).slice('sha256:'.length));
  }

  async hasBlob(digest: Digest): Promise<boolean> {
    return stat(this.blobPath(digest)).then(() => true, () => false);
  }

  /** Stores bytes under their digest; a blob already present is not rewritten. */
  async writeBlob(data: Buffer): Promise<{ digest: Digest; size: number }> {
    const digest = sha256(data);
    if (!(await this.hasBlob(digest))) await this.atomicWrite(this.blobPath(digest), data);
    return { digest, size: data.length };
  }

  /** Streams a blob in, checking it against the digest it was asked for before it becomes visible. */
  async writeBlobFrom(source: AsyncIterable<Buffer> | NodeJS.ReadableStream, expected: Digest): Promise<number> {
    const target = this.blobPath(expected);
    const tmp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    const sink = new HashingSink();
    try {
      await pipeline(source, sink, createWriteStream(tmp));
      const actual = sink.digest();
      if (actual !== expected) throw new DigestMismatchError(expected, actual, `blob ${expected}`);
      await rename(tmp, target);
      return sink.size;
    } finally {
      await rm(tmp, { force: true });
    }
  }

  async readBlob(digest: Digest): Promise<Buffer> {
    try {
      return await readFile(this.blobPath(digest));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`Blob ${digest} is not in the image layout ${this.dir}`);
      throw err;
    }
  }

  blobStream(digest: Digest): NodeJS.ReadableStream {
    return createReadStream(this.blobPath(digest));
  }

  async readJson<T>(digest: Digest): Promise<T> {
    const data = await this.readBlob(digest);
    if (sha256(data) !== digest) throw new DigestMismatchError(digest, sha256(data), `blob ${digest} in ${this.dir}`);
    return JSON.parse(data.toString('utf8')) as T;
  }

  async readIndex(): Promise<ImageIndex> {
    const index = JSON.parse(await readFile(join(this.dir, 'index.json'), 'utf8')) as ImageIndex;
    if (index.schemaVersion !== 2 || !Array.isArray(index.manifests)) throw new Error(`${join(this.dir, 'index.json')} is not an OCI image index`);
    return index;
  }

  /** Points `tag` at a manifest (or index); the tag's previous entry is replaced, never duplicated. */
  async tag(tag: string, descriptor: Descriptor): Promise<void> {
    checkRefName(tag);
    await this.updateIndex((manifests) => [
      ...manifests.filter((m) => m.annotations?.[REF_NAME] !== tag),
      { ...descriptor, annotations: { ...descriptor.annotations, [REF_NAME]: tag } },
    ]);
  }

  async untag(tag: string): Promise<boolean> {
    let found = false;
    await this.updateIndex((manifests) => manifests.filter((m) => (m.annotations?.[REF_NAME] === tag ? ((found = true), false) : true)));
    return found;
  }

  async tags(): Promise<string[]> {
    const index = await this.readIndex();
    return index.manifests.flatMap((m) => (m.annotations?.[REF_NAME] ? [m.annotations[REF_NAME]] : [])).sort();
  }

  /** A tag, or a digest of a manifest the index lists. */
  async resolve(ref: string): Promise<Descriptor> {
    const index = await this.readIndex();
    const found = index.manifests.find((m) => m.annotations?.[REF_NAME] === ref || m.digest === ref);
    if (!found) throw new Error(`No image ${JSON.stringify(ref)} in ${this.dir} (tags: ${(await this.tags()).join(', ') || 'none'})`);
    return found;
  }

  private async updateIndex(change: (manifests: Descriptor[]) => Descriptor[]): Promise<void> {
    await withLock(join(this.dir, 'index.json.lock'), async () => {
      const index = await this.readIndex();
      await this.writeIndex({ ...index, manifests: change(index.manifests) });
    });
  }

  private async writeIndex(index: ImageIndex): Promise<void> {
    await this.atomicWrite(join(this.dir, 'index.json'), Buffer.from(JSON.stringify(index, null, 2) + '\n'));
  }

  private async atomicWrite(path: string, data: Buffer): Promise<void> {
    const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await writeFile(tmp, data);
      await rename(tmp, path);
    } finally {
      await rm(tmp, { force: true });
    }
  }
}
