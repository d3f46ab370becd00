/**
 * Removing blobs no tag reaches any more (after re-tagging, the old image's blobs). Temporary files
 * of writers still in flight are left alone: only finished blobs that nothing references go.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isDigest } from './digest.js';
import type { ImageLayout } from './layout.js';
import { isIndexType } from './media-types.js';
import type { Descriptor, Digest, ImageIndex, ImageManifest } from './types.js';

async function reachable(layout: ImageLayout): Promise<Set<Digest>> {
  const seen = new Set<Digest>();
  const visit = async (desc: Descriptor): Promise<void> => {
    if (seen.has(desc.digest)) return;
    seen.add(desc.digest);
    if (!(await layout.hasBlob(desc.digest))) return;
    const doc = await layout.readJson<ImageManifest & ImageIndex>(desc.digest);
    if (isIndexType(doc.mediaType ?? desc.mediaType) || Array.isArray(doc.manifests)) {
      for (const child of doc.manifests) await visit(child);
    } else if (doc.config) {
      seen.add(doc.config.digest);
      for (const layer of doc.layers ?? []) seen.add(layer.digest);
    }
  };
  for (const desc of (await layout.readIndex()).manifests) await visit(desc);
  return seen;
}

/** Deletes unreferenced blobs; returns the digests removed. */
export async function collectGarbage(layout: ImageLayout): Promise<Digest[]> {
  const keep = await reachable(layout);
  const dir = join(layout.dir, 'blobs', 'sha256');
  const removed: Digest[] = [];
  for (const name of await readdir(dir)) {
    const digest = `sha256:${name}`;
    if (!isDigest(digest) || keep.has(digest)) continue;
    await rm(join(dir, name), { force: true });
    removed.push(digest);
  }
  return removed;
}
