/**
 * Resolving an image in a layout: a tag or digest → the image manifest for one platform and its
 * config (an index is followed to the platform's entry).
 */
import type { ImageLayout } from './layout.js';
import { isIndexType } from './media-types.js';
import { choosePlatform, hostPlatform } from './platform.js';
import type { Descriptor, ImageConfig, ImageIndex, ImageManifest, Platform } from './types.js';

export interface ResolvedImage {
  descriptor: Descriptor;
  manifest: ImageManifest;
  config: ImageConfig;
}

export async function resolveImage(layout: ImageLayout, ref: string | Descriptor, platform: Platform = hostPlatform()): Promise<ResolvedImage> {
  let descriptor = typeof ref === 'string' ? await layout.resolve(ref) : ref;
  for (let depth = 0; ; depth++) {
    const doc = await layout.readJson<ImageManifest & ImageIndex>(descriptor.digest);
    const mediaType = doc.mediaType ?? descriptor.mediaType;
    if (isIndexType(mediaType) || (doc.manifests && !doc.layers)) {
      if (depth > 2) throw new Error(`Image index ${descriptor.digest} nests too deep`);
      descriptor = choosePlatform(doc.manifests, platform);
      continue;
    }
    if (!doc.config || !Array.isArray(doc.layers)) throw new Error(`${descriptor.digest} is neither an image manifest nor an index`);
    const config = await layout.readJson<ImageConfig>(doc.config.digest);
    return { descriptor: { mediaType: mediaType ?? descriptor.mediaType, digest: descriptor.digest, size: descriptor.size }, manifest: doc, config };
  }
}
