/**
 * Layers from files: a deterministic tar, gzip'd deterministically (node:zlib writes mtime 0 and
 * a fixed OS byte in the gzip header), stored in a layout. A layer whose uncompressed digest
 * (diff_id) an image in the layout already has is not compressed again: the runtime layer, the same
 * for every function, is gzip'd once per layout, not once per build (it is most of the build time).
 */
import { promisify } from 'node:util';
import { gzip as gzipCb } from 'node:zlib';
import { sha256 } from './digest.js';
import type { ImageLayout } from './layout.js';
import { isManifestType, MediaType } from './media-types.js';
import { type TarEntry, writeTar } from './tar.js';
import type { Descriptor, Digest, ImageConfig, ImageManifest } from './types.js';

const gzip = promisify(gzipCb);

export interface LayerSpec {
  entries: TarEntry[];
  /** Written to the image history (`created_by`), e.g. what the layer holds. */
  createdBy?: string;
  comment?: string;
}

export interface BuiltLayer {
  descriptor: Descriptor;
  diffId: Digest;
}

export interface LayerOptions {
  /** mtime of every entry, seconds since the epoch. */
  mtime: number;
  /** gzip level 1–9 (default 6, as most image builders use). */
  gzipLevel?: number;
}

/** Annotation on the layer descriptors this package writes: the gzip level that made the blob. */
export const LAYER_LEVEL = 'dev.func.layer.gzip-level';

const compressed = new Map<string, { digest: Digest; size: number }>();

export async function buildLayer(layout: ImageLayout, spec: LayerSpec, options: LayerOptions): Promise<BuiltLayer> {
  const tar = writeTar(spec.entries, { mtime: options.mtime });
  const diffId = sha256(tar);
  const level = options.gzipLevel ?? 6;
  const key = `${diffId}:${level}`;
  const cached = compressed.get(key) ?? (await findInLayout(layout, diffId, level));
  if (cached && (await layout.hasBlob(cached.digest))) {
    return { diffId, descriptor: { mediaType: MediaType.layerGzip, ...cached, annotations: { [LAYER_LEVEL]: String(level) } } };
  }
  const blob = await layout.writeBlob(await gzip(tar, { level }));
  compressed.set(key, blob);
  return { diffId, descriptor: { mediaType: MediaType.layerGzip, ...blob, annotations: { [LAYER_LEVEL]: String(level) } } };
}

/**
 * A gzip'd layer with this diff_id in an image the layout's index names. Only layers this package
 * wrote at the same gzip level are taken (their descriptor carries LAYER_LEVEL), so a reused blob
 * is byte-identical to what compressing again would give and the image digest does not depend on
 * what the layout held before.
 */
async function findInLayout(layout: ImageLayout, diffId: Digest, level: number): Promise<{ digest: Digest; size: number } | undefined> {
  for (const desc of (await layout.readIndex()).manifests) {
    if (!isManifestType(desc.mediaType)) continue;
    const manifest = await layout.readJson<ImageManifest>(desc.digest).catch(() => undefined);
    const config = manifest && (await layout.readJson<ImageConfig>(manifest.config.digest).catch(() => undefined));
    const at = config?.rootfs.diff_ids.indexOf(diffId) ?? -1;
    const layer = at >= 0 ? manifest?.layers[at] : undefined;
    if (layer?.mediaType === MediaType.layerGzip && layer.annotations?.[LAYER_LEVEL] === String(level)) return { digest: layer.digest, size: layer.size };
  }
  return undefined;
}

/** `SOURCE_DATE_EPOCH` (reproducible-builds.org) or 0: the time written into layers and the config. */
export function sourceDateEpoch(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SOURCE_DATE_EPOCH;
  if (raw === undefined || raw === '') return 0;
  if (!/^\d{1,12}$/.test(raw)) throw new Error(`SOURCE_DATE_EPOCH must be a whole number of seconds, got ${JSON.stringify(raw.slice(0, 40))}`);
  return Number(raw);
}
