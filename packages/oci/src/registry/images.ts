/**
 * Whole images between a layout and a registry: push (blobs first, in parallel, skipping what the
 * registry has; children of an index before the index; the manifest last, by tag or digest) and
 * pull (one platform's manifest and its blobs, digests verified as they are written).
 */
import type { Readable } from 'node:stream';
import type { ImageLayout } from '../layout.js';
import { isIndexType } from '../media-types.js';
import { choosePlatform, hostPlatform } from '../platform.js';
import type { Descriptor, Digest, ImageIndex, ImageManifest, Platform } from '../types.js';
import { RegistryClient, type RegistryOptions } from './client.js';
import { formatReference, type ImageReference, parseReference } from './reference.js';

export interface PushOptions extends RegistryOptions {
  /** A repository on the same registry that may already hold the layers (e.g. the base image's). */
  mountFrom?: string;
  client?: RegistryClient;
}

export interface PullOptions extends RegistryOptions {
  platform?: Platform;
  /** Tag the pulled manifest in the layout. */
  tag?: string;
  client?: RegistryClient;
}

export interface PushResult {
  digest: Digest;
  /** `registry/repo@sha256:…`: what a node should pull. */
  reference: string;
  uploaded: number;
  mounted: number;
  existing: number;
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => { for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!); };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

const asReference = (r: string | ImageReference) => (typeof r === 'string' ? parseReference(r) : r);

export async function pushImage(layout: ImageLayout, source: string | Descriptor, target: string | ImageReference, options: PushOptions = {}): Promise<PushResult> {
  const ref = asReference(target);
  const client = options.client ?? new RegistryClient(ref.registry, options);
  const counts = { uploaded: 0, mounted: 0, existing: 0 };
  const counted = { uploaded: 'uploaded', mounted: 'mounted', exists: 'existing' } as const;
  try {
    const root = typeof source === 'string' ? await layout.resolve(source) : source;
    const pushManifest = async (desc: Descriptor, tagOrDigest: string): Promise<Digest> => {
      const body = await layout.readBlob(desc.digest);
      const doc = JSON.parse(body.toString('utf8')) as ImageManifest & ImageIndex;
      if (isIndexType(doc.mediaType ?? desc.mediaType)) {
        for (const child of doc.manifests) await pushManifest(child, child.digest);
      } else {
        const blobs = [doc.config, ...doc.layers];
        const results = await mapLimit(blobs, 3, (b) => client.pushBlob(ref.repository, { digest: b.digest, size: b.size, path: layout.blobPath(b.digest) }, options.mountFrom));
        for (const r of results) counts[counted[r]]++;
      }
      return client.putManifest(ref.repository, tagOrDigest, body, doc.mediaType ?? desc.mediaType);
    };
    const digest = await pushManifest(root, ref.digest ?? ref.tag ?? root.digest);
    return { digest, reference: formatReference({ registry: ref.registry, repository: ref.repository, digest }), ...counts };
  } finally {
    if (!options.client) client.close();
  }
}

export async function pullImage(source: string | ImageReference, layout: ImageLayout, options: PullOptions = {}): Promise<Descriptor> {
  const ref = asReference(source);
  const client = options.client ?? new RegistryClient(ref.registry, options);
  try {
    let got = await client.getManifest(ref.repository, ref.digest ?? ref.tag!);
    if (isIndexType(got.mediaType)) {
      const index = JSON.parse(got.body.toString('utf8')) as ImageIndex;
      const chosen = choosePlatform(index.manifests, options.platform ?? hostPlatform());
      got = await client.getManifest(ref.repository, chosen.digest);
    }
    const manifest = JSON.parse(got.body.toString('utf8')) as ImageManifest;
    if (!manifest.config || !Array.isArray(manifest.layers)) throw new Error(`${formatReference(ref)} is not an image manifest`);
    await mapLimit([manifest.config, ...manifest.layers], 3, async (blob) => {
      if (await layout.hasBlob(blob.digest)) return;
      const stream: Readable = await client.getBlob(ref.repository, blob.digest);
      await layout.writeBlobFrom(stream, blob.digest);
    });
    await layout.writeBlob(got.body);
    const descriptor: Descriptor = { mediaType: got.mediaType || manifest.mediaType || '', digest: got.digest, size: got.body.length };
    if (options.tag) await layout.tag(options.tag, descriptor);
    return descriptor;
  } finally {
    if (!options.client) client.close();
  }
}
